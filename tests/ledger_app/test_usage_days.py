"""The daily usage rollup equals the usage rows' sums whatever writes them, under concurrent writers
too, and the console's cost pages read it instead of aggregating every call."""

from collections import defaultdict
from datetime import UTC, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app import selectors, services
from ledger_app.append_only import installed_triggers
from ledger_app.models import TokenUsage, UsageDay
from ledger_app.usage_days import SUMMED, TRIGGER_NAMES, USAGE_TABLE, usage_days_rebuild
from sessions_app.models import SessionStatus
from sessions_app.services.sessions import session_delete
from tests.concurrency import in_threads
from tests.ledger_app.factories import make_session, utc

COST_VIEW = "/admin/ledger_app/tokenusage/"


def sums_of_the_rows() -> dict[tuple[Any, str, str], tuple]:
    sums: dict[tuple[Any, str, str], list] = defaultdict(lambda: [0] * (1 + len(SUMMED)))
    for row in TokenUsage.objects.all():
        totals = sums[(row.recorded_at.astimezone(UTC).date(), row.model, row.agent)]
        totals[0] += 1
        for index, name in enumerate(SUMMED, start=1):
            totals[index] += getattr(row, name)
    return {key: tuple(totals) for key, totals in sums.items()}


def the_rollup() -> dict[tuple[Any, str, str], tuple]:
    return {(row.day, row.model, row.agent): (row.calls, *(getattr(row, name) for name in SUMMED))
            for row in selectors.usage_day_list()}


def usage(session: Any, model: str, agent: str, at: str, cost: str, tokens: int = 100, **extra: Any) -> TokenUsage:
    return TokenUsage(session=session, model=model, agent=agent, recorded_at=utc(at), cost_usd=Decimal(cost),
                      input_tokens=tokens, output_tokens=tokens // 10, cached_read_tokens=tokens * 2, **extra)


@pytest.mark.django_db
def test_it_sums_every_row_whatever_writes_it(api: APIClient) -> None:
    loop, other = make_session(), make_session()
    usage(loop, "opus", "exec-1", "2025-03-01T23:59:59.999999Z", "0.000001").save()  # the last moment of a UTC day
    TokenUsage.objects.bulk_create([usage(loop, "opus", "exec-1", "2025-03-02T00:00:00Z", "1.5"),
                                    usage(other, "opus", "exec-1", "2025-03-02T12:00:00Z", "0.25", tokens=7),
                                    usage(other, "sonnet", "", "2025-03-02T12:00:00Z", "0.1")])
    posted = api.post("/api/v1/token-usage/", [
        {"session": loop.pk, "model": "opus", "agent": "exec-1", "input_tokens": 5, "output_tokens": 1,
         "cost_usd": "0.000003", "recorded_at": "2025-03-02T08:00:00Z", "request_id": "r-1"},
        {"session": loop.pk, "model": "opus", "agent": "exec-1", "input_tokens": 5, "output_tokens": 1,
         "cost_usd": "0.000003", "recorded_at": "2025-03-02T08:00:00Z", "request_id": "r-1"}], format="json")
    assert posted.status_code == 201, posted.content  # the repeated request id is one call
    run = api.post("/api/v1/agent-invocations/", {"session": other.pk, "agent": "reviewer", "model": "haiku",
                                                   "tokens_input": 9, "tokens_output": 1, "cost_usd": "0.02"},
                   format="json").json()
    assert the_rollup() == sums_of_the_rows()

    api.patch(f"/api/v1/agent-invocations/{run['id']}/", {"tokens_input": 90, "model": "sonnet"}, format="json")
    assert the_rollup() == sums_of_the_rows()
    TokenUsage.objects.filter(model="sonnet", agent="").update(recorded_at=utc("2025-03-05T00:00:00Z"))
    assert the_rollup() == sums_of_the_rows()
    assert api.delete(f"/api/v1/agent-invocations/{run['id']}/").status_code == 204
    assert the_rollup() == sums_of_the_rows()

    other.status = SessionStatus.COMPLETED
    other.save(update_fields=["status"])
    session_delete(session=other)  # its calls stay, the session set to null: the rollup is unchanged
    assert TokenUsage.objects.filter(session__isnull=True).count() == 2
    rollup = the_rollup()
    assert rollup == sums_of_the_rows()
    assert rollup[(utc("2025-03-02T00:00:00Z").date(), "opus", "exec-1")][:2] == (3, 112)
    assert usage_days_rebuild() == len(rollup) and the_rollup() == rollup


@pytest.mark.django_db
def test_its_triggers_are_in_place_after_every_migration() -> None:
    assert TRIGGER_NAMES[connection.vendor] <= installed_triggers(connection, USAGE_TABLE)


@pytest.mark.django_db(transaction=True)
def test_its_migration_fills_it_from_the_rows_and_reverses() -> None:
    session = make_session()
    TokenUsage.objects.bulk_create([usage(session, "opus", "a", "2025-03-01T10:00:00Z", "0.5"),
                                    usage(session, "opus", "a", "2025-03-01T11:00:00Z", "0.25")])
    call_command("migrate", "ledger_app", "0007", verbosity=0)
    assert not TRIGGER_NAMES[connection.vendor] & installed_triggers(connection, USAGE_TABLE)
    call_command("migrate", "ledger_app", verbosity=0)
    assert the_rollup() == sums_of_the_rows() != {}


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_lose_no_call() -> None:
    session_ids = [make_session().pk for _ in range(4)]
    now = timezone.now()

    def record(index: int) -> None:
        for call in range(10):
            with transaction.atomic():  # the caller's transaction, as every service that records a call
                services.usage_record(items=[{"session_id": session_ids[index % 4], "model": "opus", "agent": "exec",
                                              "input_tokens": 10, "output_tokens": 1,
                                              "cost_usd": Decimal("0.000011"), "recorded_at": now,
                                              "request_id": f"{index}-{call}"}])

    in_threads(8, record)
    [day] = UsageDay.objects.all()
    assert (day.calls, day.input_tokens, day.output_tokens, day.cost_usd) == (80, 800, 80, Decimal("0.000880"))


@pytest.mark.django_db
def test_the_cost_view_and_the_dashboard_read_the_rollup_not_every_call(admin_client: Client) -> None:
    loop = make_session()
    today = timezone.now().replace(hour=12)
    TokenUsage.objects.bulk_create(
        [usage(loop, model, "exec-1", (today - timedelta(days=offset)).isoformat(), "0.5")
         for offset in range(3) for model in ("opus", "sonnet")])
    since = (today - timedelta(days=1)).date().isoformat()
    for selection in ({}, {"model": "opus"}, {"recorded_at__since": since}):
        with CaptureQueriesContext(connection) as queries:
            page = admin_client.get(COST_VIEW, selection)
        assert page.status_code == 200
        aggregates = [q["sql"] for q in queries if "GROUP BY" in q["sql"]]
        assert len(aggregates) == 3 and all(USAGE_TABLE not in sql for sql in aggregates), aggregates
        rows = page.context["cl"].queryset
        assert page.context["usage_by_model"] == selectors.token_usage_by(usage=rows, field="model")
        assert page.context["usage_by_day"] == selectors.token_usage_by_day(usage=rows, days=31)

    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get(COST_VIEW, {"session": loop.pk})  # the rollup has no sessions: the rows
    assert all(USAGE_TABLE in q["sql"] for q in queries if "GROUP BY" in q["sql"])
    assert sum(row["calls"] for row in page.context["usage_by_model"]) == 6

    with CaptureQueriesContext(connection) as queries:
        assert admin_client.get("/admin/").status_code == 200
    assert not [q["sql"] for q in queries if "GROUP BY" in q["sql"] and USAGE_TABLE in q["sql"]]
