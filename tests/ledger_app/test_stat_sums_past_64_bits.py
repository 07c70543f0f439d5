"""Statistics sum money exactly past SQLite's 64-bit integers (issue #26): money is stored as whole 1e-10 USD, so
on SQLite an amount and a session's total are at most ~9.2e8 USD, but a sum across sessions (a day's, a model's,
an agent's) may pass 2^63 units. Such rows are written past the services (the ORM, one call per session) and
every statistic answers the exact figure, never a 500, on both backends."""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from ledger_app.models import TokenUsage, UsageSource
from ledger_app.stats.framework import STATS
from sessions_app.models import AgentInvocation
from tests.ledger_app.factories import get_all_sources, get_stat
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db

BIG = Decimal("900000000.1234567891")  # under SQLite's 922,337,203.6854775807 USD, twice it is not
CALLED = datetime(2026, 1, 1, 12, tzinfo=UTC)


@pytest.fixture
def big_sums() -> None:
    for number in (1, 2):
        session = make_session(key=f"big-{number}", started_at=CALLED)
        TokenUsage.objects.create(session=session, source=UsageSource.TOKEN_USAGE, model="opus", agent="dev",
                                  input_tokens=1, output_tokens=1, cost_usd=BIG, recorded_at=CALLED)
        AgentInvocation.objects.create(session=session, agent="dev", model="opus", status="success",
                                       tokens_input=1, tokens_output=1, cost_usd=BIG, started_at=CALLED)


@pytest.mark.usefixtures("big_sums")
@pytest.mark.parametrize("name", sorted(STATS))
def test_every_statistic_answers_a_sum_past_64_bit_units(api: APIClient, name: str) -> None:
    for params in ({}, {"since": "2026-01-01T06:00:00Z"}):  # the rollup's whole days, then the calls' part-day
        reply = api.get(f"/api/v1/stats/{name}/", params)
        assert reply.status_code == 200, (name, reply.content[:300])


@pytest.mark.usefixtures("big_sums")
def test_the_sums_are_exact(api: APIClient) -> None:
    twice = "1800000000.2469"  # ROUND(2 * 900000000.1234567891, 4)
    for params in ({}, {"since": "2026-01-01T06:00:00Z"}):
        [day] = get_stat(api, "daily-cost", **params)
        assert (day["api_calls"], day["total_cost_usd"]) == (2, twice)
        [all_day] = get_all_sources(api, "daily-cost", **params)
        assert all_day["total_cost_usd"] == twice
        [agent] = get_stat(api, "agent-performance", **params)
        assert agent["total_cost_cents"] == 180000000025  # ROUND(2 * 90000000012.34567891 cents)
        assert [row["total_cost_cents"] for row in get_all_sources(api, "agent-performance", **params)] == [
            180000000025]


@pytest.mark.usefixtures("big_sums")
def test_the_admin_s_cost_totals_and_the_dashboard_answer_it(admin_client: Any) -> None:
    for url in ("/admin/", "/admin/ledger_app/tokenusage/"):
        reply = admin_client.get(url)
        assert reply.status_code == 200, url
    assert "1800000000.2469135782" in admin_client.get("/admin/ledger_app/tokenusage/").content.decode()
