"""The audit trail through the real API: each orchestration action records exactly one ledger event
of its type, with its data, in the action's own transaction (a failed action leaves no event)."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent
from ralphsite.core.errors import Conflict
from sessions_app.ledger import ledger
from sessions_app.models import Question, Session, Signal, Task
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import make_session

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Action:
    """One orchestration call: its request, the event it must record, and the state it changes."""

    url: str
    body: dict[str, Any]
    event_type: str
    task_key: str
    agent: str
    data: dict[str, Any]  # the event's data must contain these items
    state: Callable[[], Any]  # the orchestration state the action changes (compared before/after)


def _task_status(session: Session) -> Action:
    task = Task.objects.create(session=session, key="TASK-001", title="Build")
    return Action(f"/api/v1/tasks/{task.id}/status/", {"status": "blocked", "annotation": "go",
                                                       "agent": "executor"},
                  "task_status_changed", "TASK-001", "executor",
                  {"task": task.id, "from": "not_started", "to": "blocked", "annotation": "go"},
                  lambda: Task.objects.get(pk=task.id).status)


def _claim(session: Session) -> Action:
    task = Task.objects.create(session=session, key="TASK-002", title="Claim me")
    return Action(f"/api/v1/sessions/{session.id}/claim-task/", {"agent": "executor", "lease_seconds": 60},
                  "task_claimed", "TASK-002", "executor", {"task": task.id, "from": "not_started"},
                  lambda: Task.objects.values_list("status", "claimed_by").get(pk=task.id))


def _poll_signal(session: Session) -> Action:
    signal = Signal.objects.create(session=session, type="steer", message="focus on the API")
    return Action(f"/api/v1/sessions/{session.id}/poll-signal/", {"agent": "orchestrator"},
                  "signal_processed", "", "orchestrator", {"signal": signal.id, "type": "steer"},
                  lambda: Signal.objects.values_list("is_processed", "processed_by").get(pk=signal.id))


def _answer(session: Session) -> Action:
    question = Question.objects.create(session=session, key="Q-001", category="technical", text="Which DB?")
    return Action(f"/api/v1/questions/{question.id}/answer/", {"answer": "PostgreSQL", "agent": "planner"},
                  "question_answered", "", "planner", {"question": question.id, "key": "Q-001"},
                  lambda: Question.objects.values_list("status", "answer").get(pk=question.id))


def _transition(session: Session) -> Action:
    return Action(f"/api/v1/sessions/{session.id}/transition/",
                  {"state": "planning", "current_iteration": 2, "agent": "orchestrator", "message": "plan"},
                  "session_state_changed", "", "orchestrator",
                  {"from": "initializing", "to": "planning", "current_iteration": 2},
                  lambda: Session.objects.values_list("state", "current_iteration").get(pk=session.id))


ACTIONS = pytest.mark.parametrize("build", [_task_status, _claim, _poll_signal, _answer, _transition],
                                  ids=["task-status", "claim-task", "poll-signal", "answer", "transition"])


@ACTIONS
def test_it_records_exactly_one_event_of_the_action(api: APIClient, build: Callable[[Session], Action]) -> None:
    session = make_session()
    action = build(session)
    before = action.state()
    response = api.post(action.url, action.body, format="json")
    assert response.status_code == 200, response.content
    assert action.state() != before
    [event] = LedgerEvent.objects.all()
    assert (event.session_id, event.type, event.category) == (session.id, action.event_type, "orchestration")
    assert (event.task_key, event.agent) == (action.task_key, action.agent)
    assert action.data.items() <= event.data.items(), event.data
    assert event.message


@pytest.fixture
def fail_after_the_ledger(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ledger appends the event, then the action fails (a 409): the list has how many events the
    session had inside the action's transaction."""
    seen: list[int] = []
    installed = ledger()
    append = installed.event_append

    def append_then_refuse(*, session_id: str, **kwargs: Any) -> None:
        append(session_id=session_id, **kwargs)
        seen.append(LedgerEvent.objects.filter(session_id=session_id).count())
        raise Conflict("refused after the ledger recorded the event", code="test_refusal")

    monkeypatch.setattr(installed, "event_append", append_then_refuse)
    return seen


@ACTIONS
def test_it_a_failed_action_leaves_no_event_and_no_change(api: APIClient, build: Callable[[Session], Action],
                                                          fail_after_the_ledger: list[int]) -> None:
    session = make_session()
    action = build(session)
    before = action.state()
    assert_error_shape(api.post(action.url, action.body, format="json"), 409, "test_refusal")
    assert fail_after_the_ledger == [1]  # the event existed inside the action's transaction…
    assert not LedgerEvent.objects.exists()  # …and was rolled back with it
    assert action.state() == before
