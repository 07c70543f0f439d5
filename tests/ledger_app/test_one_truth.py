"""One truth for tokens and cost (issue #15 §3): every provider call is one row of token usage,
whichever path reports it, counted once per request id within a session; every figure is a sum of
those rows, so they all agree; money is exact on both backends."""

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import ModelPrice, TokenUsage
from ralphsite.console.dashboard import usage_charts
from ralphsite.core.money import usd_max
from sessions_app.models import Session
from tests.ledger_app.factories import get_all_sources, get_stat
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db


def _post(api: APIClient, url: str, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
    response = api.post(url, body, format="json")
    assert response.status_code == status, response.content
    return response.json()


def _event(api: APIClient, session: Session, request_id: str, tokens: tuple[int, int], cost: str,
           agent: str = "coder") -> None:
    _post(api, "/api/v1/events/", {"session": session.pk, "type": "x-llm-call", "model": "m1", "agent": agent,
                                   "tokens_in": tokens[0], "tokens_out": tokens[1], "cost_usd": cost,
                                   "request_id": request_id})


def _usage(api: APIClient, session: Session, request_id: str, tokens: tuple[int, int], cost: str | None,
           **extra: Any) -> dict[str, Any]:
    body = {"session": session.pk, "model": "m1", "agent": "coder", "input_tokens": tokens[0],
            "output_tokens": tokens[1], "request_id": request_id, **extra}
    return _post(api, "/api/v1/token-usage/", body if cost is None else {**body, "cost_usd": cost})


def _attempt(api: APIClient, session: Session, key: str, request_id: str, tokens: tuple[int, int],
             cost: str) -> None:
    task = make_task(session, key)
    _post(api, "/api/v1/task-attempts/", {"task": task.pk, "model": "m1", "agent": "coder", "tokens_input": tokens[0],
                                          "tokens_output": tokens[1], "cost_usd": cost, "request_id": request_id})


def _invocation(api: APIClient, session: Session, request_id: str, tokens: tuple[int, int], cost: str,
                agent: str = "coder") -> dict[str, Any]:
    return _post(api, "/api/v1/agent-invocations/", {
        "session": session.pk, "agent": agent, "model": "m1", "tokens_input": tokens[0], "tokens_output": tokens[1],
        "cost_usd": cost, "request_id": request_id})


@pytest.fixture
def calls(api: APIClient) -> tuple[Session, Session]:
    """Six provider calls in two sessions, most of them reported through several paths."""
    now = timezone.now()
    ModelPrice.objects.create(model="m1", valid_from=now - timedelta(days=30), input_per_mtok=3, output_per_mtok=15,
                              cached_read_per_mtok=Decimal("0.3"), cached_write_per_mtok=Decimal("3.75"),
                              reasoning_per_mtok=15)
    ModelPrice.objects.create(model="m1", valid_from=now - timedelta(hours=1), input_per_mtok=6, output_per_mtok=30,
                              cached_read_per_mtok=Decimal("0.6"), cached_write_per_mtok=Decimal("7.5"),
                              reasoning_per_mtok=30)
    s1, s2 = make_session(), make_session()
    # req-1: one call reported through all four paths (the event first): counted once.
    _event(api, s1, "req-1", (100, 20), "0.070000")
    _usage(api, s1, "req-1", (100, 20), "0.070000")
    _attempt(api, s1, "task-1", "req-1", (100, 20), "0.070000")
    _invocation(api, s1, "req-1", (100, 20), "0.070000")
    # req-2: an invocation started without usage, completed with it, then reported as token usage.
    run = _invocation(api, s1, "req-2", (0, 0), "0", agent="reviewer")
    _post(api, f"/api/v1/agent-invocations/{run['id']}/complete/",
          {"status": "completed", "tokens_input": 1000, "tokens_output": 200, "cost_usd": "0.500000"}, status=200)
    _usage(api, s1, "req-2", (1000, 200), "0.500000")
    _event(api, s1, "req-2", (1000, 200), "0.500000", agent="reviewer")
    # req-3 and req-4: priced from the model price in force at the call's time, every kind apart.
    priced = {"cached_read_tokens": 100_000, "cached_write_tokens": 8_000, "reasoning_tokens": 2_000}
    _usage(api, s2, "req-3", (10_000, 2_000), None, recorded_at=(now - timedelta(hours=2)).isoformat(), **priced)
    _usage(api, s2, "req-4", (10_000, 2_000), None, **priced)
    # Without a request id every report is a call of its own.
    _attempt(api, s2, "task-2", "", (7, 3), "0.010000")
    _event(api, s2, "", (5, 5), "0.020000")
    return s1, s2


EXPECTED_CENTS = 7 + 50 + 15 + 30 + 1 + 2
EXPECTED_TOKENS = 120 + 1200 + 12_000 + 12_000 + 10 + 10


def test_it_counts_a_call_once_whatever_paths_report_it(calls: tuple[Session, Session]) -> None:
    s1, s2 = calls
    assert TokenUsage.objects.count() == 6
    assert sorted(TokenUsage.objects.values_list("request_id", "source")) == [
        ("", "attempt"), ("", "event"), ("req-1", "token_usage"), ("req-2", "token_usage"), ("req-3", "token_usage"),
        ("req-4", "token_usage")]  # a call token usage reported is token usage, whichever path came first
    s1.refresh_from_db()
    s2.refresh_from_db()
    assert (s1.total_tokens_input, s1.total_tokens_output, s1.total_cost_usd) == (1100, 220, Decimal("0.570000"))
    assert (s2.total_tokens_input, s2.total_tokens_output, s2.total_cost_usd) == (20_012, 4_008, Decimal("0.480000"))


def test_it_prices_each_kind_of_token_at_the_price_in_force_at_the_call(calls: tuple[Session, Session]) -> None:
    costs = dict(TokenUsage.objects.filter(request_id__in=["req-3", "req-4"]).values_list("request_id", "cost_usd"))
    assert costs == {"req-3": Decimal("0.150000"), "req-4": Decimal("0.300000")}
    assert set(TokenUsage.objects.filter(request_id="req-3").values_list(
        "input_tokens", "cached_read_tokens", "cached_write_tokens", "reasoning_tokens")) == {(10_000, 100_000, 8_000,
                                                                                            2_000)}


def test_every_figure_agrees_with_every_other(api: APIClient, calls: tuple[Session, Session]) -> None:
    sessions = Session.objects.filter(pk__in=[s.pk for s in calls])
    summary = get_stat(api, "session-summary")
    per_session = get_all_sources(api, "session-cost")
    per_day = get_all_sources(api, "daily-cost")
    per_model = get_all_sources(api, "model-usage")
    per_agent = get_all_sources(api, "agent-performance")
    charts = usage_charts(today=timezone.now().date())
    to_cents = Decimal(100)

    usd_totals = [sum((Decimal(row["total_cost_usd"]) for row in per_session), Decimal(0)),
                  sum((Decimal(row["total_cost_usd"]) for row in per_day), Decimal(0)),
                  sum((s.total_cost_usd for s in sessions), Decimal(0)), charts["total_cost"]]
    cents = [int(total * to_cents) for total in usd_totals]
    cents += [sum(row["cost_cents"] for row in per_model), sum(row["total_cost_cents"] for row in per_agent),
              int(sum((Decimal(row["total_cost_dollars"]) for row in summary), Decimal(0)) * to_cents)]
    assert cents == [EXPECTED_CENTS] * 7

    tokens = [sum(row["total_tokens"] for row in per_session), sum(row["total_tokens"] for row in per_day),
              sum(row["total_tokens"] for row in summary), charts["total_tokens"],
              sum(row["tokens_input"] + row["tokens_output"] for row in per_model),
              sum(s.total_tokens_input + s.total_tokens_output for s in sessions)]
    assert tokens == [EXPECTED_TOKENS] * 6
    assert sum(row["api_calls"] for row in per_session) == sum(row["api_calls"] for row in per_day) == 6
    assert {row["agent"]: row["total_cost_cents"] for row in per_agent} == {"coder": 55, "reviewer": 50}


def test_a_changed_or_deleted_report_moves_its_call(api: APIClient, calls: tuple[Session, Session]) -> None:
    s1, _ = calls
    run = _invocation(api, s1, "req-9", (10, 10), "0.010000")
    assert api.patch(f"/api/v1/agent-invocations/{run['id']}/", {"tokens_input": 30, "cost_usd": "0.030000"},
                     format="json").status_code == 200
    s1.refresh_from_db()
    assert (s1.total_tokens_input, s1.total_cost_usd) == (1130, Decimal("0.600000"))
    assert api.delete(f"/api/v1/agent-invocations/{run['id']}/").status_code == 204
    s1.refresh_from_db()
    assert (s1.total_tokens_input, s1.total_cost_usd) == (1100, Decimal("0.570000"))
    assert not TokenUsage.objects.filter(request_id="req-9").exists()


def test_a_duplicate_token_usage_report_answers_the_row_that_counts_the_call(
        api: APIClient, calls: tuple[Session, Session]) -> None:
    s1, _ = calls
    counted = TokenUsage.objects.get(request_id="req-1")
    again = _usage(api, s1, "req-1", (999, 999), "9.000000")
    assert (again["id"], again["source"], again["input_tokens"]) == (counted.id, "token_usage", 100)


@pytest.mark.parametrize("amounts", [
    ["0.076000"],
    ["0.1", "0.2"],  # 0.30000000000000004 in floats
    ["999999999999.999999"],  # crashed Django's SQLite decimal converter (past SQLite's limit now: the largest)
])
def test_it_keeps_money_exact_on_both_backends(api: APIClient, amounts: list[str]) -> None:
    amounts = [min(amount, str(usd_max()), key=Decimal) for amount in amounts]
    session = make_session()
    for index, amount in enumerate(amounts):
        _usage(api, session, f"req-{index}", (1, 1), amount)
    session.refresh_from_db()
    expected = sum((Decimal(amount) for amount in amounts), Decimal(0))
    assert session.total_cost_usd == expected
    listed = api.get("/api/v1/token-usage/", {"session": session.pk}).json()["results"]
    assert sorted(Decimal(row["cost_usd"]) for row in listed) == sorted(Decimal(amount) for amount in amounts)
    with connection.cursor() as cursor:
        cursor.execute("SELECT total_cost_usd FROM sessions_app_session WHERE id = %s", [session.pk])
        stored = cursor.fetchone()[0]
    # SQLite: whole 1e-10 USD in an integer; PostgreSQL: numeric(22, 10).
    assert stored == (int(expected * 10**10) if connection.vendor == "sqlite" else expected)


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/task-attempts/", {"tokens_input": 10, "tokens_output": -8407}),
    ("/api/v1/agent-invocations/", {"tokens_input": -1}),
    ("/api/v1/token-usage/", {"model": "m1", "output_tokens": -1}),
])
def test_no_path_books_a_negative_token_count(api: APIClient, path: str, body: dict[str, Any]) -> None:
    # Found by schemathesis: an attempt took -8407 output tokens, and its call in the one book of
    # usage then broke the book's own schema (token counts are never negative).
    session = make_session()
    owner = {"task": make_task(session, "task-1").pk} if "attempts" in path else {"session": session.pk}
    response = api.post(path, {**owner, **body}, format="json")
    assert response.status_code == 400, response.content
    negative = next(name for name, value in body.items() if isinstance(value, int) and value < 0)
    assert response.json()["details"] == {negative: ["Ensure this value is greater than or equal to 0."]}
    assert not TokenUsage.objects.exists()
    assert api.patch(f"/api/v1/sessions/{session.pk}/", {"token_count": -1}, format="json").status_code == 400
