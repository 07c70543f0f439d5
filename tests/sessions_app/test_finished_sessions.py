"""A finished session is read-only (issue #27 §3): every orchestration verb is a 409 `session_finished`,
except resume/, poll-signal/, the summary fields, deletion and the ledger's record; ending a session releases
the tasks still in progress, with the reason."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent
from sessions_app.models import Question, Session, Signal, Task, TaskAttempt, TaskStatus
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished(api: APIClient) -> Session:
    session = make_session(key="done-1")
    task = make_task(session, "task-1", status=TaskStatus.REVIEW_PENDING)
    TaskAttempt.objects.create(task=task, attempt_number=1)
    Question.objects.create(session=session, key="Q-1", category="technical", text="?")
    Signal.objects.create(session=session, type="info", message="late news")
    assert api.post(f"/api/v1/sessions/{session.pk}/finish/", {"status": "stopped"}, format="json").status_code == 200
    return session


def refused_writes(session: Session) -> dict[str, tuple[str, str, dict[str, Any]]]:
    task = Task.objects.get(session=session)
    question = Question.objects.get(session=session)
    return {
        "update_plan": ("put", f"/api/v1/sessions/{session.pk}/plan/", {"content": "more"}),
        "create_task": ("post", "/api/v1/tasks/", {"session": session.pk, "key": "task-2", "title": "T"}),
        "create_question": ("post", "/api/v1/questions/", {"session": session.pk, "key": "Q-2",
                                                           "category": "technical", "text": "?"}),
        "set_state": ("post", "/api/v1/session-state/set/", {"session": session.pk, "key": "k", "value": 1}),
        "create_signal": ("post", "/api/v1/signals/", {"session": session.pk, "type": "info"}),
        "task_status": ("post", f"/api/v1/tasks/{task.pk}/status/", {"status": "completed"}),
        "task_patch": ("patch", f"/api/v1/tasks/{task.pk}/", {"title": "renamed"}),
        "review": ("post", f"/api/v1/tasks/{task.pk}/review/", {"review_report": "r", "verdict": "qualified"}),
        "report": ("post", f"/api/v1/tasks/{task.pk}/report/", {"implementation_report": "late"}),
        "answer": ("post", f"/api/v1/questions/{question.pk}/answer/", {"answer": "late"}),
        "transition": ("post", f"/api/v1/sessions/{session.pk}/transition/", {"state": "planning"}),
        "session_patch": ("patch", f"/api/v1/sessions/{session.pk}/", {"max_concurrency": 5}),
        "waves": ("post", f"/api/v1/sessions/{session.pk}/waves/", {}),
    }


def test_every_orchestration_write_on_a_finished_session_is_refused(api: APIClient, finished: Session) -> None:
    for name, (method, path, body) in refused_writes(finished).items():
        response = getattr(api, method)(path, body, format="json")
        assert response.status_code == 409 and response.json()["code"] == "session_finished", (name,
                                                                                                response.content)
    task = Task.objects.get(session=finished)
    assert (task.status, task.title, task.attempts.count()) == ("review_pending", "title of task-1", 1)
    assert Question.objects.get(session=finished).status == "unanswered"


def test_a_finished_session_still_takes_resume_poll_summary_and_the_ledger(api: APIClient,
                                                                          finished: Session) -> None:
    # poll-signal/ is taken, with nothing to deliver: the signal left unpolled expired with the session (§3).
    assert api.post(f"/api/v1/sessions/{finished.pk}/poll-signal/", {"agent": "o"}, format="json").status_code == 204
    assert Signal.objects.get(session=finished).expired_reason == "session stopped"
    assert api.patch(f"/api/v1/sessions/{finished.pk}/", {"summary": "what happened"},
                     format="json").status_code == 200
    assert api.post("/api/v1/events/", {"session": finished.pk, "type": "x-note"}, format="json").status_code == 201
    assert api.post(f"/api/v1/sessions/{finished.pk}/resume/", {"agent": "o"}, format="json").status_code == 200
    assert api.put(f"/api/v1/sessions/{finished.pk}/plan/", {"content": "again"},
                   format="json").status_code == 200  # running again: writable


def test_ending_a_session_releases_its_tasks_in_progress_with_the_reason(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    claimed = api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "exec-1"}, format="json").json()
    assert api.post(f"/api/v1/sessions/{session.pk}/finish/", {"status": "stopped", "exit_reason": "operator"},
                    format="json").status_code == 200
    task = Task.objects.get(pk=claimed["id"])
    assert (task.status, task.claimed_by, task.lease_expires_at) == ("not_started", "", None)
    event = LedgerEvent.objects.get(type="task_released")
    assert (event.data["reason"], event.data["claimed_by"]) == ("session stopped: operator", "exec-1")
