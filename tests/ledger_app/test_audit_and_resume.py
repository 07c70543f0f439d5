"""The ledger as sessions_app calls it (the port `sessions_app.ledger`): audit events and resume points."""

import pytest
from django.db import transaction
from django.test import Client
from rest_framework.test import APIClient

from ledger_app.models import Checkpoint, LedgerEvent
from ledger_app.sessions_ledger import SessionsLedger
from sessions_app.ledger import ledger
from sessions_app.models import Session
from sessions_app.services.sessions import session_update
from tests.ledger_app.factories import make_session

pytestmark = pytest.mark.django_db


def test_it_is_the_ledger_sessions_app_calls() -> None:
    assert isinstance(ledger(), SessionsLedger)


def test_it_a_state_change_through_the_api_is_recorded_as_an_audit_event(api: APIClient) -> None:
    session = make_session()
    response = api.patch(f"/api/v1/sessions/{session.id}/", {"state": "planning"}, format="json")
    assert response.status_code == 200, response.content
    event = LedgerEvent.objects.get(session=session)
    assert (event.type, event.category) == ("session_state_changed", "orchestration")
    assert event.data == {"from": "initializing", "to": "planning"}


def test_it_the_audit_event_shares_the_callers_transaction() -> None:
    session = make_session()
    with pytest.raises(RuntimeError), transaction.atomic():
        session_update(session=session, data={"state": "executing_batch"})
        assert LedgerEvent.objects.filter(session=session).count() == 1
        raise RuntimeError("the change fails after the audit event")
    assert not LedgerEvent.objects.filter(session=session).exists()
    assert Session.objects.get(pk=session.id).state == "initializing"


@pytest.mark.parametrize("event_type", ["task_status_changed", "task_claimed", "task_released", "signal_processed",
                                        "question_answered", "session_resumed", "session_finished"])
def test_it_every_orchestration_event_type_is_recorded(event_type: str) -> None:
    session = make_session()
    ledger().event_append(session_id=session.id, event_type=event_type, task_key="task-1", agent="executor",
                          message="m", data={"k": 1})
    event = LedgerEvent.objects.get(session=session)
    assert (event.type, event.task_key, event.agent, event.data) == (event_type, "task-1", "executor", {"k": 1})


def test_it_answers_the_last_checkpoint_of_the_session_as_the_api_shows_it() -> None:
    session = make_session()
    assert ledger().checkpoint_last(session_id=session.id) is None
    Checkpoint.objects.create(key="chkpt-1", session=session, task_key="auth-001")
    Checkpoint.objects.create(key="chkpt-2", session=session, task_key="auth-002", git_ref="abc")
    Checkpoint.objects.create(key="chkpt-other", session=make_session())
    checkpoint = ledger().checkpoint_last(session_id=session.id)
    assert checkpoint is not None and checkpoint["key"] == "chkpt-2"
    assert checkpoint["task_key"] == "auth-002" and checkpoint["git_ref"] == "abc"


# -- admin -----------------------------------------------------------------------------------

def test_it_the_admin_shows_events_read_only_with_pretty_json(admin_client: Client) -> None:
    event = LedgerEvent.objects.create(session=make_session(), type="run_started", data={"nested": {"a": 1}})
    page = admin_client.get(f"/admin/ledger_app/ledgerevent/{event.id}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<pre" in html and "&quot;nested&quot;: {" in html
    assert 'name="_save"' not in html  # viewed, not edited
    assert admin_client.get("/admin/ledger_app/ledgerevent/add/").status_code == 403
    assert admin_client.post(f"/admin/ledger_app/ledgerevent/{event.id}/delete/", {"post": "yes"}).status_code == 403
    listing = admin_client.get("/admin/ledger_app/ledgerevent/", {"type": "run_started", "session": event.session_id})
    assert listing.status_code == 200 and "run_started" in listing.content.decode()


def test_it_the_admin_shows_token_usage_and_cost_by_model_and_by_day(admin_client: Client) -> None:
    from decimal import Decimal

    from ledger_app.models import TokenUsage
    from tests.ledger_app.factories import utc

    for model, cost, at in (("sonnet", "0.5", "2025-03-01T10:00:00Z"), ("sonnet", "0.25", "2025-03-02T10:00:00Z"),
                            ("opus", "2", "2025-03-02T11:00:00Z")):
        TokenUsage.objects.create(model=model, input_tokens=100, cost_usd=Decimal(cost), recorded_at=utc(at))
    page = admin_client.get("/admin/ledger_app/tokenusage/")
    assert page.status_code == 200
    by_model = {row["model"]: row for row in page.context["usage_by_model"]}
    assert by_model["sonnet"]["cost_usd"] == Decimal("0.75") and by_model["opus"]["calls"] == 1
    by_day = [(str(row["day"]), row["cost_usd"], row["calls"]) for row in page.context["usage_by_day"]]
    assert by_day == [("2025-03-02", Decimal("2.25"), 2), ("2025-03-01", Decimal("0.5"), 1)]
    assert "Usage by model" in page.content.decode()
    filtered = admin_client.get("/admin/ledger_app/tokenusage/", {"model": "opus"})
    assert [row["model"] for row in filtered.context["usage_by_model"]] == ["opus"]


def test_it_the_admin_retries_the_selected_due_dead_letters(admin_client: Client) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from ledger_app.models import DeadLetter

    due = DeadLetter.objects.create(operation_type="push", retry_after=timezone.now() - timedelta(minutes=1))
    later = DeadLetter.objects.create(operation_type="push", retry_after=timezone.now() + timedelta(hours=1))
    response = admin_client.post("/admin/ledger_app/deadletter/", {"action": "retry_selected",
                                                                   "_selected_action": [due.id, later.id]})
    assert response.status_code == 302
    due.refresh_from_db()
    later.refresh_from_db()
    assert (due.status, due.attempt_count, later.status) == ("retried", 2, "pending")
