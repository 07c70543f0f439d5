"""What a finished session still does: no more task claims, signals still delivered, resume only when
the run did not complete (seed 001: resume *interrupted* runs)."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from sessions_app.models import FINISHED_SESSION_STATUSES, Session, SessionStatus, Signal, Task
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

FINISHED = sorted(FINISHED_SESSION_STATUSES)


def url(session: Session, verb: str) -> str:
    return f"/api/v1/sessions/{session.pk}/{verb}/"


def claim(api: APIClient, session: Session) -> Any:
    return api.post(url(session, "claim-task"), {"agent": "executor-1", "lease_seconds": 600}, format="json")


def test_it_knows_every_status_but_running_as_finished() -> None:
    assert set(FINISHED) == set(SessionStatus) - {SessionStatus.RUNNING}
    assert {"completed", "failed", "stopped", "aborted"} <= set(FINISHED)


@pytest.mark.parametrize("status", FINISHED)
def test_it_refuses_to_hand_out_a_task_of_a_finished_session(api: APIClient, status: str,
                                                             events: list[dict[str, Any]]) -> None:
    session = make_session(status=status)
    task = make_task(session, "task-1")
    body = assert_error_shape(claim(api, session), 409, "nothing_to_claim")
    assert status in body["message"]
    assert body["details"] == {"reason": "session_finished", "session": session.pk, "status": status}
    task.refresh_from_db()
    assert (task.status, task.claimed_by, task.iteration_count) == ("not_started", "", 0)
    assert events == []


def test_it_reads_the_status_at_claim_time_not_from_a_stale_copy(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    make_task(session, "task-2")
    assert claim(api, session).json()["key"] == "task-1"
    api.post(url(session, "finish"), {"status": "stopped"}, format="json")
    assert assert_error_shape(claim(api, session), 409, "nothing_to_claim")["details"]["reason"] == "session_finished"
    assert Task.objects.get(key="task-2").status == "not_started"


@pytest.mark.parametrize("status", FINISHED)
def test_it_still_delivers_the_pending_signals_of_a_finished_session(api: APIClient, status: str) -> None:
    session = make_session(status=status)
    Signal.objects.create(session=session, type="stop", message="stop now")
    body = api.post(url(session, "poll-signal"), {"agent": "orchestrator"}, format="json").json()
    assert (body["type"], body["is_processed"], body["processed_by"]) == ("stop", True, "orchestrator")
    assert api.post(url(session, "poll-signal"), format="json").status_code == 204
    session.refresh_from_db()
    assert session.status == status


def test_it_refuses_to_resume_a_completed_session(api: APIClient, events: list[dict[str, Any]]) -> None:
    session = make_session()
    api.post(url(session, "finish"), {"status": "completed", "exit_reason": "all done"}, format="json")
    events.clear()
    body = assert_error_shape(api.post(url(session, "resume"), {"agent": "cli"}, format="json"), 409,
                              "session_completed")
    assert body["details"] == {"session": session.pk, "status": "completed"}
    session.refresh_from_db()
    assert (session.status, session.exit_reason) == ("completed", "all done") and session.ended_at
    assert events == []


@pytest.mark.parametrize("status", sorted(set(SessionStatus) - {SessionStatus.COMPLETED}))
def test_it_resumes_a_session_that_did_not_complete(api: APIClient, status: str) -> None:
    session = make_session(status=status, last_activity_at=timezone.now() - timedelta(hours=1))
    make_task(session, "task-1")
    response = api.post(url(session, "resume"), {"agent": "cli"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["next_task"] == "task-1"
    session.refresh_from_db()
    assert (session.status, session.ended_at) == ("running", None)
    assert claim(api, session).json()["key"] == "task-1"
