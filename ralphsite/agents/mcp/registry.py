"""The tool table's machinery: what a tool is, its arguments' JSON Schemas, and one call of it.

A tool is a name, a description, its arguments (each a JSON Schema with a description) and a
function that validates with the REST API's serializer and calls the REST twin's service. Failures
of every kind (validation, not found, conflicts, database errors) become the API's error shape
through the API's own exception handler, answered as a tool result with `isError: true`.
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db.models import Model, QuerySet, TextChoices
from rest_framework import serializers
from rest_framework.request import Request

from ralphsite.agents.mcp.protocol import INVALID_PARAMS, RpcError
from ralphsite.core.access import Scope, current_scope
from ralphsite.core.addressing import by_reference
from ralphsite.core.api.errors import api_exception_handler
from ralphsite.core.api.permissions import model_permissions_check, write_check
from ralphsite.core.errors import InvalidInput, NotFound, PermissionDenied
from ralphsite.core.models import TokenScope
from sessions_app.models import Question, Session, Task

M = TypeVar("M", bound=Model)

# Arguments that address a row (resolved by ToolCall) rather than carry data for a serializer.
ADDRESSING = frozenset({"session", "task", "question"})


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


def integer(description: str, *, required: bool = False, minimum: int | None = 0,
            maximum: int | None = None) -> Arg:
    schema: dict[str, Any] = {"type": "integer", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return Arg(schema, required)


def number(description: str, *, required: bool = False) -> Arg:
    return Arg({"type": "number", "minimum": 0, "description": description}, required)


def flag(description: str) -> Arg:
    return Arg({"type": "boolean", "description": description})


def choice(description: str, choices: type[TextChoices] | Iterable[str], *, required: bool = False) -> Arg:
    values = list(choices.values) if isinstance(choices, type) and issubclass(choices, TextChoices) else list(choices)
    return Arg({"type": "string", "enum": values, "description": description}, required)


def strings(description: str, *, required: bool = False) -> Arg:
    return Arg({"type": "array", "items": {"type": "string"}, "description": description}, required)


def json_object(description: str, *, required: bool = False) -> Arg:
    return Arg({"type": "object", "description": description}, required)


def any_json(description: str, *, required: bool = False) -> Arg:
    return Arg({"description": description}, required)


SESSION_ARGUMENT = text("The session to act on: its id or its key.", required=True)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    arguments: dict[str, Arg]
    run: Callable[["ToolCall"], Any]
    # The kind of row the tool writes (the API's write permission for it applies), or None: it only reads.
    writes: type[Model] | None
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
            cached = {"name": self.name, "description": self.description, "inputSchema": schema,
                      "annotations": {"readOnlyHint": self.writes is None, "destructiveHint": False,
                                      "openWorldHint": False}}
            self._definitions[session_argument] = cached  # a benign race: both threads build the same dict
        return cached


TOOLS: dict[str, Tool] = {}


Run = Callable[["ToolCall"], Any]


def tool(name: str, description: str, /, *, writes: type[Model] | None, action: str = "create",
         session_bound: bool = True, reads: tuple[type[Model], ...] = (), **arguments: Arg) -> Callable[[Run], Run]:
    """Register the decorated function as the tool `name` (its arguments in the order given)."""

    def register(run: Run) -> Run:
        assert name not in TOOLS, f"tool {name} is registered twice"
        assert (writes is None) == bool(reads), f"tool {name} either writes a model or names the models it reads"
        TOOLS[name] = Tool(name, description, arguments, run, writes, action, session_bound, reads)
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

    def validated(self, serializer_class: type[serializers.Serializer], **fixed: Any) -> dict[str, Any]:
        """The body validated by the REST twin's serializer (its errors are the API's)."""
        serializer = serializer_class(data=self.body(**fixed), context={"request": self.request})
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def check_arguments(self) -> None:
        """Unknown and missing arguments are a validation error naming them, as unknown body keys are."""
        allowed = self.tool.takes(session_argument=self._session_argument)
        errors = {name: [f"Unknown argument; allowed: {', '.join(allowed)}."] for name in self.arguments
                  if name not in allowed}
        errors |= {name: ["This argument is required."] for name, arg in allowed.items()
                   if arg.required and name not in self.arguments}
        if errors:
            raise serializers.ValidationError(errors)


def tool_result(payload: Any, *, error: bool = False) -> dict[str, Any]:
    """A `tools/call` result: the payload as compact JSON text for the model."""
    return {"content": [{"type": "text", "text": json.dumps(payload, ensure_ascii=False, separators=(",", ":"),
                                                            default=str)}],
            "isError": error}


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

    def __init__(self, request: Request) -> None:
        self.request = request
        self.scope = current_scope()
        self.session_argument = self.scope.kind != TokenScope.SESSION

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

    def definitions(self) -> list[dict[str, Any]]:
        return [tool.definition(session_argument=self.session_argument) for tool in TOOLS.values()
                if self._usable(tool)]

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        tool = TOOLS.get(name)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        return run_tool(ToolCall(self.request, tool, arguments, session_argument=self.session_argument))
