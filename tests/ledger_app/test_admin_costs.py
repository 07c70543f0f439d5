"""The cost view (token usage list): totals by model, agent and day for a session and a date range,
the same sums as the API's cost statistics' all-sources figures."""

from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.test import Client
from rest_framework.test import APIClient

from ledger_app.models import TokenUsage, UsageSource
from tests.ledger_app.factories import get_all_sources, get_stat, make_session, utc

pytestmark = pytest.mark.django_db
USAGE = "/admin/ledger_app/tokenusage/"


@pytest.fixture
def two_sessions() -> tuple[str, str]:
    loop, other = make_session(), make_session()
    for session, model, agent, cost, at, source in (
            (loop, "sonnet", "planner", "0.1", "2025-03-01T10:00:00Z", UsageSource.TOKEN_USAGE),
            (loop, "sonnet", "executor-1", "0.2", "2025-03-02T23:59:59Z", UsageSource.ATTEMPT),
            (loop, "opus", "executor-1", "1.000001", "2025-03-03T00:00:00Z", UsageSource.TOKEN_USAGE),
            (loop, "opus", "reviewer", "0.03", "2025-03-04T12:00:00Z", UsageSource.RUN),
            (other, "opus", "executor-1", "5", "2025-03-02T12:00:00Z", UsageSource.TOKEN_USAGE)):
        TokenUsage.objects.create(session=session, model=model, agent=agent, input_tokens=100, output_tokens=10,
                                  cost_usd=Decimal(cost), recorded_at=utc(at), source=source)
    return loop.pk, other.pk


def totals(page, name: str, key: str) -> dict[str, tuple[int, str]]:
    return {str(row[key]): (row["calls"], str(row["cost_usd"])) for row in page.context[name]}


def test_it_totals_one_session_in_a_date_range_by_model_agent_and_day(admin_client: Client, two_sessions) -> None:
    loop, _ = two_sessions
    page = admin_client.get(USAGE, {"session": loop, "recorded_at__since": "2025-03-02",
                                    "recorded_at__until": "2025-03-03"})
    assert page.status_code == 200
    assert totals(page, "usage_by_model", "model") == {"opus": (1, "1.000001"), "sonnet": (1, "0.200000")}
    assert totals(page, "usage_by_agent", "agent") == {"executor-1": (2, "1.200001")}
    assert totals(page, "usage_by_day", "day") == {"2025-03-03": (1, "1.000001"), "2025-03-02": (1, "0.200000")}
    html = page.content.decode()
    assert 'id="usage-by-agent"' in html
    assert 'name="recorded_at__since" value="2025-03-02"' in html
    assert f'type="hidden" name="session" value="{loop}"' in html  # the range form keeps the session


def test_it_agrees_with_the_apis_cost_statistics(admin_client: Client, api: APIClient, two_sessions) -> None:
    loop, _ = two_sessions
    page = admin_client.get(USAGE, {"session": loop, "recorded_at__since": "2025-03-02",
                                    "recorded_at__until": "2025-03-04"})
    by_day = {str(row["day"]): row["cost_usd"] for row in page.context["usage_by_day"]}
    # The cost view shows every path's calls: the statistics' all-sources figures, not DevTeam's token_usage rows.
    api_days = get_all_sources(api, "daily-cost", session=loop, since="2025-03-02", until="2025-03-05")
    # The seed's views round to 4 places; the console shows the same sums to the micro-dollar.
    assert {row["date"]: row["total_cost_usd"] for row in api_days} == {
        day: str(cost.quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)) for day, cost in by_day.items()}
    assert [row["date"] for row in get_stat(api, "daily-cost", session=loop, since="2025-03-02",
                                            until="2025-03-05")] == ["2025-03-03"]
    [session_row] = get_all_sources(api, "session-cost", session=loop)
    everything = admin_client.get(USAGE, {"session": loop})
    total = sum(row["cost_usd"] for row in everything.context["usage_by_model"])
    assert session_row["total_cost_usd"] == str(total.quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))
    assert session_row["api_calls"] == sum(row["calls"] for row in everything.context["usage_by_agent"]) == 4
    [seed_row] = get_stat(api, "session-cost", session=loop)
    assert (seed_row["api_calls"], seed_row["total_cost_usd"]) == (2, "1.1000")


def test_it_refuses_a_day_that_is_not_a_date(admin_client: Client, two_sessions) -> None:
    page = admin_client.get(USAGE, {"recorded_at__since": "yesterday"})
    assert page.status_code == 302 and page["Location"].endswith("?e=1")  # the admin's "invalid filter" page


def test_the_console_links_its_cost_panel_to_the_sessions_cost_view(admin_client: Client, two_sessions) -> None:
    loop, _ = two_sessions
    html = admin_client.get(f"/admin/sessions_app/session/{loop}/change/").content.decode()
    assert f'href="{USAGE}?session={loop}"' in html
