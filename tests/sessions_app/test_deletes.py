"""Deletes as the seeds say (issue #15 §1): task dependencies are Restrict (seed 000); a finished
session is deleted with its seed 003 cascade, its ledger events through the retention path, and the
rows seed 003 keeps without a foreign key survive it."""

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from ledger_app.models import Checkpoint, DeadLetter, ErrorLog, LedgerEvent, Rollback, TokenUsage
from ralphsite.console.dashboard import usage_charts
from sessions_app.models import Iteration, Session, Task, TaskDependency
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import get_stat, make_event
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

TASKS = "/api/v1/tasks/"


def test_deleting_a_task_others_depend_on_is_a_409_naming_them(api: APIClient) -> None:
    session = make_session()
    first = make_task(session, "task-1", status="in_progress", claimed_by="exec-1")
    make_task(session, "task-2", depends_on=(first,))
    make_task(session, "task-3", depends_on=(first,))
    body = assert_error_shape(api.delete(f"{TASKS}{first.pk}/"), 409, "has_dependents")
    assert body["details"] == {"task": "task-1", "dependents": ["task-2", "task-3"]}
    assert "task-2" in body["message"] and "task-3" in body["message"]
    assert TaskDependency.objects.count() == 2
    # The dependents did not become claimable: their dependency is still there, in progress.
    refusal: dict[str, Any] = api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "a"},
                                       format="json").json()
    assert (refusal["details"]["reason"], refusal["details"]["ready"]) == ("waiting", [])


def test_a_task_whose_dependents_are_gone_or_replanned_can_be_deleted(api: APIClient) -> None:
    session = make_session()
    first = make_task(session, "task-1")
    second = make_task(session, "task-2", depends_on=(first,))
    third = make_task(session, "task-3", depends_on=(first,))
    assert api.delete(f"{TASKS}{second.pk}/").status_code == 204  # its own edge goes with it
    assert api.patch(f"{TASKS}{third.pk}/", {"depends_on": []}, format="json").status_code == 200
    assert api.delete(f"{TASKS}{first.pk}/").status_code == 204
    assert list(Task.objects.values_list("key", flat=True)) == ["task-3"]


# -- deleting a session (seed 003's cascade table; the ledger through its retention path) -----------

def _finished_session_with_history(api: APIClient) -> Session:
    """A session with ledger events, cascaded rows and every row seed 003 keeps, then finished."""
    session = make_session()
    for body in ({"type": "task_started", "message": "hello"},
                 {"type": "x-llm-call", "model": "m1", "tokens_in": 10, "tokens_out": 5, "cost_usd": "0.010000"}):
        assert api.post("/api/v1/events/", {"session": session.pk, **body}, format="json").status_code == 201
    assert api.post("/api/v1/token-usage/", {"session": session.pk, "model": "m1", "input_tokens": 100,
                                             "output_tokens": 20, "cost_usd": "0.076000"},
                    format="json").status_code == 201
    ErrorLog.objects.create(session=session, error_type="transient", error_message="timeout")
    DeadLetter.objects.create(session=session, operation_type="push")
    Checkpoint.objects.create(session=session, key=f"chk-{session.pk}")
    Rollback.objects.create(session=session, rollback_type="soft", target_commit="abc123")
    assert api.post(f"/api/v1/sessions/{session.pk}/finish/", {"status": "completed"},
                    format="json").status_code == 200
    return session


def _cost_history(api: APIClient) -> dict[str, Any]:
    """The figures a session's deletion must not change: cost per day and per model, and the dashboard's."""
    models = [{key: row[key] for key in ("model", "tokens_input", "tokens_output", "cost_cents")}
              for row in get_stat(api, "model-usage")]
    charts = usage_charts(today=timezone.now().date())
    return {"daily": get_stat(api, "daily-cost"), "models": models, "dashboard": (
        charts["total_cost"], charts["total_tokens"],
        [(m["model"], m["calls"], m["tokens"], m["cost_usd"]) for m in charts["cost_by_model"]])}


KEPT_MODELS = (TokenUsage, ErrorLog, DeadLetter, Checkpoint, Rollback)


@pytest.mark.parametrize("via", ["api", "admin"])
def test_deleting_a_finished_session_purges_its_ledger_with_a_record_and_keeps_history(
        api: APIClient, admin_client: Client, via: str) -> None:
    session = _finished_session_with_history(api)
    other = make_session()
    make_event(other)
    events = LedgerEvent.objects.filter(session=session.pk).count()
    before = _cost_history(api)
    if via == "api":
        assert api.delete(f"/api/v1/sessions/{session.pk}/").status_code == 204
    else:
        response = admin_client.post(f"/admin/sessions_app/session/{session.pk}/delete/", {"post": "yes"})
        assert response.status_code == 302, response.content
    assert not Session.objects.filter(pk=session.pk).exists()
    assert not Iteration.objects.filter(session=session.pk).exists()  # cascaded, as seed 003 says
    assert not LedgerEvent.objects.filter(session=session.pk).exists()
    assert LedgerEvent.objects.filter(session=other.pk).count() == 1
    record = LedgerEvent.objects.get(type="ledger_purged")
    assert record.data["sessions"] == [session.pk] and record.data["events_removed"] == events
    assert session.pk in record.data["reason"]
    for model in KEPT_MODELS:
        assert set(model.objects.values_list("session", flat=True)) == {None}, model.__name__
    assert _cost_history(api) == before
    out = StringIO()
    call_command("ledger_verify", stdout=out)  # the chain bridges the hole with the record (else it raises)
    assert f"retention record #{record.id}" in out.getvalue()


def test_deleting_a_running_session_is_a_409_in_the_api_and_refused_in_the_admin(
        api: APIClient, admin_client: Client) -> None:
    session = make_session()
    make_event(session)
    body = assert_error_shape(api.delete(f"/api/v1/sessions/{session.pk}/"), 409, "session_running")
    assert body["details"] == {"session": session.pk, "status": "running"}
    response = admin_client.post(f"/admin/sessions_app/session/{session.pk}/delete/", {"post": "yes"}, follow=True)
    assert "finish it before deleting it" in response.content.decode()
    assert Session.objects.filter(pk=session.pk).exists()
    assert LedgerEvent.objects.filter(session=session.pk).count() == 1
    assert not LedgerEvent.objects.filter(type="ledger_purged").exists()


def test_a_deleted_sessions_tasks_are_kept_without_a_session_and_none_in_progress(api: APIClient) -> None:
    """Issue #28 §5: a task stayed `in_progress` (and claimed) with no session to finish it."""
    session = make_session(status="completed", ended_at=timezone.now())
    running = make_task(session, "task-1", status="in_progress")
    Task.objects.filter(pk=running.pk).update(claimed_by="exec-1")
    done = make_task(session, "task-2", status="completed")
    assert api.delete(f"/api/v1/sessions/{session.pk}/").status_code == 204
    kept = {task["key"]: task for task in api.get(TASKS).json()["results"]}
    assert {key: (task["session"], task["status"], task["claimed_by"]) for key, task in kept.items()} == {
        "task-1": (None, "cancelled", ""), "task-2": (None, "completed", "")}
    assert done.pk in {task["id"] for task in kept.values()}
    # and the schema says an answer's `session` may be null, while a new task still needs one
    components = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    assert components["Task"]["properties"]["session"]["nullable"] is True
    assert "nullable" not in components["TaskRequest"]["properties"]["session"]
    assert "session" in components["TaskRequest"]["required"]
