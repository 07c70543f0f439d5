"""DevTeam's state.sh verbs (seed 003) through `ralph`: session start/end, state, tokens."""

import json
import subprocess
import sys
from decimal import Decimal

import pytest

from ledger_app.models import TokenUsage
from sessions_app.models import Session, SessionStateEntry
from tests.cli.conftest import RALPH, RalphRunner

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_command_imports_no_django_and_prints_help() -> None:
    probe = ("import sys, ralphsite.agents.cli.main, ralphsite.agents.cli.client, ralphsite.agents.cli.shell; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('django', 'rest_framework', 'sessions_app', 'ledger_app', 'conversations_app')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"
    shown = subprocess.run([str(RALPH), "--help"], capture_output=True, text=True)
    assert shown.returncode == 0 and "shell-init" in shown.stdout and "Exit codes" in shown.stdout


def test_session_start_prints_the_new_id_and_nothing_else(ralph: RalphRunner) -> None:
    started = ralph("session", "start", "/devteam:implement --sprint 1", "implement")
    assert started.status == 0 and started.stderr == ""
    session = Session.objects.get()
    assert started.stdout == f"{session.id}\n"
    assert (session.command, session.command_type, session.status) == ("/devteam:implement --sprint 1",
                                                                       "implement", "running")


def test_a_session_started_where_the_project_cannot_be_written_still_starts(ralph: RalphRunner, tmp_path) -> None:
    project = tmp_path / "unwritable"
    project.mkdir()
    (project / ".ralph").write_text("a file where the directory would be")
    started = ralph("session", "start", "/devteam:plan", "plan", RALPH_PROJECT_DIR=project)
    assert (started.status, started.stdout) == (0, f"{Session.objects.get().id}\n")
    assert started.stderr.startswith("ralph: warning: the project's current session was not written")


def test_state_values_are_json_when_they_parse_and_strings_otherwise(ralph: RalphRunner) -> None:
    session = Session.objects.create(command="c", command_type="plan")
    values = {"current_phase": "executing", "attempts": "3", "flags": '{"eco": true}', "quoted": '"42"',
              "blank": "", "list": "[1, 2]", "not_a_number": "NaN"}
    for key, value in values.items():
        assert ralph("state", "set", key, value, RALPH_SESSION=session.id).status == 0
    stored = dict(SessionStateEntry.objects.filter(session=session).values_list("key", "value"))
    assert stored == {"current_phase": "executing", "attempts": 3, "flags": {"eco": True}, "quoted": "42",
                      "blank": "", "list": [1, 2], "not_a_number": "NaN"}
    printed = {key: ralph("state", "get", key, RALPH_SESSION=session.id).stdout for key in values}
    assert printed == {"current_phase": "executing\n", "attempts": "3\n", "flags": '{"eco": true}\n',
                       "quoted": "42\n", "blank": "\n", "list": "[1, 2]\n", "not_a_number": "NaN\n"}
    as_json = ralph("state", "get", "quoted", "--json", RALPH_SESSION=session.id)
    assert json.loads(as_json.stdout) == "42"
    # Setting again replaces the value.
    ralph("state", "set", "current_phase", "quality_gates", RALPH_SESSION=session.id)
    assert ralph("state", "get", "current_phase", RALPH_SESSION=session.id).stdout == "quality_gates\n"


def test_an_unset_state_key_is_exit_3_with_the_reason_on_stderr(ralph: RalphRunner) -> None:
    session = Session.objects.create(command="c", command_type="plan")
    missing = ralph("state", "get", "nope", RALPH_SESSION=session.id)
    assert (missing.status, missing.stdout) == (3, "")
    assert missing.stderr == "ralph: not_set: state key 'nope' is not set\n"


def test_the_session_may_be_named_by_its_key(ralph: RalphRunner) -> None:
    session = Session.objects.create(key="sprint-7", command="c", command_type="plan")
    assert ralph("state", "set", "phase", "planning", RALPH_SESSION="sprint-7").status == 0
    assert SessionStateEntry.objects.get(session=session).value == "planning"
    unknown = ralph("state", "get", "phase", "--session", "no-such-session")
    assert unknown.status == 2 and "not_found" in unknown.stderr


def test_tokens_add_records_usage_in_cents_and_moves_the_session_totals(ralph: RalphRunner) -> None:
    session = Session.objects.create(command="c", command_type="implement")
    assert ralph("tokens", "add", "1000", "500", "15", RALPH_SESSION=session.id).status == 0
    assert ralph("tokens", "add", "10", "5", "2.5", "--model", "opus", "--task", "task-1",
                 RALPH_SESSION=session.id).status == 0
    rows = list(TokenUsage.objects.filter(session=session).order_by("id").values_list(
        "input_tokens", "output_tokens", "cost_usd", "model", "task_key"))
    assert rows == [(1000, 500, Decimal("0.15"), "unknown", ""), (10, 5, Decimal("0.025"), "opus", "task-1")]
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output) == (1010, 505)
    assert session.total_cost_usd == Decimal("0.175")
    bad = ralph("tokens", "add", "1", "1", "lots", RALPH_SESSION=session.id)
    assert bad.status == 1 and "COST_CENTS must be a number" in bad.stderr


def test_a_call_reported_by_event_and_by_tokens_add_counts_once(ralph: RalphRunner) -> None:
    session = Session.objects.create(command="c", command_type="implement")
    assert ralph("event", "backend_call_finished", "--tokens-in", "100", "--tokens-out", "20", "--cost-usd", "0.01",
                 "--request-id", "req-1", "--model", "opus", RALPH_SESSION=session.id).status == 0
    assert ralph("tokens", "add", "100", "20", "1", "--model", "opus", "--request-id", "req-1",
                 RALPH_SESSION=session.id).status == 0
    assert ralph("tokens", "add", "7", "3", "0.5", "--model", "opus", "--request-id", "req-2",
                 RALPH_SESSION=session.id).status == 0
    rows = list(TokenUsage.objects.filter(session=session).order_by("id").values_list("request_id", "source"))
    assert rows == [("req-1", "token_usage"), ("req-2", "token_usage")]  # token usage reported req-1 too
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output, session.total_cost_usd) == (
        107, 23, Decimal("0.015"))


def test_session_end_records_the_status_and_reason(ralph: RalphRunner) -> None:
    session = Session.objects.create(command="c", command_type="implement")
    ended = ralph("session", "end", "completed", "All tasks done", "--json", RALPH_SESSION=session.id)
    assert ended.status == 0 and json.loads(ended.stdout)["status"] == "completed"
    session.refresh_from_db()
    assert (session.status, session.exit_reason) == ("completed", "All tasks done")
    assert session.ended_at is not None
    refused = ralph("session", "end", "finished", RALPH_SESSION=session.id)
    assert refused.status == 2 and refused.stderr.startswith("ralph: validation_error: status:")


def test_exit_codes_for_usage_refusal_and_an_unreachable_server(ralph: RalphRunner) -> None:
    assert ralph("nonsense").status == 1
    assert ralph("state", "set", "only-a-key").status == 1
    no_session = ralph("state", "get", "k")
    assert no_session.status == 1 and "no session" in no_session.stderr

    refused = ralph("session", "start", "c", "implement", "--json", RALPH_TOKEN="not-a-token")
    assert refused.status == 2 and refused.stdout == ""
    assert json.loads(refused.stderr) == {"code": "not_authenticated", "message": "Invalid token."}

    with_socket_closed = ralph("session", "start", "c", "implement", RALPH_URL="http://127.0.0.1:9")
    assert with_socket_closed.status == 4 and with_socket_closed.stderr.startswith("ralph: unreachable:")
    not_a_url = ralph("session", "start", "c", "implement", "--url", "ftp://example")
    assert not_a_url.status == 1


def test_flags_override_the_environment(ralph: RalphRunner, live_server, token) -> None:
    session = Session.objects.create(command="c", command_type="plan")
    other = Session.objects.create(command="c", command_type="plan")
    ran = ralph("--url", live_server.url, "--token", token.secret, "state", "set", "k", "v", "--session", session.id,
                RALPH_URL="http://127.0.0.1:9", RALPH_TOKEN="wrong", RALPH_SESSION=other.id)
    assert ran.status == 0
    assert SessionStateEntry.objects.get().session_id == session.id


def test_session_fields_take_devteams_names_and_the_servers_rules(ralph: RalphRunner) -> None:
    session = Session.objects.create(command="c", command_type="plan")
    on = {"RALPH_SESSION": session.id}
    assert ralph("session", "set", "plan_id", "plan-7", "current_iteration", "4", **on).status == 0
    session.refresh_from_db()
    assert (session.plan_key, session.current_iteration) == ("plan-7", 4)
    assert ralph("session", "get", "plan_id", **on).stdout == "plan-7\n"
    assert ralph("session", "get", "bug_council_activated", **on).stdout == "0\n"  # as sqlite3 printed it
    assert ralph("session", "bump", "current_iteration", **on).stdout == "5\n"
    unknown = ralph("session", "get", "user_request", **on)
    assert unknown.status == 1 and "not a session field; one of: status, current_phase" in unknown.stderr
    assert ralph("session", "set", "current_iteration", "many", **on).status == 1
    assert ralph("session", "set", "plan_id", **on).status == 1  # a field without its value
    assert ralph("session", "set", "total_cost_cents", "5", **on).status == 1  # totals grow with usage only
    # A final status finishes the session, as a PATCH does.
    assert ralph("session", "set", "status", "failed", **on).status == 0
    session.refresh_from_db()
    assert session.status == "failed" and session.ended_at is not None
    assert ralph("state", "delete", "never-set", **on).status == 0


def test_session_current_is_exit_3_when_no_session_is_found(ralph: RalphRunner) -> None:
    none = ralph("session", "current")
    assert (none.status, none.stdout) == (3, "")
    assert none.stderr.startswith("ralph: no_session: no session")
