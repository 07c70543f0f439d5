"""Fenced claims and expiring leases (#16 §2): a late holder changes nothing; expired leases go back
to the ready pool by themselves, recorded in the ledger."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent
from ralphsite.core import upkeep_jobs
from ralphsite.core.models import ApiToken, TokenScope
from ralphsite.server import upkeep
from ralphsite.tokens.services import MintedToken, api_token_create
from sessions_app.models import Session, Task, TaskAttempt
from sessions_app.services.tasks import task_leases_expire
from tests.api_mixins import assert_error_shape
from tests.concurrency import api_in_threads
from tests.sessions_app.factories import make_session, make_task

TASKS = "/api/v1/tasks/"


def _claim(client: APIClient, session: Session, agent: str) -> dict[str, Any]:
    response = client.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": agent, "lease_seconds": 60},
                           format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _expire(task_id: str) -> None:
    Task.objects.filter(pk=task_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


def _fenced_writes(task_id: str, agent: str, claim: int | None) -> dict[str, tuple[str, dict[str, Any]]]:
    fence = {"agent": agent} | ({"claim": claim} if claim is not None else {})
    return {"heartbeat": (f"{TASKS}{task_id}/heartbeat/", fence),
            "release": (f"{TASKS}{task_id}/release/", fence),
            "status": (f"{TASKS}{task_id}/status/", {**fence, "status": "completed"}),
            "report": (f"{TASKS}{task_id}/report/", {**fence, "implementation_report": "late"})}


@pytest.mark.django_db
def test_the_claim_value_grows_with_every_claim_of_the_task(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    first = _claim(api, session, "exec-1")
    assert first["claim"] == 1
    api.post(f"{TASKS}{first['id']}/release/", {"agent": "exec-1", "claim": 1}, format="json")
    assert _claim(api, session, "exec-2")["claim"] == 2
    _expire(first["id"])
    assert _claim(api, session, "exec-2")["claim"] == 3  # the same agent again, after its lease expired


@pytest.mark.django_db
@pytest.mark.parametrize("same_agent", [False, True], ids=["another agent", "the same agent name"])
def test_a_holder_whose_lease_expired_and_was_claimed_again_changes_nothing(api: APIClient, same_agent: bool) -> None:
    session = make_session()
    make_task(session, "task-1")
    late = _claim(api, session, "exec-1")
    _expire(late["id"])
    current = _claim(api, session, "exec-1" if same_agent else "exec-2")
    before = Task.objects.filter(pk=late["id"]).values().get()
    for name, (path, body) in _fenced_writes(late["id"], "exec-1", late["claim"]).items():
        body = assert_error_shape(api.post(path, body, format="json"), 409, "stale_claim")
        assert "claim" in body["message"].lower() and body["details"]["claim"] == late["claim"], name
        assert current["claim"] not in body["details"].values()  # the current value proves holding; never shown
    assert Task.objects.filter(pk=late["id"]).values().get() == before
    assert not TaskAttempt.objects.exists()
    for name, (path, body) in _fenced_writes(current["id"], current["claimed_by"], current["claim"]).items():
        if name not in ("release", "status"):  # both end the claim; checked last
            assert api.post(path, body, format="json").status_code in (200, 201), name


@pytest.mark.django_db
def test_without_the_claim_only_the_holders_agent_bound_token_acts(user, api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    claimed = _claim(api, session, "exec-1")
    for path, body in _fenced_writes(claimed["id"], "exec-1", None).values():
        assert_error_shape(api.post(path, body, format="json"), 409, "claim_required")
    holder = api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk, agent="exec-1")
    other = api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk, agent="exec-2")
    ApiToken.objects.update(last_used_at=timezone.now())
    holder_client = APIClient(HTTP_AUTHORIZATION=f"Bearer {holder.secret}")
    other_client = APIClient(HTTP_AUTHORIZATION=f"Bearer {other.secret}")
    beat = f"{TASKS}{claimed['id']}/heartbeat/"
    assert_error_shape(other_client.post(beat, {}, format="json"), 409, "not_claim_holder")
    assert_error_shape(other_client.post(beat, {"agent": "exec-1"}, format="json"), 409, "agent_mismatch")
    assert holder_client.post(beat, {}, format="json").status_code == 200
    report = holder_client.post(f"{TASKS}{claimed['id']}/report/", {"implementation_report": "done"}, format="json")
    assert report.status_code == 201 and report.json()["agent"] == "exec-1"
    done = holder_client.post(f"{TASKS}{claimed['id']}/status/", {"status": "completed"}, format="json")
    assert done.status_code == 200 and done.json()["claimed_by"] == ""


@pytest.mark.django_db
def test_a_patch_is_no_way_around_the_fence(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    claimed = _claim(api, session, "exec-1")
    assert_error_shape(api.patch(f"{TASKS}{claimed['id']}/", {"status": "completed"}, format="json"), 409,
                       "claim_required")
    assert api.patch(f"{TASKS}{claimed['id']}/", {"title": "Renamed"}, format="json").status_code == 200
    assert Task.objects.get(pk=claimed["id"]).status == "in_progress"


@pytest.mark.django_db
def test_a_claimed_task_is_deleted_only_under_its_current_claim(admin_client, api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    late = _claim(api, session, "exec-1")
    _expire(late["id"])
    current = _claim(api, session, "exec-2")
    url = f"{TASKS}{current['id']}/"
    assert_error_shape(api.delete(url), 409, "claim_required")
    assert_error_shape(api.delete(f"{url}?claim={late['claim']}"), 409, "stale_claim")
    assert_error_shape(api.delete(f"/api/v1/sessions/{session.pk}/tasks/task-1/"), 409, "claim_required")
    admin_client.post(f"/admin/sessions_app/task/{current['id']}/delete/", {"post": "yes"})  # refused: release it
    assert Task.objects.filter(pk=current["id"]).exists()
    assert api.delete(f"{url}?claim={current['claim']}").status_code == 204
    assert not Task.objects.filter(pk=current["id"]).exists()
    unclaimed = make_task(session, "task-2")
    assert_error_shape(api.delete(f"{TASKS}{unclaimed.pk}/?claim=1"), 409, "stale_claim")
    assert api.delete(f"{TASKS}{unclaimed.pk}/").status_code == 204


@pytest.mark.django_db
def test_an_unclaimed_task_takes_status_without_a_claim_and_refuses_a_stale_one(api: APIClient) -> None:
    session = make_session()
    task = make_task(session, "task-1")
    assert api.post(f"{TASKS}{task.pk}/status/", {"status": "blocked"}, format="json").status_code == 200
    assert_error_shape(api.post(f"{TASKS}{task.pk}/status/", {"status": "completed", "claim": 0}, format="json"),
                       409, "stale_claim")


# -- expired leases -----------------------------------------------------------------------------

@pytest.mark.django_db
def test_an_expired_lease_returns_the_task_to_the_ready_pool_with_a_ledger_event(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1", task_type="parallelizable")
    make_task(session, "task-2", task_type="parallelizable")
    expired, live = _claim(api, session, "exec-1"), _claim(api, session, "exec-2")
    _expire(expired["id"])
    assert task_leases_expire() == 1
    task = Task.objects.get(pk=expired["id"])
    assert (task.status, task.claimed_by, task.lease_expires_at, task.claim) == ("not_started", "", None, 1)
    assert Task.objects.get(pk=live["id"]).claimed_by == "exec-2"
    event = LedgerEvent.objects.get(type="lease_expired")
    assert (event.agent, event.task_key, event.session_id) == ("exec-1", "task-1", session.pk)
    assert "claim" not in event.data  # the value proves holding: never in the record
    assert task_leases_expire() == 0
    assert_error_shape(api.post(f"{TASKS}{task.pk}/heartbeat/", {"agent": "exec-1", "claim": 1}, format="json"),
                       409, "stale_claim")


@pytest.mark.django_db
def test_claim_task_returns_expired_leases_of_its_session_itself_with_the_same_event(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    first = _claim(api, session, "exec-1")
    _expire(first["id"])
    again = _claim(api, session, "exec-2")
    assert (again["id"], again["claim"]) == (first["id"], 2)
    assert list(LedgerEvent.objects.filter(session=session).order_by("id").values_list("type", "agent")) == [
        ("task_claimed", "exec-1"), ("lease_expired", "exec-1"), ("task_claimed", "exec-2")]


def test_the_sweep_is_an_exclusive_upkeep_job() -> None:
    job = upkeep_jobs._jobs["task_leases_expire"]
    assert job.run is task_leases_expire and job.exclusive and job.every_seconds > 0


@pytest.mark.django_db(transaction=True)
def test_the_upkeep_thread_sweeps_expired_leases_without_a_caller(token: MintedToken) -> None:
    session = make_session()
    make_task(session, "task-1")
    client = APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}")
    claimed = _claim(client, session, "exec-1")
    _expire(claimed["id"])
    thread = upkeep.UpkeepThread()
    thread.tick(0.0)  # the first tick runs every job (none has run yet), on this thread's connection
    assert Task.objects.get(pk=claimed["id"]).status == "not_started"
    assert LedgerEvent.objects.filter(type="lease_expired", agent="exec-1").count() == 1


# -- under real concurrency ---------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_a_late_holder_racing_a_new_claimer_never_both_win(token: MintedToken) -> None:
    """Eight rounds: the holder of an expired lease reports completion while another agent claims the
    task, in two threads released together. The lease is expired at the request whoever is first (issue
    #27 §2): the late holder gets stale_claim (`expired`) and changes nothing, and the claimer gets the
    task; never both, never neither (the claimer waits for the late holder's refused write)."""
    session = make_session(max_concurrency=1)
    client = APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}")
    for round_ in range(8):
        make_task(session, f"task-{round_}")
        late = _claim(client, session, "exec-late")
        _expire(late["id"])

        def race(api: APIClient, index: int, late: dict[str, Any] = late) -> tuple[int, str]:
            if index == 0:
                response = api.post(f"{TASKS}{late['id']}/status/",
                                    {"agent": "exec-late", "claim": late["claim"], "status": "completed"},
                                    format="json")
            else:
                response = api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "exec-new"},
                                    format="json")
            return response.status_code, response.json().get("code", "")

        (late_status, late_code), (claim_status, claim_code) = api_in_threads(2, token, race)
        task = Task.objects.get(pk=late["id"])
        assert (late_status, late_code, claim_status) == (409, "stale_claim", 200), claim_code
        assert (task.status, task.claimed_by, task.claim) == ("in_progress", "exec-new", late["claim"] + 1)
        Task.objects.filter(pk=task.pk).update(status="completed", claimed_by="", lease_expires_at=None)
