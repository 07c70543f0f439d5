"""The tool table's machinery: what a tool is, its arguments' JSON Schemas, and one call of it.

A tool is a name, a title, a description, its arguments (each a JSON Schema with a description), the
JSON Schema of its result, its behaviour hints (read-only, destructive, idempotent) and a function
that validates with the REST API's serializer and calls the REST twin's service. A result is sent
twice, as MCP 2025-06-18 asks: as `structuredContent` (conforming to the tool's `outputSchema`) and as
the same JSON in a text block, for clients that read only text. Failures of every kind (validation,
not found, conflicts, database errors) become the API's error shape through the API's own exception
handler, answered as a tool result with `isError: true` (text only: an error is not the tool's result).
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from django.db.models import Model, QuerySet, TextChoices
from rest_framework import serializers
from rest_framework.request import Request

from ralphsite.agents.mcp.protocol import INVALID_PARAMS, RpcError
from ralphsite.agents.mcp.schemas import Schema
from ralphsite.core.access import Scope, current_scope
from ralphsite.core.addressing import by_reference
from ralphsite.core.api.errors import api_exception_handler
from ralphsite.core.api.permissions import model_permissions_check, write_check
from ralphsite.core.errors import InvalidInput, NotFound, PermissionDenied
from ralphsite.core.fields import BIGINT_MAX, INTEGER_MAX
from ralphsite.core.models import TokenScope
from ralphsite.core.money import usd_max
from sessions_app.models import Question, Session, Task

M = TypeVar("M", bound=Model)

# Arguments that address a row (resolved by ToolCall or the tool) rather than carry data for a serializer.
ADDRESSING = frozenset({"session", "task", "question", "invocation", "item"})


@dataclass(frozen=True)
class Arg:
    """One argument: its JSON Schema (description included) and whether it must be given."""

    schema: dict[str, Any]
    required: bool = False


def text(description: str, *, required: bool = False, max_length: int | None = None) -> Arg:
    schema: dict[str, Any] = {"type": "string", "description": description}
    if max_length is not None:
        schema["maxLength"] = max_length
    return Arg(schema, required)


def integer(description: str, *, required: bool = False, minimum: int = 0, maximum: int = INTEGER_MAX) -> Arg:
    """An integer within the column's bounds (a 32-bit integer unless told; `count` for 64-bit counts)."""
    return Arg({"type": "integer", "minimum": minimum, "maximum": maximum, "description": description}, required)


def count(description: str, *, required: bool = False) -> Arg:
    """A 64-bit count that is never negative (tokens, durations, claims)."""
    return integer(description, required=required, maximum=BIGINT_MAX)


def cost(description: str) -> Arg:
    """A cost in USD, within what the money columns hold."""
    return number(description, maximum=float(usd_max()))


def number(description: str, *, required: bool = False, maximum: float | None = None) -> Arg:
    schema: dict[str, Any] = {"type": "number", "minimum": 0, "description": description}
    if maximum is not None:
        schema["maximum"] = maximum
    return Arg(schema, required)


def flag(description: str) -> Arg:
    return Arg({"type": "boolean", "description": description})


def choice(description: str, choices: type[TextChoices] | Iterable[str], *, required: bool = False) -> Arg:
    values = list(choices.values) if isinstance(choices, type) and issubclass(choices, TextChoices) else list(choices)
    return Arg({"type": "string", "enum": values, "description": description}, required)


def strings(description: str, *, required: bool = False) -> Arg:
    return Arg({"type": "array", "items": {"type": "string"}, "description": description}, required)


def objects(description: str, item: Schema, *, required: bool = False) -> Arg:
    return Arg({"type": "array", "items": item, "description": description}, required)


def json_object(description: str, *, required: bool = False) -> Arg:
    return Arg({"type": "object", "description": description}, required)


def any_json(description: str, *, required: bool = False) -> Arg:
    return Arg({"description": description}, required)


SESSION_ARGUMENT = text("The session to act on: its id or its key.", required=True)
AGENT = text("Who is acting (the agent's name), for the audit trail.")


def pick(data: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """`fields` of a representation, in that order, without the empty ones (a model reads less)."""
    return {name: data[name] for name in fields if name in data and data[name] not in (None, "", [], {})}


def api_time(value: datetime | None) -> str | None:
    """A time as the API writes it (ISO 8601, UTC as Z)."""
    return serializers.DateTimeField().to_representation(value) if value is not None else None


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    arguments: dict[str, Arg]
    run: Callable[["ToolCall"], Any]
    # The JSON Schema of the result (an object): the tool's `outputSchema`.
    output: Schema
    # The kind of row the tool writes (the API's write permission for it applies), or None: it only reads.
    writes: type[Model] | None
    # A write that replaces or removes what was stored (MCP's destructiveHint); else it only adds.
    destructive: bool = False
    # Repeating the same call changes nothing more (MCP's idempotentHint); every read is.
    idempotent: bool = False
    # The API action it is, for that permission (a session token may update its session, not create one).
    action: str = "create"
    # Acts on one session: named by the `session` argument, or by the token when it is session-bound.
    session_bound: bool = True
    # The kinds of row a reading tool shows: a staff member's token or login needs their view permission.
    reads: tuple[type[Model], ...] = ()
    _definitions: dict[bool, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)

    def takes(self, *, session_argument: bool) -> dict[str, Arg]:
        """The arguments, with `session` first when the caller names sessions; a session token's caller
        names none (not even as a filter: its tools see its session only)."""
        if not session_argument:
            return {name: arg for name, arg in self.arguments.items() if name != "session"}
        if self.session_bound:
            return {"session": SESSION_ARGUMENT, **self.arguments}
        return self.arguments

    def definition(self, *, session_argument: bool) -> dict[str, Any]:
        """The `tools/list` entry; two variants (with and without `session`), each built once."""
        cached = self._definitions.get(session_argument)
        if cached is None:
            arguments = self.takes(session_argument=session_argument)
            schema: dict[str, Any] = {
                "type": "object",
                "properties": {name: arg.schema for name, arg in arguments.items()},
                "additionalProperties": False,
            }
            required = [name for name, arg in arguments.items() if arg.required]
            if required:
                schema["required"] = required
            read_only = self.writes is None
            cached = {"name": self.name, "title": self.title, "description": self.description, "inputSchema": schema,
                      "outputSchema": self.output,
                      "annotations": {"readOnlyHint": read_only, "destructiveHint": self.destructive,
                                      "idempotentHint": read_only or self.idempotent, "openWorldHint": False}}
            self._definitions[session_argument] = cached  # a benign race: both threads build the same dict
        return cached


TOOLS: dict[str, Tool] = {}


Run = Callable[["ToolCall"], Any]


def tool(name: str, title: str, description: str, /, *, output: Schema, writes: type[Model] | None,
         destructive: bool = False, idempotent: bool = False, action: str = "create", session_bound: bool = True,
         reads: tuple[type[Model], ...] = (), **arguments: Arg) -> Callable[[Run], Run]:
    """Register the decorated function as the tool `name` (its arguments in the order given)."""

    def register(run: Run) -> Run:
        assert name not in TOOLS, f"tool {name} is registered twice"
        assert (writes is None) == bool(reads), f"tool {name} either writes a model or names the models it reads"
        assert output.get("type") == "object", f"tool {name}: a result is an object"
        assert writes is not None or not destructive, f"tool {name}: a reading tool destroys nothing"
        TOOLS[name] = Tool(name, title, description, arguments, run, output, writes, destructive, idempotent,
                           action, session_bound, reads)
        return run

    return register


def _by_reference(queryset: QuerySet[M], reference: Any, *, what: str) -> M:
    """A row of `queryset` named by its id or its key (a ULID-shaped value is tried as the id first)."""
    if not isinstance(reference, str) or not reference:
        raise InvalidInput(f"The {what} must be named by its id or key.", details={what: ["Expected a string."]})
    row = by_reference(queryset, reference, key_field="key")
    if row is None:
        raise NotFound(f"No {what} {reference!r} here.", details={what: reference})
    return row


class ToolCall:
    """One `tools/call`: the caller's request (token, user) and the arguments, with helpers that
    address rows the way the API does and validate bodies with the API's serializers."""

    def __init__(self, request: Request, tool: Tool, arguments: dict[str, Any], *, session_argument: bool) -> None:
        self.request = request
        self.tool = tool
        self.arguments = arguments
        self._session_argument = session_argument
        self._session: Session | None = None

    def session(self) -> Session:
        """The session acted on: the token's own (a session token), else the one the `session` argument
        names among those the token sees (one it does not see is not found, as in the API)."""
        if self._session is None:
            scope = current_scope()
            if self._session_argument:
                self._session = _by_reference(scope.filter(Session.objects.all()), self.arguments.get("session"),
                                              what="session")
            else:
                self._session = Session.objects.get(pk=scope.session_id)
        return self._session

    def task(self) -> Task:
        return _by_reference(Task.objects.filter(session=self.session()), self.arguments.get("task"), what="task")

    def question(self) -> Question:
        return _by_reference(Question.objects.filter(session=self.session()), self.arguments.get("question"),
                             what="question")

    def body(self, **fixed: Any) -> dict[str, Any]:
        """The arguments that carry data (not the addressing ones), with `fixed` values added."""
        return {**{name: value for name, value in self.arguments.items() if name not in ADDRESSING}, **fixed}

    def validated(self, serializer_class: type[serializers.Serializer], *, instance: Model | None = None,
                  **fixed: Any) -> dict[str, Any]:
        """The body validated by the REST twin's serializer (its errors are the API's); with `instance`, as
        its PATCH validates it (only the fields given)."""
        serializer = serializer_class(instance, data=self.body(**fixed), partial=instance is not None,
                                      context={"request": self.request})
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def check_arguments(self) -> None:
        """Unknown and missing arguments are a validation error naming them, as unknown body keys are."""
        allowed = self.tool.takes(session_argument=self._session_argument)
        if "run_id" in self.arguments and "session" in allowed:  # ralphy names the session its run
            if "session" in self.arguments:
                raise serializers.ValidationError({"run_id": ["run_id is session: send one of them."]})
            self.arguments = {("session" if name == "run_id" else name): value
                              for name, value in self.arguments.items()}
        errors = {name: [f"Unknown argument; allowed: {', '.join(allowed)}."] for name in self.arguments
                  if name not in allowed}
        errors |= {name: ["This field is required."] for name, arg in allowed.items()
                   if arg.required and name not in self.arguments}
        if errors:
            raise serializers.ValidationError(errors)


def tool_result(payload: dict[str, Any], *, error: bool = False) -> dict[str, Any]:
    """A `tools/call` result: the payload as compact JSON text for the model and, for a result (not an
    error), as `structuredContent` too; both are the same JSON (the text is made from it, then parsed
    back, so a time or a Decimal is the same string in both)."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": error}
    if not error:
        result["structuredContent"] = json.loads(text)
    return result


def tool_check(scope: Scope, tool: Tool) -> None:
    """Refuse (403) a tool the scope may not use: the API's write permission for a writing tool, the
    owner's view permissions for a reading one (`model_permissions_check`)."""
    if tool.writes is not None:
        write_check(scope, tool.writes, tool.action)
    else:
        model_permissions_check(scope, tool.reads, "view")


def run_tool(call: ToolCall) -> dict[str, Any]:
    """Run the tool; any failure is answered as the API would answer it, with `isError: true`."""
    try:
        tool_check(current_scope(), call.tool)
        call.check_arguments()
        return tool_result(call.tool.run(call))
    except Exception as exc:  # everything the API's handler shapes: domain, DRF, database, unexpected
        response = api_exception_handler(exc, {"request": call.request})
        body = {name: value for name, value in response.data.items() if value or name != "details"}
        return tool_result(body, error=True)


INSTRUCTIONS = (
    "Ralph Site keeps the state of a coding-agent loop: the plan, tasks and their dependencies, reports and "
    "reviews, questions, feedback, signals, key/value state, the ledger (events, issues, checkpoints, token "
    "usage) and searchable memory. Name tasks by key (task-1) and questions by key (Q-TECH-001). A tool that "
    "fails answers isError with the API's {code, message, details}: read it, correct the call and retry."
)


class Toolbox:
    """The tools as one caller sees them. A session token is seed 000's `SessionTools.CreateTools(db,
    sessionId)`: every tool acts on its session and takes no `session` argument; other tokens name the
    session in each call. Tools that write are listed only to tokens that may make that write."""

    def __init__(self, request: Request, *, names: frozenset[str] | None = None) -> None:
        self.request = request
        self.scope = current_scope()
        self.session_argument = self.scope.kind != TokenScope.SESSION
        # The tool set asked for (`/mcp/?tools=executor`): only these are listed and callable; None: all.
        self.names = names

    @property
    def instructions(self) -> str:
        if self.session_argument:
            return INSTRUCTIONS
        session = Session.objects.filter(pk=self.scope.session_id).values("key", "user_request").get()
        name = session["key"] or self.scope.session_id
        request = f" ({session['user_request'][:200]})" if session["user_request"] else ""
        return f"{INSTRUCTIONS} Every tool acts on session {name}{request}."

    def _usable(self, tool: Tool) -> bool:
        try:
            tool_check(self.scope, tool)
        except PermissionDenied:
            return False
        return True

    def _offered(self, name: str) -> bool:
        return self.names is None or name in self.names

    def definitions(self) -> list[dict[str, Any]]:
        return [tool.definition(session_argument=self.session_argument) for tool in TOOLS.values()
                if self._offered(tool.name) and self._usable(tool)]

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tool = TOOLS.get(name)
        if tool is None or not self._offered(name):
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}" + ("" if tool is None else
                                                                      " (not in the tool set this URL asked for)"))
        return run_tool(ToolCall(self.request, tool, arguments, session_argument=self.session_argument))
