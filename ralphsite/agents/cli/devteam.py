"""The `ralph` commands behind DevTeam's `scripts/state.sh` functions (seed 003) that go beyond the
key/value state: the session's own columns, its counters, escalations and DevTeam's views.

DevTeam's `get_state FIELD` / `set_state FIELD VALUE` read and write a column of its `sessions` row,
one of a fixed list (its `VALID_SESSION_FIELDS`, plus `current_task_id`); `ralph session get|set`
take the same names and read or PATCH `sessions/{id}/`, so the server's rules apply (a final status
finishes the session, the totals are read-only). Every call is one of the REST API's existing routes.
"""

import argparse
import json
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ralphsite.agents.cli.client import path_of
from ralphsite.agents.cli.outcomes import Nothing, UsageError

if TYPE_CHECKING:
    from ralphsite.agents.cli.main import Command

# DevTeam's session columns, each with the API's field where the name differs; total_cost_cents and
# total_cost_dollars (get_total_cost_dollars) are read from total_cost_usd.
SESSION_FIELDS: dict[str, str] = {
    "status": "status", "current_phase": "current_phase", "current_agent": "current_agent",
    "current_model": "current_model", "current_iteration": "current_iteration",
    "consecutive_failures": "consecutive_failures", "execution_mode": "execution_mode",
    "bug_council_activated": "bug_council_activated", "bug_council_reason": "bug_council_reason",
    "circuit_breaker_state": "circuit_breaker_state", "max_consecutive_failures": "max_consecutive_failures",
    "max_iterations": "max_iterations", "plan_id": "plan_key", "sprint_id": "sprint_key",
    "current_task_id": "current_task_key", "exit_reason": "exit_reason", "ended_at": "ended_at",
    "total_tokens_input": "total_tokens_input", "total_tokens_output": "total_tokens_output",
    "total_cost_cents": "total_cost_usd", "total_cost_dollars": "total_cost_usd",
}
COUNTERS = ("current_iteration", "consecutive_failures")
_INTEGER_FIELDS = frozenset({"current_iteration", "consecutive_failures", "max_consecutive_failures",
                             "max_iterations", "total_tokens_input", "total_tokens_output"})


def field_of(name: str) -> str:
    if name not in SESSION_FIELDS:
        raise UsageError(f"{name!r} is not a session field; one of: {', '.join(SESSION_FIELDS)}")
    return SESSION_FIELDS[name]


def devteam_value(name: str, session: dict[str, Any]) -> str:
    """A column as sqlite3 printed it: booleans 1/0, null as nothing, the cost in cents or dollars."""
    value = session[SESSION_FIELDS[name]]
    if name == "total_cost_cents":
        return str(int((Decimal(value) * 100).to_integral_value()))
    if name == "total_cost_dollars":
        return str(Decimal(value).quantize(Decimal("0.0001")))
    if isinstance(value, bool):
        return "1" if value else "0"
    return "" if value is None else str(value)


def api_value(name: str, text: str) -> Any:
    """A value given on the command line as the field's JSON type (sqlite3 took any text)."""
    if name in _INTEGER_FIELDS:
        if not text.isdigit():
            raise UsageError(f"{name} is a count, not {text!r}")
        return int(text)
    if name == "bug_council_activated":
        if text.lower() not in ("1", "0", "true", "false"):
            raise UsageError(f"bug_council_activated is 1 or 0 (true or false), not {text!r}")
        return text.lower() in ("1", "true")
    return text


def session_row(cmd: "Command") -> dict[str, Any]:
    return cmd.api.call("GET", path_of("sessions", cmd.session())).data


def session_patch(cmd: "Command", changes: dict[str, Any]) -> dict[str, Any]:
    return cmd.api.call("PATCH", path_of("sessions", cmd.session()), changes).data


def table(rows: list[dict[str, Any]]) -> str:
    """Rows as `sqlite3 -column -header` prints them."""
    if not rows:
        return ""
    columns = list(rows[0])
    cells = [[("" if row[c] is None else str(row[c])) for c in columns] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(line.rstrip() for line in lines)


# -- commands -----------------------------------------------------------------------------------

def session_current(cmd: "Command") -> None:
    """get_current_session_id: the session this process acts on; exit 3 when there is none."""
    try:
        session_id = cmd.session()
    except UsageError as error:
        raise Nothing("no_session", str(error)) from error
    cmd.emit({"id": session_id}, session_id)


def session_show(cmd: "Command") -> None:
    """get_session_json: the session as `sqlite3 -json` printed DevTeam's row, a list of one object."""
    session = session_row(cmd)
    print(json.dumps([{name: session[field] for name, field in SESSION_FIELDS.items()
                       if name not in ("total_cost_cents", "total_cost_dollars")}
                      | {"id": session["id"], "command": session["command"], "command_type": session["command_type"],
                         "started_at": session["started_at"],
                         "total_cost_cents": int(devteam_value("total_cost_cents", session))}],
                     ensure_ascii=False))


def session_get(cmd: "Command") -> None:
    field_of(cmd.args.field)
    session = session_row(cmd)
    cmd.emit(session, devteam_value(cmd.args.field, session))


def session_set(cmd: "Command") -> None:
    pairs = cmd.args.pairs
    if len(pairs) % 2:
        raise UsageError("give FIELD VALUE pairs")
    changes = {field_of(name): api_value(name, value) for name, value in zip(pairs[::2], pairs[1::2], strict=True)}
    if "total_cost_usd" in changes:
        raise UsageError("the cost totals grow with token usage (add_tokens), they are not set")
    cmd.emit(session_patch(cmd, changes))


def session_bump(cmd: "Command") -> None:
    """increment_iteration / increment_failures: one more, counted by the server (`sessions/{id}/increment/`), so
    processes bumping at the same instant are all counted."""
    name = cmd.args.counter
    session = cmd.api.call("POST", path_of("sessions", cmd.session(), "increment"), {"counter": name}).data
    cmd.emit(session, str(session[name]))


def state_delete(cmd: "Command") -> None:
    """delete_kv_state: remove a key (an unset one is already gone)."""
    page = cmd.api.call("GET", path_of("session-state"), query={"session": cmd.session(), "key": cmd.args.key}).data
    for entry in page["results"]:
        cmd.api.call("DELETE", path_of("session-state", entry["id"]))


def escalation_record(cmd: "Command") -> None:
    """record_escalation: the escalation at the session's current iteration, then the session's model."""
    iteration = session_row(cmd)["current_iteration"]
    body = {"session": cmd.session(), "from_model": cmd.args.from_model, "to_model": cmd.args.to_model,
            "reason": cmd.args.reason, "agent": cmd.args.agent or "", "iteration": iteration}
    escalation = cmd.api.call("POST", path_of("escalations"), body).data
    session_patch(cmd, {"current_model": cmd.args.to_model})
    cmd.emit(escalation)


def stats_show(cmd: "Command") -> None:
    """get_session_summary (JSON rows) and get_model_usage (`--table`): DevTeam's views, for this session."""
    rows = cmd.api.call("GET", path_of("stats", cmd.args.name), query={"session": cmd.session()}).data["rows"]
    print(table(rows) if cmd.args.table else json.dumps(rows, ensure_ascii=False))


Adder = Callable[..., argparse.ArgumentParser]


def add(groups: Any, *, session: Any, state: Any, command: Adder, group: Callable[[str, str], Any]) -> None:
    """The commands above, in `ralph`'s command line (`command` and `group` are main's builders)."""
    command(session, "current", session_current, "print the id of the session this process acts on; exit 3 if none")
    command(session, "show", session_show, "print the session as DevTeam's row (JSON)")
    getter = command(session, "get", session_get, "print one of DevTeam's session fields (get_state FIELD)")
    getter.add_argument("field", help=", ".join(SESSION_FIELDS))
    setter = command(session, "set", session_set, "set session fields: FIELD VALUE [FIELD VALUE …] (one write)")
    setter.add_argument("pairs", nargs="+", metavar="FIELD VALUE")
    bump = command(session, "bump", session_bump, "count one more iteration or failure; prints the new count")
    bump.add_argument("counter", choices=COUNTERS)
    delete = command(state, "delete", state_delete, "remove a key of the session's state")
    delete.add_argument("key")
    escalation = group("escalation", "model escalations (DevTeam)")
    record = command(escalation, "record", escalation_record, "record an escalation; the session's model becomes TO")
    record.add_argument("from_model")
    record.add_argument("to_model")
    record.add_argument("reason")
    record.add_argument("--agent")
    stats = command(groups, "stats", stats_show, "one of DevTeam's views for the session (session-summary, …)")
    stats.add_argument("name", help="session-summary, model-usage, session-cost, …")
    stats.add_argument("--table", action="store_true", help="as sqlite3 -column -header prints it")
