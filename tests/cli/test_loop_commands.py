"""The loop's verbs through `ralph`: claims, statuses, reports, signals, the ledger, memory, progress."""

import json
from decimal import Decimal

import pytest

from conversations_app.models import Observation
from ledger_app.models import Checkpoint, Issue, LedgerEvent
from ralphsite.core.models import TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session, Signal, Task, TaskAttempt
from tests.cli.conftest import RalphRunner
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def session() -> Session:
    session = make_session(key="loop-1")
    first = make_task(session, "task-1", title="Schema", sequence=1)
    make_task(session, "task-2", title="API", sequence=2, depends_on=(first,))
    return session


def test_a_task_is_claimed_worked_and_reported(ralph: RalphRunner, session: Session, tmp_path) -> None:
    env = {"RALPH_SESSION": "loop-1"}
    claimed = ralph("task", "claim", "--agent", "exec-1", "--lease", "120", **env)
    assert claimed.status == 0, claimed.stderr
    task = json.loads(claimed.stdout)
    assert (task["key"], task["status"], task["claimed_by"], task["claim"]) == ("task-1", "in_progress", "exec-1", 1)

    nothing = ralph("task", "claim", "--agent", "exec-2", **env)  # task-2 waits for task-1
    assert (nothing.status, nothing.stdout) == (3, "")
    assert nothing.stderr == "ralph: waiting: Tasks in progress or in review will unblock more.\n"

    beat = ralph("task", "heartbeat", "task-1", "--agent", "exec-1", "--lease", "300", "--claim", "1", **env)
    assert beat.status == 0 and beat.stdout.startswith("task-1 leased until ")
    stranger = ralph("task", "heartbeat", "task-1", "--agent", "exec-2", "--claim", "1", "--json", **env)
    assert stranger.status == 2 and json.loads(stranger.stderr)["code"] == "not_claim_holder"

    report_file = tmp_path / "report.md"
    report_file.write_text("## PART 1\nImplemented the schema.\n", encoding="utf-8")
    reported = ralph("task", "report", "task-1", str(report_file), "--agent", "exec-1", "--model", "sonnet",
                     "--claim", "1", **env)
    assert reported.stdout == "task-1 attempt 1\n"
    again = ralph("task", "report", "task-1", "-", "--agent", "exec-1", "--claim", "1",
                  input="Second try: ünïcode.\n", **env)
    assert again.stdout == "task-1 attempt 2\n"
    reports = list(TaskAttempt.objects.filter(task__key="task-1").order_by("attempt_number")
                   .values_list("implementation_report", "agent", "model"))
    assert reports == [("## PART 1\nImplemented the schema.", "exec-1", "sonnet"),  # the API trims text
                       ("Second try: ünïcode.", "exec-1", "")]
    missing = ralph("task", "report", "task-1", str(tmp_path / "nope.md"), **env)
    assert missing.status == 1 and "cannot read" in missing.stderr

    done = ralph("task", "status", "task-1", "completed", "--note", "reviewed", "--agent", "orchestrator",
                 "--claim", "1", **env)
    assert done.stdout == "task-1 completed\n"
    stored = Task.objects.get(key="task-1")
    assert (stored.status, stored.status_annotation, stored.claimed_by) == ("completed", "reviewed", "")
    bad_status = ralph("task", "status", "task-1", "finished", **env)
    assert bad_status.status == 2 and "validation_error" in bad_status.stderr
    unknown = ralph("task", "status", "task-9", "completed", **env)
    assert unknown.status == 2 and "not_found" in unknown.stderr

    second = json.loads(ralph("task", "claim", "--agent", "exec-2", **env).stdout)
    assert second["key"] == "task-2" and second["depends_on"] == ["task-1"]
    released = ralph("task", "release", "task-2", "--agent", "exec-2", "--reason", "out of budget",
                     "--claim", str(second["claim"]), **env)
    assert released.stdout == "task-2 not_started\n"
    shown = json.loads(ralph("task", "show", "task-2", **env).stdout)
    assert shown["status"] == "not_started" and shown["claimed_by"] == ""
    assert [e.type for e in LedgerEvent.objects.filter(session=session).order_by("id")] == [
        "task_claimed", "task_status_changed", "task_claimed", "task_released"]


def test_a_claimed_tasks_write_without_its_claim_says_to_pass_claim(ralph: RalphRunner, session: Session) -> None:
    env = {"RALPH_SESSION": "loop-1"}
    assert ralph("task", "claim", "--agent", "exec-1", **env).status == 0
    unfenced = ralph("task", "heartbeat", "task-1", "--agent", "exec-1", **env)
    assert unfenced.status == 2 and unfenced.stderr.startswith("ralph: claim_required: ")
    assert "Pass it as --claim N (N: the `claim` that `ralph task claim` printed)." in unfenced.stderr
    as_json = json.loads(ralph("task", "release", "task-1", "--agent", "exec-1", "--json", **env).stderr)
    assert as_json["code"] == "claim_required" and "--claim N" in as_json["message"]
    # Putting a task in progress by its status is refused with the same code: claiming, not --claim, is the way.
    by_status = ralph("task", "status", "task-2", "in_progress", "--agent", "exec-1", **env)
    assert by_status.status == 2 and "claim_required" in by_status.stderr and "--claim" not in by_status.stderr


def test_claiming_on_a_finished_session_is_nothing_to_claim(ralph: RalphRunner, session: Session) -> None:
    assert ralph("session", "end", "completed", RALPH_SESSION=session.id).status == 0
    finished = ralph("task", "claim", "--agent", "exec-1", "--json", RALPH_SESSION=session.id)
    assert finished.status == 3 and json.loads(finished.stderr)["code"] == "session_finished"


def test_signals_are_sent_and_polled_once(ralph: RalphRunner, session: Session) -> None:
    env = {"RALPH_SESSION": session.id}
    sent = ralph("signal", "send", "steer", "Prefer small PRs", **env)
    assert sent.status == 0 and sent.stdout.strip() == Signal.objects.get().id
    polled = ralph("signal", "poll", "--agent", "orchestrator", **env)
    assert (polled.status, polled.stdout) == (0, "steer: Prefer small PRs\n")
    empty = ralph("signal", "poll", **env)
    assert (empty.status, empty.stdout) == (3, "") and "no_signal" in empty.stderr
    assert Signal.objects.get().processed_by == "orchestrator"
    refused = ralph("signal", "send", "shout", "x", **env)
    assert refused.status == 2 and "type:" in refused.stderr


def test_events_issues_and_checkpoints_go_to_the_ledger(ralph: RalphRunner, session: Session) -> None:
    env = {"RALPH_SESSION": session.id}
    appended = ralph("event", "backend_call_finished", "--tokens-in", "120", "--tokens-out", "30",
                     "--cost-usd", "0.0042", "--meta", '{"backend": "claude"}', "--task", "task-1",
                     "--agent", "exec-1", "--idempotency-key", "call-1", **env)
    assert appended.status == 0, appended.stderr
    event = LedgerEvent.objects.get(type="backend_call_finished")
    assert appended.stdout == f"{event.id}\n"
    assert (event.tokens_in, event.tokens_out, event.cost_usd, event.meta, event.task_key, event.agent) == (
        120, 30, Decimal("0.0042"), {"backend": "claude"}, "task-1", "exec-1")
    retried = ralph("event", "backend_call_finished", "--tokens-in", "120", "--idempotency-key", "call-1", **env)
    assert retried.stdout == f"{event.id}\n"  # the same event: a retry is recorded once
    assert ralph("event", "x-custom", "--meta", "{not json", **env).status == 1
    assert ralph("event", "no_such_type", **env).status == 2

    for _ in range(2):
        recorded = ralph("issue", "record", "test_failure", "tests/test_api.py::test_x", "AssertionError",
                         "--file", "tests/test_api.py", "--line", "42", "--task", "task-1", **env)
        assert recorded.status == 0, recorded.stderr
    assert recorded.stdout == "tests/test_api.py::test_x seen 2 time(s)\n"
    issue = Issue.objects.get()
    assert (issue.count, issue.file, issue.line, issue.task_key) == (2, "tests/test_api.py", 42, "task-1")
    no_task = ralph("issue", "record", "lint", "sig", "msg", **env)
    assert no_task.status == 1 and "RALPH_TASK" in no_task.stderr
    assert ralph("issue", "record", "lint", "sig", "msg", RALPH_TASK="task-2", **env).status == 0

    created = ralph("checkpoint", "create", "chk-1", "refs/heads/ralph/task-1", "--summary", "schema done",
                    "--task", "task-1", **env)
    assert created.stdout == "chk-1\n"
    checkpoint = Checkpoint.objects.get()
    assert (checkpoint.session_id, checkpoint.git_ref, checkpoint.summary) == (
        session.id, "refs/heads/ralph/task-1", "schema done")
    duplicate = ralph("checkpoint", "create", "chk-1", "HEAD", **env)
    assert duplicate.status == 2 and "conflict" in duplicate.stderr
    assert LedgerEvent.objects.filter(session=session, type="checkpoint_created").count() == 1


def test_search_and_progress(ralph: RalphRunner, session: Session) -> None:
    Observation.objects.create(session=session, type="decision", content="Chose PostgreSQL for the ledger")
    found = ralph("search", "PostgreSQL")
    assert found.status == 0
    assert found.stdout.startswith("observation ") and "<mark>PostgreSQL</mark>" in found.stdout
    page = json.loads(ralph("search", "PostgreSQL", "--kind", "observation", "--json").stdout)
    assert page["count"] == 1 and page["results"][0]["session"] == session.id
    assert ralph("search", "nothing-like-this").status == 3
    LedgerEvent.objects.create(session=session, type="x-note", message="PostgreSQL vacuum finished")
    events = json.loads(ralph("search", "vacuum", "--kind", "event", "--json").stdout)
    assert [hit["kind"] for hit in events["results"]] == ["event"]
    unknown = ralph("search", "PostgreSQL", "--kind", "memo")
    assert unknown.status == 2 and "memo" in unknown.stderr, unknown.stderr

    shown = ralph("progress", RALPH_SESSION="loop-1")
    assert shown.stdout.splitlines() == ["2 tasks: 2 not_started",
                                         "task-1  not_started     Schema",
                                         "task-2  not_started     API"]
    as_json = json.loads(ralph("progress", "--json", RALPH_SESSION="loop-1").stdout)
    assert as_json["total"] == 2 and as_json["by_status"]["not_started"] == 2


def test_the_task_commands_run_with_an_agent_bound_session_token(ralph: RalphRunner, session: Session, user) -> None:
    """The README's least-privilege set-up (issue #27 §4): one agent, one session token bound to it, tasks by key."""
    minted = api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk, agent="exec-1")
    env = {"RALPH_SESSION": "loop-1", "RALPH_TOKEN": minted.secret}
    claimed = ralph("task", "claim", **env)
    assert claimed.status == 0, claimed.stderr
    assert json.loads(claimed.stdout)["claimed_by"] == "exec-1"
    assert json.loads(ralph("task", "show", "task-1", **env).stdout)["claimed_by"] == "exec-1"
    released = ralph("task", "release", "task-1", "--reason", "handing back", **env)
    assert released.status == 0, released.stderr
    assert ralph("task", "claim", **env).status == 0
    for args in (("task", "heartbeat", "task-1"), ("task", "report", "task-1", "-"),
                 ("task", "status", "task-1", "review_pending", "--note", "ready for review")):
        run = ralph(*args, input="implemented", **env)
        assert run.status == 0, (args, run.stderr)
    task = Task.objects.get(session=session, key="task-1")
    assert (task.status, task.claimed_by, task.attempts.get().agent) == ("review_pending", "", "exec-1")
