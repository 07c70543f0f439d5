"""A claim is a capability (issue #27 §2): its value goes to the claimer only, an agent's name is its token's,
an expired lease is expired at the request, no write makes a zombie, only the holder acts, the reviewer
decides without the executor's claim, and `stale_claim` says what happened."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent
from ralphsite.core.models import TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session, Task, TaskStatus
from sessions_app.services.tasks import task_leases_expire
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

TASKS = "/api/v1/tasks/"


def bound(user: Any, session: Session, agent: str, permission: str = "write") -> APIClient:
    minted = api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk, agent=agent,
                              permission=permission)
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.secret}")


def claim(client: APIClient, session: Session, agent: str = "exec-1") -> dict[str, Any]:
    response = client.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": agent}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_claim_value_is_in_the_claim_answer_only(api: APIClient, user: Any) -> None:
    session = make_session()
    make_task(session, "task-1")
    claimed = claim(api, session)
    assert claimed["claim"] == 1
    reader = bound(user, session, "watcher", permission="read")
    for client in (api, reader):
        assert "claim" not in client.get(f"{TASKS}{claimed['id']}/").json()
        assert "claim" not in client.get(f"/api/v1/sessions/{session.pk}/tasks/task-1/").json()
    assert all("claim" not in event.data for event in LedgerEvent.objects.all())


def test_another_agents_token_with_the_claim_value_is_refused(api: APIClient, user: Any) -> None:
    session = make_session()
    make_task(session, "task-1")
    holder, other = bound(user, session, "exec-1"), bound(user, session, "exec-2")
    claimed = claim(holder, session)
    for path, body in (("report", {"implementation_report": "mine"}), ("status", {"status": "review_pending"}),
                       ("heartbeat", {}), ("release", {})):
        response = other.post(f"{TASKS}{claimed['id']}/{path}/", {**body, "claim": claimed["claim"]}, format="json")
        assert_error_shape(response, 409, "not_claim_holder")
    assert_error_shape(other.delete(f"{TASKS}{claimed['id']}/?claim={claimed['claim']}"), 409, "not_claim_holder")
    task = Task.objects.get(pk=claimed["id"])
    assert (task.status, task.claimed_by, task.attempts.count()) == ("in_progress", "exec-1", 0)
    assert holder.post(f"{TASKS}{claimed['id']}/report/", {"implementation_report": "mine"},
                       format="json").status_code == 201


def test_an_agents_name_cannot_be_minted_by_another_token(api: APIClient, user: Any) -> None:
    session = make_session()
    holder = bound(user, session, "exec-1")
    body = {"scope": "session", "session": session.pk, "agent": "exec-1"}
    assert_error_shape(api.post("/api/v1/tokens/", body, format="json"), 409, "agent_taken")
    assert holder.post("/api/v1/tokens/", body, format="json").status_code == 201  # the agent's own token may
    assert api.post("/api/v1/tokens/", {**body, "agent": "exec-9"}, format="json").status_code == 201


def expire(task_id: str) -> None:
    Task.objects.filter(pk=task_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def test_an_expired_lease_is_expired_at_the_request_not_at_the_sweep(api: APIClient, user: Any) -> None:
    session = make_session()
    make_task(session, "task-1")
    holder = bound(user, session, "exec-1")
    claimed = claim(holder, session)
    expire(claimed["id"])
    for client, body in ((api, {"agent": "exec-1", "claim": claimed["claim"]}), (holder, {})):
        refused = assert_error_shape(client.post(f"{TASKS}{claimed['id']}/heartbeat/", body, format="json"),
                                     409, "stale_claim")
        assert refused["details"]["reason"] == "expired"


def test_no_write_makes_a_task_in_progress_without_a_claim(api: APIClient) -> None:
    """The zombie: a late holder's status in_progress after its lease expired and the task went back."""
    session = make_session()
    make_task(session, "task-1")
    claimed = claim(api, session)
    expire(claimed["id"])
    assert task_leases_expire() == 1
    url = f"{TASKS}{claimed['id']}/"
    assert_error_shape(api.post(f"{url}status/", {"status": "in_progress"}, format="json"), 409, "claim_required")
    assert_error_shape(api.patch(url, {"status": "in_progress"}, format="json"), 409, "claim_required")
    assert_error_shape(api.post(TASKS, {"session": session.pk, "key": "task-2", "title": "T",
                                        "status": "in_progress"}, format="json"), 409, "claim_required")
    assert Task.objects.get(pk=claimed["id"]).status == TaskStatus.NOT_STARTED
    assert claim(api, session, "exec-2")["key"] == "task-1"  # claimable again, not at capacity forever


@pytest.mark.parametrize(("sent", "reason"), [(99, "never_issued"), (1, "taken_over"), (2, "ended")])
def test_a_stale_claim_says_what_happened(api: APIClient, sent: int, reason: str) -> None:
    session = make_session()
    make_task(session, "task-1")
    first = claim(api, session)
    expire(first["id"])
    second = claim(api, session, "exec-2")
    assert second["claim"] == 2
    if reason == "ended":
        assert api.post(f"{TASKS}{second['id']}/status/", {"status": "review_pending", "claim": 2},
                        format="json").status_code == 200
    refused = assert_error_shape(api.post(f"{TASKS}{second['id']}/status/", {"status": "completed", "claim": sent},
                                          format="json"), 409, "stale_claim")
    assert refused["details"]["reason"] == reason


@pytest.mark.parametrize(("verdict", "flag", "status"), [("qualified", "complete", "completed"),
                                                         ("failed", "send_back", "not_started")])
def test_the_reviewer_decides_without_the_executors_claim(api: APIClient, user: Any, verdict: str, flag: str,
                                                          status: str) -> None:
    session = make_session()
    make_task(session, "task-1")
    executor, reviewer = bound(user, session, "exec-1"), bound(user, session, "reviewer")
    claimed = claim(executor, session)
    assert executor.post(f"{TASKS}{claimed['id']}/report/", {"implementation_report": "done"},
                         format="json").status_code == 201
    assert executor.post(f"{TASKS}{claimed['id']}/status/", {"status": "review_pending"},
                         format="json").status_code == 200
    review = reviewer.post(f"{TASKS}{claimed['id']}/review/", {"review_report": "read it", "verdict": verdict,
                                                               flag: True}, format="json")
    assert review.status_code == 200, review.content
    task = Task.objects.get(pk=claimed["id"])
    assert (task.status, task.claimed_by) == (status, "")


@pytest.mark.parametrize(("kind", "reason"), [("stop", "stop"), ("pause", "paused")])
def test_a_pending_stop_or_pause_comes_before_the_next_claim(api: APIClient, kind: str, reason: str) -> None:
    """Issue #27 §6: an operator's signal sent while the loop runs is delivered before more work."""
    session = make_session()
    make_task(session, "task-1")
    assert api.post("/api/v1/signals/", {"session": session.pk, "type": kind}, format="json").status_code == 201
    refused = assert_error_shape(api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "exec-1"},
                                          format="json"), 409, "nothing_to_claim")
    assert refused["details"]["reason"] == reason
    polled = api.post(f"/api/v1/sessions/{session.pk}/poll-signal/", {"agent": "orchestrator"}, format="json")
    assert polled.json()["type"] == kind
    if kind == "pause":  # a pause holds, polled or not, until a resume signal (§4)
        held = api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "exec-1"}, format="json")
        assert held.json()["details"]["reason"] == "paused"
        assert api.post("/api/v1/signals/", {"session": session.pk, "type": "resume"}, format="json").status_code \
            == 201
    assert claim(api, session)["key"] == "task-1"
