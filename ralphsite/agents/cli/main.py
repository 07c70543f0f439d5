"""`ralph`: drive a Ralph Site session from a shell loop (the console script of this package).

Configuration: RALPH_URL (default http://127.0.0.1:8000), RALPH_TOKEN, RALPH_SESSION (id or key; else the
project's current session, `project`); `--url`, `--token` and `--session` override them. Exit codes: 0
done, 1 usage error, 2 the API refused (its code and message on stderr), 3 nothing there (no task to
claim, no signal to poll, no such state key), 4 server unreachable. `--json` prints what the API answered,
as JSON; with it the stderr message of a failure is one JSON object too.

Only the standard library; http.client is imported only when a command calls the API, so `ralph --help`
costs little more than Python's own start.
"""

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn

from ralphsite.agents.cli import devteam
from ralphsite.agents.cli.client import Api, Refused, Unreachable, path_of
from ralphsite.agents.cli.outcomes import Nothing, UsageError
from ralphsite.agents.cli.project import current_session, current_session_clear, current_session_set
from ralphsite.agents.cli.shell import SHELLS, shell_script

EXIT_OK, EXIT_USAGE, EXIT_REFUSED, EXIT_NOTHING, EXIT_UNREACHABLE = 0, 1, 2, 3, 4
DEFAULT_URL = "http://127.0.0.1:8000"
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}")
STDIN = "-"  # a text argument's value that reads standard input instead (`Command.text`)
FROM_STDIN = "; - reads standard input"


class RalphArgumentParser(argparse.ArgumentParser):
    """argparse, with exit code 1 for a usage error (argparse's own is 2, our "API refused")."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


class Command:
    """One invocation: the parsed arguments, the API (connected on first use) and the output."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.json = bool(getattr(args, "json", False))
        self._api: Api | None = None
        self._session_id: str | None = None

    @property
    def api(self) -> Api:
        if self._api is None:
            url = getattr(self.args, "url", None) or os.environ.get("RALPH_URL") or DEFAULT_URL
            token = getattr(self.args, "token", None) or os.environ.get("RALPH_TOKEN", "")
            try:
                self._api = Api(url=url, token=token, timeout=float(getattr(self.args, "timeout", 30)))
            except ValueError as error:
                raise UsageError(str(error)) from error
        return self._api

    def session(self) -> str:
        """The session's id, from --session, RALPH_SESSION or the project's current session (`project`): an
        id, or a key looked up once."""
        if self._session_id is None:
            reference = (getattr(self.args, "session", None) or os.environ.get("RALPH_SESSION", "")
                         or current_session())
            if not reference:
                raise UsageError("no session: pass --session, set RALPH_SESSION (an id or a key) or start one in "
                                 "this project (ralph session start)")
            self._session_id = self._session_id_of(reference)
        return self._session_id

    def task_path(self, reference: str, *action: str) -> str:
        """A task's path within the current session, the task named by its key or id (one call, no lookup)."""
        return path_of("sessions", self.session(), "tasks", reference, *action)

    def _session_id_of(self, reference: str) -> str:
        if _ULID.fullmatch(reference):
            return reference.upper()
        # The server names it by the rule every door uses (its key, a seed tool's id; 409 `ambiguous_key` for a key
        # several sessions the token sees hold): never the first of a list.
        try:
            return self.api.call("GET", path_of("sessions", reference)).data["id"]
        except Refused as refused:
            if refused.status != 404:
                raise
            raise Refused(404, "not_found", f"No session with key {reference!r}.", {"key": reference}) from None

    def close(self) -> None:
        if self._api is not None:
            self._api.close()

    def emit(self, data: Any, text: str | None = None) -> None:
        """Print the API's answer as JSON with --json, else `text` (nothing when None)."""
        if self.json:
            print(json.dumps(data, ensure_ascii=False))
        elif text is not None:
            print(text)

    @staticmethod
    def text(value: str | None) -> str | None:
        """A text argument as given, or for `-` standard input's whole text: a shell loop pipes a log in, and a
        long text does not fit one command-line argument (the kernel bounds each). A command has one such argument."""
        return sys.stdin.read() if value == STDIN else value

    def optional_fields(self, **extra: Any) -> dict[str, Any]:
        """Optional body fields given on the command line (an omitted one is not sent: the server
        fills in or refuses it, e.g. the agent from an agent-bound token)."""
        fields = {"agent": getattr(self.args, "agent", None), "claim": getattr(self.args, "claim", None), **extra}
        return {name: value for name, value in fields.items() if value is not None}


# -- commands -----------------------------------------------------------------------------------

def session_start(cmd: Command) -> None:
    """A new session, which becomes the project's current one (`project`)."""
    body = {"command": cmd.args.command, "command_type": cmd.args.command_type}
    for option, field in (("key", "key"), ("project_path", "project_path"), ("execution_mode", "execution_mode"),
                          ("phase", "current_phase")):
        if getattr(cmd.args, option):
            body[field] = getattr(cmd.args, option)
    session = cmd.api.call("POST", path_of("sessions"), body).data
    try:
        current_session_set(session["id"])
    except OSError as error:  # a read-only project: the session exists, only other processes will not find it
        print(f"ralph: warning: the project's current session was not written ({error}); pass --session or "
              "RALPH_SESSION to the project's other processes", file=sys.stderr)
    cmd.emit(session, session["id"])


def session_end(cmd: Command) -> None:
    body = {"status": cmd.args.status, "exit_reason": cmd.args.reason}
    if cmd.args.summary is not None:
        body["summary"] = cmd.text(cmd.args.summary)
    cmd.emit(cmd.api.call("POST", path_of("sessions", cmd.session(), "finish"), body).data)
    current_session_clear(cmd.session())


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _json_or_text(value: str) -> Any:
    """DevTeam stored state as JSON: a VALUE that parses as JSON is that value, anything else a string
    (NaN and Infinity too: Python's parser accepts them, JSON does not)."""
    try:
        return json.loads(value, parse_constant=_not_json)
    except ValueError:
        return value


def state_set(cmd: Command) -> None:
    body = {"session": cmd.session(), "key": cmd.args.key, "value": _json_or_text(cmd.args.value)}
    cmd.emit(cmd.api.call("POST", path_of("session-state", "set"), body).data)


def state_get(cmd: Command) -> None:
    page = cmd.api.call("GET", path_of("session-state"), query={"session": cmd.session(), "key": cmd.args.key}).data
    if not page["results"]:
        raise Nothing("not_set", f"state key {cmd.args.key!r} is not set")
    value = page["results"][0]["value"]
    cmd.emit(value, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _decimal(text: str, name: str) -> Decimal:
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise UsageError(f"{name} must be a number, not {text!r}") from None
    if not number.is_finite():
        raise UsageError(f"{name} must be a finite number, not {text!r}")
    return number


def tokens_add(cmd: Command) -> None:
    cost_usd = _decimal(cmd.args.cost_cents, "COST_CENTS") / 100
    body = {"session": cmd.session(), "input_tokens": cmd.args.input, "output_tokens": cmd.args.output,
            "cost_usd": str(cost_usd), "model": cmd.args.model or os.environ.get("RALPH_MODEL") or "unknown"}
    body.update(cmd.optional_fields(task_key=cmd.args.task, request_id=cmd.args.request_id))
    cmd.emit(cmd.api.call("POST", path_of("token-usage"), body).data)


def task_claim(cmd: Command) -> None:
    body = cmd.optional_fields(lease_seconds=cmd.args.lease)
    try:
        task = cmd.api.call("POST", path_of("sessions", cmd.session(), "claim-task"), body).data
    except Refused as refusal:
        # Not a failure of the caller: the API says why there is nothing (all_done, waiting, blocked, …).
        if refusal.code == "nothing_to_claim" and isinstance(refusal.details, dict):
            raise Nothing(str(refusal.details.get("reason", refusal.code)), refusal.message) from refusal
        raise
    print(json.dumps(task, ensure_ascii=False))


def task_show(cmd: Command) -> None:
    print(json.dumps(cmd.api.call("GET", cmd.task_path(cmd.args.task)).data, ensure_ascii=False))


def _task_action(cmd: Command, action: str, body: dict[str, Any]) -> dict[str, Any]:
    try:
        return cmd.api.call("POST", cmd.task_path(cmd.args.task, action), body).data
    except Refused as refusal:
        # A claimed task's write without its claim value: say how this command sends it (the API's message
        # names the body field). Refusing to put a task in progress is the same code, without a holder.
        if refusal.code == "claim_required" and isinstance(refusal.details, dict) and "claimed_by" in refusal.details:
            raise Refused(refusal.status, refusal.code, f"{refusal.message} Pass it as --claim N (N: the `claim` "
                          "that `ralph task claim` printed).", refusal.details) from refusal
        raise


def task_status(cmd: Command) -> None:
    task = _task_action(cmd, "status", cmd.optional_fields(status=cmd.args.status, annotation=cmd.args.note))
    cmd.emit(task, f"{task['key']} {task['status']}")


def task_report(cmd: Command) -> None:
    if cmd.args.file == STDIN:
        report = cmd.text(STDIN)
    else:
        try:
            with open(cmd.args.file, encoding="utf-8") as source:
                report = source.read()
        except OSError as error:
            raise UsageError(f"cannot read {cmd.args.file}: {error.strerror}") from error
    attempt = _task_action(cmd, "report", cmd.optional_fields(implementation_report=report, model=cmd.args.model))
    cmd.emit(attempt, f"{cmd.args.task} attempt {attempt['attempt_number']}")


def task_heartbeat(cmd: Command) -> None:
    task = _task_action(cmd, "heartbeat", cmd.optional_fields(lease_seconds=cmd.args.lease))
    cmd.emit(task, f"{task['key']} leased until {task['lease_expires_at']}")


def task_release(cmd: Command) -> None:
    task = _task_action(cmd, "release", cmd.optional_fields(reason=cmd.args.reason))
    cmd.emit(task, f"{task['key']} {task['status']}")


def signal_send(cmd: Command) -> None:
    body = {"session": cmd.session(), "type": cmd.args.type, "message": cmd.text(cmd.args.message)}
    signal = cmd.api.call("POST", path_of("signals"), body).data
    cmd.emit(signal, signal["id"])


def signal_poll(cmd: Command) -> None:
    reply = cmd.api.call("POST", path_of("sessions", cmd.session(), "poll-signal"), cmd.optional_fields())
    if reply.status == 204 or not reply.data:
        raise Nothing("no_signal", "no unprocessed signal")
    cmd.emit(reply.data, f"{reply.data['type']}: {reply.data['message']}")


def question_ask(cmd: Command) -> None:
    body = {"session": cmd.session(), "key": cmd.args.key, "text": cmd.text(cmd.args.text),
            "category": cmd.args.category}
    question = cmd.api.call("POST", path_of("questions"), body).data
    cmd.emit(question, question["key"])


def question_list(cmd: Command) -> None:
    """The session's questions, a line each (key, status, text); exit 3 when there is none."""
    query = {"session": cmd.session(), "ordering": "key", "page_size": 100,
             **({"status": cmd.args.status} if cmd.args.status else {})}
    questions = cmd.api.call("GET", path_of("questions"), query=query).data["results"]
    if not questions:
        raise Nothing("no_questions", "no question" + (f" is {cmd.args.status}" if cmd.args.status else ""))
    cmd.emit(questions, "\n".join(f"{question['key']} {question['status']}: {' '.join(question['text'].split())}"
                                  for question in questions))


def question_answer(cmd: Command) -> None:
    """Answer a question named by its key (or id) within the session; who answers is the token's."""
    body = {"answer": cmd.text(cmd.args.answer), "replace": cmd.args.replace,
            **({"answer_source": cmd.args.source} if cmd.args.source else {})}
    question = cmd.api.call("POST", path_of("sessions", cmd.session(), "questions", cmd.args.question, "answer"),
                            body).data
    cmd.emit(question, f"{question['key']} {question['status']}")


def _json_option(text: str | None, name: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as error:
        raise UsageError(f"{name} must be JSON: {error}") from error


def event_append(cmd: Command) -> None:
    """An event of the ledger; a missing TYPE is the server's to refuse (as every door answers it)."""
    a = cmd.args
    body = {"session": cmd.session()}
    optional = {"type": a.type, "tokens_in": a.tokens_in, "tokens_out": a.tokens_out, "message": cmd.text(a.message),
                "task_key": a.task, "model": a.model, "phase": a.phase, "idempotency_key": a.idempotency_key,
                "request_id": a.request_id,
                "cost_usd": str(_decimal(a.cost_usd, "--cost-usd")) if a.cost_usd is not None else None,
                "meta": _json_option(a.meta, "--meta"), "data": _json_option(a.data, "--data")}
    body.update({name: value for name, value in optional.items() if value is not None})
    body.update(cmd.optional_fields())
    event = cmd.api.call("POST", path_of("events"), body).data
    cmd.emit(event, str(event["id"]))


def issue_record(cmd: Command) -> None:
    task = cmd.args.task or os.environ.get("RALPH_TASK")
    if not task:
        raise UsageError("an issue belongs to a task (seed 001): pass --task or set RALPH_TASK")
    body = {"session": cmd.session(), "task_key": task, "kind": cmd.args.kind, "signature": cmd.args.signature,
            "message": cmd.text(cmd.args.message), "file": cmd.args.file or ""}
    if cmd.args.line is not None:
        body["line"] = cmd.args.line
    issue = cmd.api.call("POST", path_of("issues", "record"), body).data
    cmd.emit(issue, f"{issue['signature']} seen {issue['count']} time(s)")


def checkpoint_create(cmd: Command) -> None:
    body = {"session": cmd.session(), "key": cmd.args.key, "git_ref": cmd.args.git_ref}
    optional = {"summary": cmd.text(cmd.args.summary), "task_key": cmd.args.task or os.environ.get("RALPH_TASK"),
                "git_commit": cmd.args.commit}
    body.update({name: value for name, value in optional.items() if value})
    checkpoint = cmd.api.call("POST", path_of("checkpoints"), body).data
    cmd.emit(checkpoint, checkpoint["key"])


def search(cmd: Command) -> None:
    query: dict[str, Any] = {"q": cmd.args.query, "page_size": cmd.args.limit}
    if cmd.args.kind:
        query["kind"] = cmd.args.kind
    page = cmd.api.call("GET", path_of("search"), query=query).data
    lines = [f"{hit['kind']} {hit['id']} {hit['subtype']}: {' '.join(hit['snippet'].split())}"
             for hit in page["results"]]
    cmd.emit(page, "\n".join(lines) if lines else None)
    if not page["results"]:
        raise Nothing("no_match", f"nothing matches {cmd.args.query!r}")


def progress(cmd: Command) -> None:
    report = cmd.api.call("GET", path_of("sessions", cmd.session(), "progress")).data
    counts = ", ".join(f"{count} {status}" for status, count in report["by_status"].items() if count)
    lines = [f"{report['total']} tasks" + (f": {counts}" if counts else "")]
    width = max((len(task["key"]) for task in report["tasks"]), default=0)
    lines += [f"{task['key']:<{width}}  {task['status']:<14}  {task['title']}" for task in report["tasks"]]
    cmd.emit(report, "\n".join(lines))


def shell_init(cmd: Command) -> None:
    # The functions call this very `ralph` (by its absolute path): a venv need not be on PATH.
    print(shell_script(cmd.args.shell, ralph=os.path.abspath(sys.argv[0])), end="")


def _server(cmd: Command) -> tuple[str, str]:
    """The server and token: options, the environment, else the project's local Claude Code settings (hooks and
    helpers Claude Code starts may not see its settings' env)."""
    from ralphsite.agents.cli.claude_init import local_settings_env, project_here

    local = {} if os.environ.get("RALPH_TOKEN") else local_settings_env(project_here())
    url = getattr(cmd.args, "url", None) or os.environ.get("RALPH_URL") or local.get("RALPH_URL") or DEFAULT_URL
    return url, getattr(cmd.args, "token", None) or os.environ.get("RALPH_TOKEN") or local.get("RALPH_TOKEN", "")


def _project_api(cmd: Command) -> Api:
    """The API as `_server` finds it (closed with the command)."""
    if cmd._api is None:
        url, token = _server(cmd)
        try:
            cmd._api = Api(url=url, token=token, timeout=float(getattr(cmd.args, "timeout", 30)))
        except ValueError as error:
            raise UsageError(str(error)) from error
    return cmd._api


def loop_continue(cmd: Command) -> None:
    """The operator's Continue: a resume signal, which lifts the session's Pause (the console's Continue)."""
    signal = cmd.api.call("POST", path_of("signals"), {"session": cmd.session(), "type": "resume",
                                                       "message": "continued from the command line"}).data
    cmd.emit({"continued": signal["id"]}, "continued")


def mcp_headers(cmd: Command) -> None:
    from ralphsite.agents.cli.claude_init import mcp_headers as headers
    from ralphsite.agents.cli.claude_init import project_here

    print(json.dumps(headers(project_here())))


def hook(cmd: Command) -> None:
    """Never fails: whatever happens it exits 0 (see ralphsite.agents.cli.hooks)."""
    from ralphsite.agents.cli.hooks import hook_main

    url, token = _server(cmd)
    hook_main(event=cmd.args.event, url=url, token=token, budget=cmd.args.budget)


def claude_init(cmd: Command) -> None:
    from ralphsite.agents.cli.claude_init import claude_init as project_init
    from ralphsite.agents.cli.claude_init import project_here, ralph_path

    try:
        done = project_init(project=project_here(), url=_server(cmd)[0], api=_project_api(cmd), ralph=ralph_path())
    except ValueError as error:
        raise UsageError(str(error)) from error
    cmd.emit(done, f"Claude Code set up in {done['project']}: hooks and MCP server ralph-site in .claude/ and "
                   ".mcp.json" + (", a project token minted" if done["token_minted"] else ", token kept")
                   + "; /ralph-loop starts a loop.")


def loop_start(cmd: Command) -> None:
    from ralphsite.agents.cli.claude_init import loop_start as start
    from ralphsite.agents.cli.claude_init import project_here

    a = cmd.args
    started = start(project=project_here(), api=_project_api(cmd), prompt=a.prompt, max_iterations=a.max_iterations,
                    completion_promise=a.completion_promise, claude_session_id=a.claude_session,
                    pause_timeout=a.pause_timeout)
    limit = f"at most {a.max_iterations} iterations" if a.max_iterations else "no iteration limit"
    promise = (f"complete it by saying <promise>{a.completion_promise}</promise> once that is entirely true"
               if a.completion_promise else "no completion promise")
    cmd.emit(started, f"Ralph loop {started['id']} started ({limit}; {promise}).\n\nTask:\n{a.prompt}")


# -- the command line ---------------------------------------------------------------------------

def _common_options(*, defaults: bool) -> argparse.ArgumentParser:
    """Options accepted before or after the command (`ralph --json task claim` = `ralph task claim --json`).
    The copy on each command leaves unset options unset, so it never hides a value given earlier."""
    keep = (lambda value: value) if defaults else (lambda _value: argparse.SUPPRESS)
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("connection and output")
    group.add_argument("--url", default=keep(None), help=f"server URL (RALPH_URL; default {DEFAULT_URL})")
    group.add_argument("--token", default=keep(None), help="API token (RALPH_TOKEN)")
    group.add_argument("--session", default=keep(None), help="session id or key (RALPH_SESSION)")
    group.add_argument("--timeout", type=float, default=keep(30.0), help="seconds to wait for the server")
    group.add_argument("--json", action="store_true", default=keep(False), help="print the API's answer as JSON")
    return common


def _agent(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", help="the agent acting (omit with an agent-bound token)")


def _fencing(parser: argparse.ArgumentParser) -> None:
    """A claimed task's verbs: the agent, and the claim value its claim returned."""
    _agent(parser)
    parser.add_argument("--claim", type=int, help="the claim value claim-task returned (fencing)")


def _request_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--request-id", help="the provider's request id: a call reported twice counts once")


def build_parser() -> argparse.ArgumentParser:
    common = _common_options(defaults=False)
    parser = RalphArgumentParser(
        prog="ralph", parents=[_common_options(defaults=True)],
        description="Drive a Ralph Site session from a shell loop.",
        epilog="Exit codes: 0 done, 1 usage, 2 the API refused (code and message on stderr), "
               "3 nothing to claim/poll/read, 4 server unreachable. "
               "In a script: eval \"$(ralph shell-init bash)\" defines DevTeam's state.sh functions "
               "(start_session, get_state, set_state, increment_iteration, add_tokens, end_session, …).")
    groups = parser.add_subparsers(dest="group", metavar="COMMAND", required=True, parser_class=RalphArgumentParser)

    def command(subparsers: Any, name: str, handler: Callable[[Command], None], help_text: str,
                **kwargs: Any) -> argparse.ArgumentParser:
        sub = subparsers.add_parser(name, parents=[common], help=help_text, description=help_text, **kwargs)
        sub.set_defaults(handler=handler)
        return sub

    def group(name: str, help_text: str) -> Any:
        return groups.add_parser(name, help=help_text, description=help_text).add_subparsers(
            dest="verb", metavar="VERB", required=True, parser_class=RalphArgumentParser)

    session = group("session", "start or end a session")
    start = command(session, "start", session_start, "start a session; prints its id")
    start.add_argument("command", help='the command the session runs, e.g. "/devteam:implement"')
    start.add_argument("command_type", help="plan, implement, bug or issue")
    start.add_argument("--key", help="a human key for the session (unique)")
    start.add_argument("--project-path", help="the project the session works on")
    start.add_argument("--execution-mode", help="normal or eco")
    start.add_argument("--phase", help="the session's current phase")
    end = command(session, "end", session_end, "finish the session with a status")
    end.add_argument("status", help="completed, failed, stopped or aborted")
    end.add_argument("reason", nargs="?", default="", help="why it ended (exit_reason)")
    end.add_argument("--summary", help="a summary of the session" + FROM_STDIN)

    state = group("state", "read and write the session's key/value state")
    setter = command(state, "set", state_set, "set a key (VALUE is JSON when it parses, else a string)")
    setter.add_argument("key")
    setter.add_argument("value")
    getter = command(state, "get", state_get, "print a key's value (a string raw, else JSON); exit 3 if unset")
    getter.add_argument("key")

    tokens = group("tokens", "record token usage")
    add = command(tokens, "add", tokens_add, "add a call's tokens and cost to the session")
    add.add_argument("input", type=int, help="input tokens")
    add.add_argument("output", type=int, help="output tokens")
    add.add_argument("cost_cents", help="cost in US cents")
    add.add_argument("--model", help="the model (RALPH_MODEL; default unknown)")
    add.add_argument("--task", help="the task key")
    _request_id(add)
    _agent(add)

    task = group("task", "claim and work on tasks")
    claim = command(task, "claim", task_claim, "claim the next ready task; prints it as JSON, exit 3 if none")
    _agent(claim)
    claim.add_argument("--lease", type=int, help="lease in seconds (default 600)")
    show = command(task, "show", task_show, "print a task as JSON")
    show.add_argument("task", help="task key or id")
    status = command(task, "status", task_status, "set a task's status")
    status.add_argument("task", help="task key or id")
    status.add_argument("status", help="not_started, in_progress, review_pending, completed, failed, …")
    status.add_argument("--note", default="", help="why (the status annotation)")
    _fencing(status)
    report = command(task, "report", task_report, "submit an implementation report (from FILE, or - for stdin)")
    report.add_argument("task", help="task key or id")
    report.add_argument("file", help="the report file, or - to read standard input")
    report.add_argument("--model", help="the model that did the work")
    _fencing(report)
    heartbeat = command(task, "heartbeat", task_heartbeat, "extend the lease of a claimed task")
    heartbeat.add_argument("task", help="task key or id")
    heartbeat.add_argument("--lease", type=int, help="lease in seconds (default 600)")
    _fencing(heartbeat)
    release = command(task, "release", task_release, "give a claimed task back")
    release.add_argument("task", help="task key or id")
    release.add_argument("--reason", help="why")
    _fencing(release)

    signal = group("signal", "steering signals")
    send = command(signal, "send", signal_send, "send a signal to the orchestrator")
    send.add_argument("type", help="steer, pause, resume, stop or info (a pause holds until a resume)")
    send.add_argument("message", help="its text" + FROM_STDIN)
    poll = command(signal, "poll", signal_poll, "take the oldest unprocessed signal; exit 3 if none")
    _agent(poll)

    question = group("question", "ask, list and answer the session's questions")
    ask = command(question, "ask", question_ask, "ask a question; prints its key")
    ask.add_argument("key", help="its key in the session, e.g. Q-TECH-001")
    ask.add_argument("text", help="the question" + FROM_STDIN)
    ask.add_argument("--category", default="technical",
                     help="technical (the default), requirements, constraints, assumptions, risks or feedback_driven")
    listing = command(question, "list", question_list, "the session's questions; exit 3 if none")
    listing.add_argument("--status", help="only these: unanswered, answered or research_needed")
    answer = command(question, "answer", question_answer, "answer a question (who answers is the token's agent)")
    answer.add_argument("question", help="its key (Q-TECH-001) or id")
    answer.add_argument("answer", help="the answer" + FROM_STDIN)
    answer.add_argument("--source", help="where the answer comes from")
    answer.add_argument("--replace", action="store_true", help="replace an earlier answer")

    event = command(groups, "event", event_append, "append an event to the ledger; prints its id")
    event.add_argument("type", nargs="?", help="an event type (task_started, …) or x-<custom>")
    event.add_argument("--tokens-in", type=int)
    event.add_argument("--tokens-out", type=int)
    event.add_argument("--cost-usd", help="cost in USD")
    event.add_argument("--meta", help="a JSON object")
    event.add_argument("--data", help="a JSON object")
    event.add_argument("--message", help="its text" + FROM_STDIN)
    event.add_argument("--task", help="the task key")
    _agent(event)
    event.add_argument("--model")
    event.add_argument("--phase")
    event.add_argument("--idempotency-key", help="a retry with the same key records the event once")
    _request_id(event)

    issue = group("issue", "issues deduplicated by signature")
    record = command(issue, "record", issue_record, "record an occurrence (a known signature counts up)")
    record.add_argument("kind")
    record.add_argument("signature")
    record.add_argument("message", help="what was found" + FROM_STDIN)
    record.add_argument("--file")
    record.add_argument("--line", type=int)
    record.add_argument("--task", help="the task key (RALPH_TASK)")

    checkpoint = group("checkpoint", "checkpoints")
    create = command(checkpoint, "create", checkpoint_create, "record a checkpoint; prints its key")
    create.add_argument("key")
    create.add_argument("git_ref")
    create.add_argument("--summary", help="what it holds" + FROM_STDIN)
    create.add_argument("--commit", help="the commit sha")
    create.add_argument("--task", help="the task key (RALPH_TASK)")

    found = command(groups, "search", search, "full-text search of messages, observations, events and task reports; "
                    "exit 3 if none")
    found.add_argument("query")
    # No choices here: the server knows the kinds it searches and refuses any other in its own words.
    found.add_argument("--kind", help="only this kind: message, observation, event or report")
    found.add_argument("--limit", type=int, default=20, help="at most this many hits (max 100)")

    command(groups, "progress", progress, "the session's tasks by status")

    devteam.add(groups, session=session, state=state, command=command, group=group)

    init = command(groups, "shell-init", shell_init, "print shell functions for eval (DevTeam's state.sh)")
    init.add_argument("shell", choices=sorted(SHELLS))

    hook_command = command(groups, "hook", hook, "record a Claude Code hook (its JSON on stdin); always exits 0")
    hook_command.add_argument("event", help="the hook event: SessionStart, UserPromptSubmit, PostToolUse, Stop, …")
    hook_command.add_argument("--budget", type=float, default=25.0,
                              help="seconds to answer in (under the hook's timeout; a paused loop waits this long)")

    claude = group("claude", "Claude Code")
    command(claude, "init", claude_init, "set this project up for Claude Code: hooks, MCP server, a project token")
    command(claude, "mcp-headers", mcp_headers, "print the MCP server's headers (Claude Code's headersHelper)")

    loop = group("loop", "the Ralph loop in Claude Code")
    start_loop = command(loop, "start", loop_start, "start a Ralph loop in this project's Claude Code session")
    start_loop.add_argument("prompt", help="fed back to Claude Code at the end of each turn")
    start_loop.add_argument("--max-iterations", type=int, help="turns at most (default: no limit)")
    start_loop.add_argument("--completion-promise", help="<promise>TEXT</promise> in the last message completes it")
    start_loop.add_argument("--claude-session", help="the Claude Code session (default: the project's next one)")
    start_loop.add_argument("--pause-timeout", type=int, help="seconds an operator's Pause holds the loop at most")
    command(loop, "continue", loop_continue, "Continue a paused loop: a resume signal, which lifts its pause")
    return parser


def _fail(cmd: Command | None, status: int, code: str, message: str, details: Any = None) -> int:
    if cmd is not None and cmd.json:
        body = {"code": code, "message": message, **({"details": details} if details else {})}
        print(json.dumps(body, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"ralph: {code}: {message}", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cmd = Command(args)
    try:
        args.handler(cmd)
    except UsageError as error:
        return _fail(cmd, EXIT_USAGE, "usage", str(error))
    except Nothing as nothing:
        return _fail(cmd, EXIT_NOTHING, nothing.reason, nothing.message)
    except Refused as refusal:
        return _fail(cmd, EXIT_REFUSED, refusal.code, refusal.message, refusal.details)
    except Unreachable as error:
        return _fail(cmd, EXIT_UNREACHABLE, "unreachable", str(error))
    finally:
        cmd.close()
    return EXIT_OK


def run() -> NoReturn:
    sys.exit(main())
