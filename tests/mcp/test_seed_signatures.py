"""The seeds' tool signatures through MCP (issue #26 §4, §5): `submit_report` takes the attempt number it
advertises (Ralph V2's SubmitReport), `create_question` asks in the session's current iteration, and ralphy's
`run_id` names the session wherever `session` does."""

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from ledger_app.models import Issue, LedgerEvent, TokenUsage
from sessions_app.models import Question, Session, TaskAttempt
from sessions_app.services.tasks import task_attempt_record
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def run() -> Session:
    session = make_session(key="run-20260101-a", current_iteration=2)
    make_task(session, "auth-001")
    return session


def test_submit_report_takes_the_attempt_number_it_advertises(connect: Callable[..., Any], run: Session) -> None:
    with connect() as agent:
        answer = agent.ok("submit_report", session=run.key, task="auth-001", implementation_report="done",
                          attempt_number=3)
    assert answer == {"task": "auth-001", "attempt_number": 3, "created": True}
    assert list(TaskAttempt.objects.values_list("attempt_number", flat=True)) == [3]


def test_submit_report_naming_an_attempt_describes_its_call(connect: Callable[..., Any], run: Session) -> None:
    # DevTeam's attempt row first, then Ralph V2's report of it, sent twice: one attempt, one usage row.
    usage = {"model": "m1", "tokens_input": 100, "tokens_output": 20, "cost_usd": "0.010000"}
    task_attempt_record(data={"task": run.tasks.get(key="auth-001"), "attempt_number": 1, **usage})
    with connect() as agent:
        for _ in range(2):
            answer = agent.ok("submit_report", session=run.key, task="auth-001", implementation_report="done",
                              attempt_number=1, **usage)
            assert answer == {"task": "auth-001", "attempt_number": 1, "created": False}  # described, not made
    assert TaskAttempt.objects.get().implementation_report == "done"
    [row] = TokenUsage.objects.all()
    run.refresh_from_db()
    assert (row.input_tokens, row.cost_usd) == (run.total_tokens_input, run.total_cost_usd) == (100, Decimal("0.01"))


def test_create_question_asks_in_the_current_iteration(connect: Callable[..., Any], run: Session) -> None:
    with connect() as agent:
        answer = agent.ok("create_question", session=run.key, key="Q-1", category="technical", text="Which?")
    assert answer["iteration_number"] == 2
    assert Question.objects.get(key="Q-1").iteration_number == 2


def test_run_id_names_the_session(connect: Callable[..., Any], run: Session) -> None:
    with connect() as agent:
        agent.ok("append_event", run_id=run.key, type="x-step")
        agent.ok("record_issue", run_id=run.key, task_key="auth-001", kind="lint", signature="lint:a", message="m")
        assert agent.ok("get_task", run_id=run.key, task="auth-001")["key"] == "auth-001"
        both = agent.error("append_event", run_id=run.key, session=run.key, type="x-step")
    assert both["details"] == {"run_id": ["run_id is session: send one of them."]}
    assert LedgerEvent.objects.filter(session=run, type="x-step").count() == 1
    assert Issue.objects.filter(session=run).count() == 1
