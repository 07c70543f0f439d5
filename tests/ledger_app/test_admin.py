"""The ledger's admin pages: the events changelist at scale, and token usage money."""

import re
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from ledger_app.models import Issue, LedgerEvent, ModelPrice, TokenUsage
from tests.ledger_app.factories import make_event, make_session, utc

pytestmark = pytest.mark.django_db
EVENTS = "/admin/ledger_app/ledgerevent/"


def _listed(page) -> list[int]:
    return [event.id for event in page.context["cl"].result_list]


def _filter_choices(html: str, title: str) -> list[str]:
    """The labels a sidebar filter offers besides "All" (none when the filter is not shown)."""
    block = re.search(rf'<details data-filter-title="{title}".*?</details>', html, re.DOTALL)
    labels = re.findall(r'<a href="[^"]*">([^<]*)</a>', block[0]) if block else []
    return [label for label in labels if label != "All"]


def test_it_lists_events_newest_first_in_short_columns(admin_client: Client) -> None:
    session = make_session(key="ralph-2025-03-01")
    events = [make_event(session, index, agent="executor", tokens_total=index, cost_usd="0.5") for index in range(3)]
    page = admin_client.get(EVENTS)
    assert page.status_code == 200
    assert _listed(page) == [event.id for event in reversed(events)]
    columns = re.findall(r'<th scope="col" class="(?:sortable )?column-(\w+)', page.content.decode())
    assert columns == ["timestamp_ago", "type", "message_short", "session_link", "task_key", "agent", "cost_usd",
                       "model", "tokens_total", "id"]
    assert ">ralph-2025-03-01<" in page.content.decode()


def test_it_does_not_list_the_sessions_and_costs_the_same_queries_for_many(admin_client: Client) -> None:
    def queries_of_the_page() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert admin_client.get(EVENTS).status_code == 200
        return len(queries)

    make_event(make_session(key="first"))
    few = queries_of_the_page()
    for index in range(30):
        make_event(make_session(key=f"more-{index}"), index)
    assert queries_of_the_page() == few
    assert _filter_choices(admin_client.get(EVENTS).content.decode(), "session") == []


@pytest.mark.parametrize("parameter", ["session", "session__id__exact"])
def test_it_shows_one_session_from_the_session_page_link(admin_client: Client, parameter: str) -> None:
    session, other = make_session(key="wanted"), make_session(key="other")
    wanted = [make_event(session, index) for index in range(2)]
    make_event(other)
    page = admin_client.get(EVENTS, {parameter: session.id})
    assert page.status_code == 200
    assert _listed(page) == [event.id for event in reversed(wanted)]
    if parameter == "session":  # the autocomplete shows the selected session (and a link to leave it)
        html = page.content.decode()
        assert f'<option value="{session.id}" selected>wanted</option>' in html
        assert ">All sessions</a>" in html


def test_it_searches_by_session_key_or_id_task_agent_and_event_id(admin_client: Client) -> None:
    session, other = make_session(key="ralph-key"), make_session(key="other")
    mine = make_event(session, 0, agent="reviewer")
    theirs = make_event(other, 1, agent="executor")
    for term, expected in (("ralph-key", [mine]), (session.id.lower(), [mine]), ("task-1", [theirs]),
                           ("reviewer", [mine]), (str(theirs.id), [theirs]), ("nothing", []),
                           ("9" * 30, []), ("event", [])):
        page = admin_client.get(EVENTS, {"q": term})
        assert page.status_code == 200, term
        assert _listed(page) == [event.id for event in expected], term


def test_it_offers_the_models_types_and_categories_that_events_carry(admin_client: Client) -> None:
    session = make_session()
    opus = make_event(session, 0, model="opus", type="agent_started", category="agent")
    make_event(session, 1, model="sonnet", type="agent_completed", category="agent")
    make_event(session, 2, type="session_state_changed", category="orchestration")  # no model: audit events
    html = admin_client.get(EVENTS).content.decode()
    assert _filter_choices(html, "model") == ["opus", "sonnet"]  # no blank, invisible choice
    assert _filter_choices(html, "type") == ["agent_completed", "agent_started", "session_state_changed"]
    assert _filter_choices(html, "category") == ["agent", "orchestration"]
    assert _listed(admin_client.get(EVENTS, {"model": "opus"})) == [opus.id]


def test_it_a_typed_value_outside_the_recent_events_is_still_offered_and_applied(admin_client: Client) -> None:
    make_event(make_session(), model="opus")
    page = admin_client.get(EVENTS, {"model": "haiku"})
    assert page.status_code == 200 and _listed(page) == []
    assert _filter_choices(page.content.decode(), "model") == ["haiku", "opus"]


def test_it_filters_events_by_date_without_listing_dates(admin_client: Client) -> None:
    session = make_session()
    make_event(session, 0, timestamp=utc("2025-01-01T00:00:00Z"))
    new = make_event(session, 1, timestamp=utc("2025-03-01T00:00:00Z"))
    page = admin_client.get(EVENTS, {"timestamp__gte": "2025-02-01T00:00:00+00:00",
                                     "timestamp__lt": "2025-04-01T00:00:00+00:00"})
    assert page.status_code == 200
    assert _listed(page) == [new.id]
    choices = ["Any date", "Today", "Past 7 days", "This month", "This year"]  # fixed ranges: no date query
    assert _filter_choices(page.content.decode(), "timestamp") == choices


def test_it_pretty_prints_the_event_json_on_its_page(admin_client: Client) -> None:
    event = LedgerEvent.objects.create(session=make_session(), type="x-probe", data={"b": [1, 2], "a": "é"},
                                       meta={"source": "test"})
    html = admin_client.get(f"{EVENTS}{event.id}/change/").content.decode()
    data = '{\n  &quot;a&quot;: &quot;é&quot;,\n  &quot;b&quot;: [\n    1,\n    2\n  ]\n}'
    assert f'<pre class="rl-json">{data}</pre>' in html
    assert "&quot;source&quot;: &quot;test&quot;" in html


# -- token usage -----------------------------------------------------------------------------

def test_it_shows_usage_costs_as_usd_with_six_places_on_both_backends(admin_client: Client) -> None:
    sonnet = "claude-3-5-sonnet-20241022"
    for model, cost, at in ((sonnet, "0.1", "2025-03-01T10:00:00Z"), (sonnet, "0.2", "2025-03-01T11:00:00Z"),
                            ("opus", "2", "2025-03-02T09:00:00Z"), ("opus", "0.000001", "2025-03-02T10:00:00Z"),
                            (sonnet, "0.0305", "2025-03-02T11:00:00Z"), (sonnet, "0.0305", "2025-03-02T12:00:00Z"),
                            (sonnet, "0.0305", "2025-03-02T13:00:00Z")):
        TokenUsage.objects.create(model=model, input_tokens=10, cost_usd=Decimal(cost), recorded_at=utc(at))
    page = admin_client.get("/admin/ledger_app/tokenusage/")
    assert page.status_code == 200
    by_model = [(row["model"], str(row["cost_usd"]), row["calls"]) for row in page.context["usage_by_model"]]
    assert by_model == [("opus", "2.000001", 2), (sonnet, "0.391500", 5)]
    by_day = [(str(row["day"]), str(row["cost_usd"])) for row in page.context["usage_by_day"]]
    assert by_day == [("2025-03-02", "2.091501"), ("2025-03-01", "0.300000")]
    html = page.content.decode()
    # by model, by agent (none recorded: one row), by day
    assert re.findall(r'class="number usage-cost">([^<]*)<', html) == ["2.000001", "0.391500", "2.391501",
                                                                       "2.091501", "0.300000"]
    assert f'<td class="usage-key" title="{sonnet}">{sonnet}</td>' in html
    assert "<style>" not in html  # the strict CSP allows our stylesheet only


def test_it_adds_an_issue_through_the_record_service(admin_client: Client) -> None:
    session = make_session(key="admin-issue")
    response = admin_client.post("/admin/ledger_app/issue/add/", {
        "session": session.pk, "task_key": "T1", "kind": "test_failure", "signature": "tests/x.py::y",
        "message": "assert 1 == 2", "file": "tests/x.py", "line": "7"})
    assert response.status_code == 302, response.content.decode()[:3000]
    issue = Issue.objects.get()
    assert (issue.session_id, issue.signature, issue.count, issue.line) == (session.pk, "tests/x.py::y", 1, 7)
    recorded = LedgerEvent.objects.get(session=session, type="issue_recorded")
    assert recorded.data["issue"] == issue.pk and recorded.task_key == "T1"


def test_it_refuses_a_second_issue_with_a_known_signature_on_the_form(admin_client: Client) -> None:
    session = make_session(key="admin-issue-dup")
    data = {"session": session.pk, "task_key": "T1", "kind": "lint", "signature": "E501", "message": "long"}
    assert admin_client.post("/admin/ledger_app/issue/add/", data).status_code == 302
    response = admin_client.post("/admin/ledger_app/issue/add/", data)
    assert response.status_code == 200  # the form again, with the error, not a 500
    assert "already exists" in response.content.decode()
    assert Issue.objects.get().count == 1


def test_it_edits_and_bulk_deletes_model_prices_through_the_services(admin_client: Client) -> None:
    price = ModelPrice.objects.create(model="opus", valid_from=utc("2026-01-01T00:00:00Z"),
                                      input_per_mtok=Decimal("15"), output_per_mtok=Decimal("75"))
    other = ModelPrice.objects.create(model="haiku", valid_from=utc("2026-01-01T00:00:00Z"))
    response = admin_client.post(f"/admin/ledger_app/modelprice/{price.pk}/change/", {
        "model": "opus", "valid_from_0": "2026-01-01", "valid_from_1": "00:00:00", "input_per_mtok": "16",
        "output_per_mtok": "75", "cached_read_per_mtok": "0", "cached_write_per_mtok": "0",
        "reasoning_per_mtok": "0"})
    assert response.status_code == 302, response.content.decode()[:3000]
    price.refresh_from_db()
    assert (price.input_per_mtok, price.output_per_mtok) == (Decimal("16"), Decimal("75"))

    response = admin_client.post("/admin/ledger_app/modelprice/", {
        "action": "delete_selected", "_selected_action": [price.pk, other.pk], "post": "yes"})
    assert response.status_code == 302
    assert not ModelPrice.objects.filter(pk__in=[price.pk, other.pk]).exists()  # the default prices stay
