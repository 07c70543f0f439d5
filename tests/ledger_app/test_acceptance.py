"""Seed 001's acceptance criteria, one test each, plus totals after a mixed workload."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import Sum
from rest_framework.test import APIClient

from ledger_app.models import Checkpoint, Issue, LedgerEvent, TokenUsage
from sessions_app.models import Session, Task
from tests.ledger_app.factories import make_session

pytestmark = pytest.mark.django_db


def test_it_ac1_the_database_is_created_on_first_run() -> None:
    # The test database is created from nothing by running every migration, as `make run` does.
    tables = set(connection.introspection.table_names())
    assert {"ledger_app_ledgerevent", "ledger_app_issue", "ledger_app_checkpoint"} <= tables


@pytest.mark.parametrize(("model", "seed_columns"), [
    (LedgerEvent, ["id", "session_id", "timestamp", "type", "task_key", "phase", "duration_ms", "tokens_in",
                   "tokens_out", "tokens_total", "cost_usd", "is_estimated", "meta"]),
    (Issue, ["id", "session_id", "task_key", "kind", "signature", "message", "file", "line", "first_seen_at",
             "last_seen_at", "count"]),
    (Checkpoint, ["id", "key", "session_id", "task_key", "git_ref", "summary", "created_at"]),
], ids=["ledger", "issues", "checkpoints"])
def test_it_ac2_every_table_has_the_seed_columns(model, seed_columns: list[str]) -> None:
    with connection.cursor() as cursor:
        columns = {c.name for c in connection.introspection.get_table_description(cursor, model._meta.db_table)}
    assert set(seed_columns) <= columns


def test_it_ac3_ledger_events_are_append_only(api: APIClient) -> None:
    event = LedgerEvent.objects.create(session=make_session(), type="backend_call_finished")
    assert api.patch(f"/api/v1/events/{event.id}/", {"type": "run_started"}, format="json").status_code == 405
    assert api.delete(f"/api/v1/events/{event.id}/").status_code == 405
    # The database-level proof is in test_append_only.py.


def test_it_ac4_issues_are_deduplicated_by_signature(api: APIClient) -> None:
    session = make_session()
    body = {"session": session.id, "task_key": "auth-002", "kind": "typecheck",
            "signature": "typecheck:src/api.ts:42:...", "message": "m"}
    for _ in range(3):
        api.post("/api/v1/issues/record/", body, format="json")
    assert Issue.objects.get().count == 3


@pytest.mark.django_db(transaction=True)
def test_it_ac5_run_state_persists_across_restarts(api: APIClient) -> None:
    session_id = api.post("/api/v1/sessions/", {"user_request": "build auth"}, format="json").json()["id"]
    api.post("/api/v1/events/", {"session": session_id, "type": "task_started", "task_key": "auth-002"}, format="json")
    connection.close()  # a restart: a new connection sees the committed state
    session = Session.objects.get(pk=session_id)
    assert session.status == "running"
    last = LedgerEvent.objects.filter(session=session).order_by("-id").first()
    assert (last.type, last.task_key) == ("task_started", "auth-002")


def test_it_keeps_totals_equal_to_the_sums_of_their_rows_after_a_mixed_workload(api: APIClient) -> None:
    session = make_session()
    task = Task.objects.create(session=session, key="task-1", title="t")
    events = [{"session": session.id, "type": "backend_call_finished", "tokens_in": i, "tokens_out": 2 * i,
               "cost_usd": f"0.00{i}"} for i in range(1, 8)]
    assert api.post("/api/v1/events/", events[:4], format="json").status_code == 201
    assert api.post("/api/v1/events/", events[4], format="json").status_code == 201
    api.post("/api/v1/events/", [*events[5:], {"session": session.id, "type": "bogus"}], format="json")
    api.post("/api/v1/token-usage/", [{"session": session.id, "model": "m", "input_tokens": 100, "output_tokens": 7,
                                       "cost_usd": "0.333333"}] * 3, format="json")
    api.post("/api/v1/token-usage/", {"session": session.id, "model": "m", "input_tokens": -1}, format="json")
    attempt = api.post("/api/v1/task-attempts/", {"task": task.id, "attempt_number": 1, "tokens_input": 40,
                                                  "tokens_output": 4, "cost_usd": "0.040000"}, format="json")
    assert attempt.status_code == 201, attempt.content
    invocation = api.post("/api/v1/agent-invocations/", {"session": session.id, "agent": "executor", "prompt": "p",
                                                         "tokens_input": 500, "tokens_output": 50,
                                                         "cost_usd": "0.500000"}, format="json")
    assert invocation.status_code == 201, invocation.content
    # A correction moves the totals by the difference, not by the whole amount again.
    changed = api.patch(f"/api/v1/agent-invocations/{invocation.json()['id']}/",
                        {"tokens_input": 600, "cost_usd": "0.700000"}, format="json")
    assert changed.status_code == 200, changed.content
    api.patch(f"/api/v1/sessions/{session.id}/", {"state": "planning"}, format="json")  # audit event, no usage
    api.post("/api/v1/issues/record/", {"session": session.id, "task_key": "task-1", "kind": "lint",
                                        "signature": "lint:a", "message": "m"}, format="json")  # no usage either

    session = Session.objects.get(pk=session.id)
    # Every call the four paths reported is one token usage row (issue #15 §3): the totals are their sums.
    calls = TokenUsage.objects.filter(session=session)
    assert sorted(calls.values_list("source", flat=True)) == ["attempt"] + ["event"] * 7 + ["invocation"] + [
        "token_usage"] * 3
    sums = [calls.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_usd"))]
    assert session.total_tokens_input == sum(row["i"] for row in sums) == 28 + 300 + 40 + 600
    assert session.total_tokens_output == sum(row["o"] for row in sums) == 56 + 21 + 4 + 50
    assert session.total_cost_usd == sum(Decimal(row["c"]) for row in sums) == (
        Decimal("0.028") + Decimal("0.999999") + Decimal("0.04") + Decimal("0.7"))
