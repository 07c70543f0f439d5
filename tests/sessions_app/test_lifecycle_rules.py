"""Lifecycles a loop can rely on (issue #15 §2): finish once, status and ended_at together, activity,
resume of an active session, iterations from 1, DevTeam research counters."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from sessions_app.models import Iteration, ResearchFinding, ResearchSession, Session
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

SESSIONS = "/api/v1/sessions/"


def action(api: APIClient, session: Session, verb: str, body: dict[str, Any] | None = None) -> Any:
    return api.post(f"{SESSIONS}{session.pk}/{verb}/", body or {}, format="json")


# -- finish once; status and ended_at together ---------------------------------------------------


def test_a_second_finish_is_a_409_and_changes_nothing(api: APIClient, events: list[dict[str, Any]]) -> None:
    session = make_session()
    first = action(api, session, "finish", {"status": "completed", "exit_reason": "done"}).json()
    body = assert_error_shape(action(api, session, "finish", {"status": "failed", "exit_reason": "late"}), 409,
                              "session_finished")
    assert body["details"] == {"session": session.pk, "status": "completed", "ended_at": first["ended_at"]}
    session.refresh_from_db()
    assert (session.status, session.exit_reason) == ("completed", "done")
    assert [e["event_type"] for e in events] == ["session_finished"]


def test_patching_the_status_of_a_running_session_finishes_it_as_finish_does(
        api: APIClient, events: list[dict[str, Any]]) -> None:
    session = make_session()
    body = api.patch(f"{SESSIONS}{session.pk}/", {"status": "stopped", "exit_reason": "user_abort"},
                     format="json").json()
    assert (body["status"], body["exit_reason"]) == ("stopped", "user_abort") and body["ended_at"] is not None
    assert [(e["event_type"], e["data"]) for e in events] == [
        ("session_finished", {"status": "stopped", "exit_reason": "user_abort"})]


def test_a_patch_may_give_the_end_time_with_the_status(api: APIClient) -> None:
    session = make_session()
    body = api.patch(f"{SESSIONS}{session.pk}/", {"status": "failed", "ended_at": "2026-01-02T03:04:05Z"},
                     format="json").json()
    assert (body["status"], body["ended_at"]) == ("failed", "2026-01-02T03:04:05Z")


@pytest.mark.parametrize(("start", "patch", "status", "code"), [
    ("completed", {"status": "failed"}, 409, "session_finished"),
    ("completed", {"status": "running"}, 409, "session_finished"),
    ("running", {"ended_at": "2026-01-02T03:04:05Z"}, 400, "validation_error"),
    ("stopped", {"ended_at": None}, 400, "validation_error"),
], ids=["final-to-final", "final-to-running", "end-time-alone", "clear-end-time"])
def test_status_and_ended_at_never_change_apart(api: APIClient, start: str, patch: dict[str, Any], status: int,
                                                code: str) -> None:
    session = make_session(status=start, ended_at=None if start == "running" else timezone.now())
    before = Session.objects.values("status", "ended_at").get(pk=session.pk)
    assert_error_shape(api.patch(f"{SESSIONS}{session.pk}/", patch, format="json"), status, code)
    assert Session.objects.values("status", "ended_at").get(pk=session.pk) == before


def test_a_session_created_finished_has_an_end_time_and_a_running_one_has_none(api: APIClient) -> None:
    finished = api.post(SESSIONS, {"status": "completed"}, format="json").json()
    assert finished["ended_at"] is not None
    assert_error_shape(api.post(SESSIONS, {"ended_at": "2026-01-02T03:04:05Z"}, format="json"), 400,
                       "validation_error")


# -- activity and resume -------------------------------------------------------------------------


def test_resume_refuses_a_session_active_within_the_idle_window_unless_forced(
        api: APIClient, events: list[dict[str, Any]]) -> None:
    session = make_session(last_activity_at=timezone.now() - timedelta(seconds=30))
    body = assert_error_shape(action(api, session, "resume", {"agent": "orchestrator-2"}), 409, "session_active")
    assert body["details"]["idle_seconds"] == 300 and body["details"]["session"] == session.pk
    assert events == []
    assert action(api, session, "resume", {"agent": "orchestrator-2", "idle_seconds": 10}).status_code == 200
    assert_error_shape(action(api, session, "resume", {"agent": "orchestrator-3"}), 409, "session_active")
    forced = action(api, session, "resume", {"agent": "orchestrator-3", "force": True})
    assert forced.status_code == 200
    assert [e["agent"] for e in events if e["event_type"] == "session_resumed"] == ["orchestrator-2",
                                                                                  "orchestrator-3"]


def test_a_quiet_running_session_and_a_failed_one_resume_without_force(api: APIClient) -> None:
    quiet = make_session(last_activity_at=timezone.now() - timedelta(minutes=6))
    failed = make_session(status="failed", ended_at=timezone.now())  # just ended: not running, not active
    assert action(api, quiet, "resume").status_code == 200
    assert action(api, failed, "resume").status_code == 200


@pytest.mark.parametrize("write", [
    lambda api, s: api.post("/api/v1/events/", {"session": s.pk, "type": "validator_started"}, format="json"),
    lambda api, s: api.post("/api/v1/issues/record/", {"session": s.pk, "task_key": "t", "kind": "lint",
                                                       "signature": "lint:a.py:1", "message": "m"}, format="json"),
    lambda api, s: api.post("/api/v1/checkpoints/", {"session": s.pk, "key": "chkpt-1"}, format="json"),
    lambda api, s: api.post("/api/v1/token-usage/", {"session": s.pk, "model": "m", "input_tokens": 1,
                                                     "cost_usd": "0.000001"}, format="json"),
    lambda api, s: api.post(f"/api/v1/tasks/{make_task(s, 'task-r').pk}/report/",
                            {"implementation_report": "done"}, format="json"),
    lambda api, s: api.post(f"/api/v1/runs/{_run_of(api, s)}/messages/", {"role": "user", "content": "hi"},
                            format="json"),
], ids=["event-without-tokens", "issue", "checkpoint", "token-usage", "attempt", "message-of-its-chat"])
def test_every_write_of_the_session_moves_its_activity(api: APIClient, write: Any) -> None:
    long_ago = timezone.now() - timedelta(hours=2)
    session = make_session(last_activity_at=long_ago)
    Session.objects.filter(pk=session.pk).update(last_activity_at=long_ago)  # after the setup's own writes
    response = write(api, session)
    assert response.status_code in (200, 201), response.content
    session.refresh_from_db()
    assert session.last_activity_at > timezone.now() - timedelta(minutes=1)
    interrupted = api.get(f"{SESSIONS}interrupted/").json()["results"]
    assert session.pk not in {row["id"] for row in interrupted}


def _run_of(api: APIClient, session: Session) -> str:
    chat = api.post("/api/v1/chats/", {"title": "c", "session": session.pk}, format="json").json()
    run = api.post("/api/v1/runs/", {"chat": chat["id"]}, format="json").json()
    Session.objects.filter(pk=session.pk).update(last_activity_at=timezone.now() - timedelta(hours=2))
    return run["id"]


# -- iterations ----------------------------------------------------------------------------------


def test_iteration_one_exists_from_the_session_creation(api: APIClient) -> None:
    session = api.post(SESSIONS, {"key": "s"}, format="json").json()
    assert list(Iteration.objects.filter(session_id=session["id"]).values_list("number", flat=True)) == [1]
    api.patch(f"{SESSIONS}{session['id']}/", {"current_iteration": 2}, format="json")
    assert list(Iteration.objects.filter(session_id=session["id"]).values_list("number", flat=True)) == [1, 2]


def test_a_question_belongs_to_the_current_iteration_unless_told(api: APIClient) -> None:
    session = make_session()
    action(api, session, "transition", {"state": "replanning", "current_iteration": 2})
    implied = api.post("/api/v1/questions/", {"session": session.pk, "key": "Q-1", "category": "technical",
                                              "text": "?"}, format="json").json()
    given = api.post("/api/v1/questions/", {"session": session.pk, "key": "Q-2", "category": "technical",
                                            "text": "?", "iteration_number": 1}, format="json").json()
    assert (implied["iteration_number"], given["iteration_number"]) == (2, 1)


def test_planning_completed_at_follows_planning_complete(api: APIClient) -> None:
    session = make_session()
    iteration = Iteration.objects.create(session=session, number=1)
    url = f"/api/v1/iterations/{iteration.pk}/"
    done = api.patch(url, {"planning_complete": True}, format="json").json()
    assert done["planning_completed_at"] is not None
    assert api.patch(url, {"planning_complete": False}, format="json").json()["planning_completed_at"] is None
    created = api.post("/api/v1/iterations/", {"session": session.pk, "number": 2, "planning_complete": True},
                       format="json").json()
    assert created["planning_completed_at"] is not None


def test_iteration_numbers_start_at_one(api: APIClient) -> None:
    session = make_session()
    body = assert_error_shape(api.post("/api/v1/iterations/", {"session": session.pk, "number": 0}, format="json"),
                              400, "validation_error")
    assert set(body["details"]) == {"number"}
    body = assert_error_shape(api.patch(f"{SESSIONS}{session.pk}/", {"current_iteration": 0}, format="json"),
                              400, "validation_error")
    assert set(body["details"]) == {"current_iteration"}


# -- DevTeam research counters -------------------------------------------------------------------


def test_research_counters_follow_the_findings(api: APIClient) -> None:
    research = ResearchSession.objects.create(session=make_session())
    findings = "/api/v1/research-findings/"

    def counts() -> tuple[int, int, int]:
        row = api.get(f"/api/v1/research-sessions/{research.pk}/").json()
        return row["findings_count"], row["recommendations_count"], row["blockers_found"]

    made = [api.post(findings, {"research_session": research.pk, "finding_type": kind, "title": kind},
                     format="json").json() for kind in ("pattern", "recommendation", "blocker", "blocker")]
    assert counts() == (4, 1, 2)
    api.patch(f"{findings}{made[2]['id']}/", {"finding_type": "recommendation"}, format="json")
    assert counts() == (4, 2, 1)
    api.delete(f"{findings}{made[3]['id']}/")
    assert counts() == (3, 2, 0)
    other = ResearchSession.objects.create(session=research.session)
    api.patch(f"{findings}{made[1]['id']}/", {"research_session": other.pk}, format="json")
    assert counts() == (2, 1, 0)
    other.refresh_from_db()
    assert (other.findings_count, other.recommendations_count) == (1, 1)
    assert ResearchFinding.objects.count() == 3


def test_research_counters_are_read_only(api: APIClient) -> None:
    research = ResearchSession.objects.create(session=make_session())
    api.patch(f"/api/v1/research-sessions/{research.pk}/", {"findings_count": 7}, format="json")
    research.refresh_from_db()
    assert research.findings_count == 0
