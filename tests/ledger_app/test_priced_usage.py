"""One cost rule for every path that reports a provider call (issue #15 §3): token usage, a ledger
event (one or a list), an attempt (also through report/) and an agent invocation (also through
complete/) sent without `cost_usd` are priced at the model price in force at the call's time and
marked `is_estimated`; a cost of 0 sent is a cost of 0; tokens without a cost or a price are a 400
`no_model_price` naming the model, on every path."""

import re
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent, ModelPrice, TokenUsage
from sessions_app.models import AgentInvocation, Session, TaskAttempt
from tests.ledger_app.factories import get_all_sources
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

HOURS_AGO = 2


@pytest.fixture
def prices() -> None:
    """m1 costs 3/15 USD per million input/output tokens until an hour ago, 6/30 since."""
    now = timezone.now()
    ModelPrice.objects.create(model="m1", valid_from=now - timedelta(days=30), input_per_mtok=3, output_per_mtok=15)
    ModelPrice.objects.create(model="m1", valid_from=now - timedelta(hours=1), input_per_mtok=6, output_per_mtok=30)


def _at(hours_ago: int) -> str:
    return (timezone.now() - timedelta(hours=hours_ago)).isoformat()


def _cost(tokens: tuple[int, int], *, hours_ago: int = 0) -> Decimal:
    per_mtok = (3, 15) if hours_ago > 1 else (6, 30)
    return Decimal(tokens[0] * per_mtok[0] + tokens[1] * per_mtok[1]) / 1_000_000


def _post(api: APIClient, url: str, body: Any, status: int = 201) -> Any:
    response = api.post(url, body, format="json")
    assert response.status_code == status, response.content
    return response.json()


def _report_every_path(api: APIClient, session: Session, cost: dict[str, Any], model: str = "m1",
                       status: int = 201) -> list[Any]:
    """One call through each path, with `cost` ({} for none sent), at distinct token counts; the
    event list and the attempt and invocation carry a time two hours ago (the older price)."""
    task = make_task(session, f"task-{TaskAttempt.objects.count() + 1}")
    ok_status = 200 if status == 201 else status
    return [
        _post(api, "/api/v1/token-usage/", {"session": session.pk, "model": model, "input_tokens": 1000,
                                             "output_tokens": 100, **cost}, status),
        _post(api, "/api/v1/events/", {"session": session.pk, "type": "x-call", "model": model, "tokens_in": 2000,
                                       "tokens_out": 200, **cost}, status),
        _post(api, "/api/v1/events/", [{"session": session.pk, "type": "x-call", "model": model, "tokens_in": 3000,
                                        "tokens_out": 300, "timestamp": _at(HOURS_AGO), **cost}], status),
        _post(api, "/api/v1/task-attempts/", {"task": task.pk, "model": model, "tokens_input": 4000,
                                              "tokens_output": 400, "started_at": _at(HOURS_AGO), **cost}, status),
        _post(api, f"/api/v1/tasks/{task.pk}/report/", {"implementation_report": "done", "model": model,
                                                        "tokens_input": 5000, "tokens_output": 500, **cost}, status),
        _post(api, "/api/v1/agent-invocations/", {"session": session.pk, "agent": "coder", "model": model,
                                                  "tokens_input": 6000, "tokens_output": 600,
                                                  "started_at": _at(HOURS_AGO), **cost}, status),
        _post(api, f"/api/v1/agent-invocations/{_invocation(session, model).pk}/complete/",
              {"status": "completed", "tokens_input": 7000, "tokens_output": 700, **cost}, ok_status),
    ]


def _invocation(session: Session, model: str) -> AgentInvocation:
    return AgentInvocation.objects.create(session=session, agent="coder", model=model)


# Per path: the tokens sent and whether the call's time is two hours ago.
CALLS = [((1000, 100), 0), ((2000, 200), 0), ((3000, 300), HOURS_AGO), ((4000, 400), HOURS_AGO),
         ((5000, 500), 0), ((6000, 600), HOURS_AGO), ((7000, 700), 0)]


def test_it_prices_a_call_sent_without_cost_on_every_path(api: APIClient, prices: None) -> None:
    session = make_session()
    _report_every_path(api, session, {})
    expected = [_cost(tokens, hours_ago=hours) for tokens, hours in CALLS]
    book = TokenUsage.objects.order_by("input_tokens")
    assert [(row.cost_usd, row.is_estimated) for row in book] == [(cost, True) for cost in expected]
    # Each reporting row carries the cost it was priced at.
    events = LedgerEvent.objects.filter(session=session, type="x-call").order_by("tokens_in")
    attempts = TaskAttempt.objects.order_by("tokens_input")
    invocations = AgentInvocation.objects.order_by("tokens_input")
    assert [(row.cost_usd, row.is_estimated) for row in [*events, *attempts, *invocations]] == [
        (cost, True) for cost in expected[1:]]
    session.refresh_from_db()
    assert session.total_cost_usd == sum(expected, Decimal(0))


def test_it_counts_a_cost_of_zero_sent_as_zero(api: APIClient, prices: None) -> None:
    session = make_session()
    _report_every_path(api, session, {"cost_usd": "0"})
    assert set(TokenUsage.objects.values_list("cost_usd", "is_estimated")) == {(Decimal(0), False)}
    assert TokenUsage.objects.count() == len(CALLS)
    assert not TaskAttempt.objects.filter(is_estimated=True).exists()
    assert not AgentInvocation.objects.filter(is_estimated=True).exists()
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_cost_usd) == (28_000, Decimal(0))


def test_it_refuses_tokens_without_a_cost_or_a_price_on_every_path(api: APIClient, prices: None) -> None:
    session = make_session()
    answers = _report_every_path(api, session, {}, model="unpriced", status=400)
    [bulk_item] = answers.pop(2)["details"]["items"]
    assert (bulk_item["status"], bulk_item["code"]) == ("invalid", "no_model_price")
    assert [answer["code"] for answer in answers] == ["no_model_price"] * 6
    assert all("'unpriced'" in message for message in [bulk_item["errors"]["cost_usd"][0],
                                                        *(answer["message"] for answer in answers)])
    assert not TokenUsage.objects.exists()
    assert not LedgerEvent.objects.filter(type="x-call").exists()
    assert not TaskAttempt.objects.exists()
    assert not AgentInvocation.objects.filter(tokens_input__gt=0).exists()
    # In a list of events only the unpriced one is refused.
    item = {"session": session.pk, "type": "x-call", "model": "unpriced", "tokens_in": 10}
    answers = _post(api, "/api/v1/events/", [{**item, "cost_usd": "0.1"}, item], 207)
    assert [(answer["status"], answer.get("code")) for answer in answers] == [("created", None),
                                                                              ("invalid", "no_model_price")]
    # A call with no tokens needs no price.
    _post(api, "/api/v1/agent-invocations/", {"session": session.pk, "agent": "coder", "model": "unpriced"})


def test_it_prices_an_attempt_or_invocation_again_when_its_tokens_change_without_a_cost(
        api: APIClient, prices: None) -> None:
    session = make_session()
    run = _post(api, "/api/v1/agent-invocations/", {"session": session.pk, "agent": "coder", "model": "m1",
                                                    "cost_usd": "0.5"})  # a cost sent for a call without tokens
    url = f"/api/v1/agent-invocations/{run['id']}/"
    patched = api.patch(url, {"tokens_input": 1000}, format="json").json()
    assert (Decimal(patched["cost_usd"]), patched["is_estimated"]) == (_cost((1000, 0)), True)
    for unchanged in ({"response": "done"}, {"cost_usd": None}):  # the call is the same: its price is kept
        patched = api.patch(url, unchanged, format="json").json()
        assert (Decimal(patched["cost_usd"]), patched["is_estimated"]) == (_cost((1000, 0)), True)
    patched = api.patch(url, {"model": "m2"}, format="json").json()  # estimated: priced again, m2 has no price
    assert patched["code"] == "no_model_price"
    patched = api.patch(url, {"cost_usd": "0.25"}, format="json").json()
    assert (Decimal(patched["cost_usd"]), patched["is_estimated"]) == (Decimal("0.25"), False)
    patched = api.patch(url, {"model": "m2"}, format="json").json()  # a cost sent stays when only the model changes
    assert (Decimal(patched["cost_usd"]), patched["is_estimated"], patched["model"]) == (Decimal("0.25"), False, "m2")
    assert list(TokenUsage.objects.values_list("cost_usd", "is_estimated")) == [(Decimal("0.25"), False)]
    session.refresh_from_db()
    assert session.total_cost_usd == Decimal("0.25")


def test_every_figure_agrees_with_priced_calls(api: APIClient, prices: None) -> None:
    first, second = make_session(), make_session()
    _report_every_path(api, first, {})
    _report_every_path(api, second, {"cost_usd": "0.000100"})
    total = sum((_cost(tokens, hours_ago=hours) for tokens, hours in CALLS), Decimal(0)) + Decimal("0.0007")
    sessions = Session.objects.filter(pk__in=[first.pk, second.pk])
    per_session = get_all_sources(api, "session-cost")
    per_day = get_all_sources(api, "daily-cost")
    per_model = get_all_sources(api, "model-usage")
    in_usd = [sum((s.total_cost_usd for s in sessions), Decimal(0)),
              sum((Decimal(row["total_cost_usd"]) for row in per_session), Decimal(0)),
              sum((Decimal(row["total_cost_usd"]) for row in per_day), Decimal(0))]
    assert in_usd == [total] * 3
    # Per session and model in whole cents: 0.1935 USD priced, 0.0007 USD sent.
    assert sorted((row["session_id"] == first.pk, row["cost_cents"]) for row in per_model) == [(False, 0), (True, 19)]
    tokens = 2 * sum(sum(pair) for pair, _hours in CALLS)
    assert sum(row["total_tokens"] for row in per_session) == sum(row["total_tokens"] for row in per_day) == tokens
    assert sum(row["tokens_input"] + row["tokens_output"] for row in per_model) == tokens


def test_the_admin_prices_an_attempt_whose_cost_is_left_blank(admin_client, prices: None) -> None:
    task = make_task(make_session(), "task-1")
    url = "/admin/sessions_app/taskattempt/add/"
    cost_input = re.search(r'<input[^>]*name="cost_usd"[^>]*>', admin_client.get(url).content.decode())
    assert cost_input is not None and "value=" not in cost_input.group(0)  # blank: priced, unless a cost is typed
    response = admin_client.post(url, {"task": task.pk, "attempt_number": 1, "iteration_number": 1, "model": "m1",
                                       "tokens_input": 1000, "tokens_output": 100, "cost_usd": ""})
    assert response.status_code == 302, response.content
    attempt = TaskAttempt.objects.get()
    assert (attempt.cost_usd, attempt.is_estimated) == (_cost((1000, 100)), True)
    assert TokenUsage.objects.get().cost_usd == _cost((1000, 100))
