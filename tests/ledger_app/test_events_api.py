"""`/api/v1/events/`: single and bulk append, idempotency keys, types, cursor tailing, totals."""

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from ledger_app.models import EVENT_TYPES, LedgerEvent, TokenUsage
from sessions_app.models import Session
from tests.api_mixins import APIResourceTests, assert_error_shape
from tests.ledger_app.factories import make_event, make_session, utc

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]
URL = "/api/v1/events/"


def bench_event(session_id: str, i: int, **extra: Any) -> dict[str, Any]:
    """The body tests/benchmarks/operations.py sends."""
    return {"session": session_id, "type": "x-bench", "agent": "executor", "message": f"benchmark event {i}",
            "tokens_in": 120, "tokens_out": 30, "cost_usd": "0.000810", "data": {"i": i}, **extra}


class TestLedgerEventResource(APIResourceTests):
    model = LedgerEvent
    basename = "ledgerevent"
    list_queries = 2  # auth, one keyset page (no COUNT)
    updatable = False
    deletable = False

    def make_instance(self, index: int) -> LedgerEvent:
        return make_event(make_session(), index)

    def create_payload(self) -> dict[str, Any]:
        return {"session": make_session().id, "type": "run_started", "message": "go"}


def test_it_appends_one_event_the_way_the_benchmark_does(api: APIClient) -> None:
    session = make_session()
    response = api.post(URL, bench_event(session.id, 1), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert isinstance(body["id"], int)
    assert body["tokens_total"] == 150 and body["type"] == "x-bench" and body["data"] == {"i": 1}
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output) == (120, 30)


def test_it_appends_a_list_reporting_each_item(api: APIClient) -> None:
    session = make_session()
    stored = api.post(URL, bench_event(session.id, 0, idempotency_key="k-0"), format="json").json()
    items = [
        bench_event(session.id, 1, idempotency_key="k-1"),
        bench_event(session.id, 0, idempotency_key="k-0"),          # duplicate of a stored event (same body)
        bench_event(session.id, 3, type="not_a_type"),              # invalid
        bench_event(session.id, 1, idempotency_key="k-1"),          # duplicate of item 0
        bench_event("01ARZ3NDEKTSV4RRFFQ69G5FAV", 5),               # unknown session
        bench_event(session.id, 6),
        bench_event(session.id, 7, idempotency_key="k-0"),          # the stored event's key, another body
        bench_event(session.id, 8, idempotency_key="k-1"),          # item 0's key, another body
    ]
    response = api.post(URL, items, format="json")
    assert response.status_code == 207, response.content
    body = response.json()
    assert [item["status"] for item in body] == ["created", "duplicate", "invalid", "duplicate", "invalid", "created",
                                                 "conflict", "conflict"]
    assert body[0]["id"] == body[3]["id"] and body[1]["id"] == stored["id"]
    assert "type" in body[2]["errors"] and "session" in body[4]["errors"]
    assert [item.get("code") for item in body] == [None, None, "validation_error", None, "validation_error", None,
                                                   "idempotency_key_reused", "idempotency_key_reused"]
    assert body[6]["id"] is None and str(stored["id"]) in body[6]["errors"]["idempotency_key"][0]
    assert LedgerEvent.objects.filter(session=session).count() == 3
    assert LedgerEvent.objects.get(pk=stored["id"]).data == {"i": 0}  # never silently replaced
    session.refresh_from_db()
    assert session.total_tokens_input == 3 * 120  # only the created events count


def test_a_list_is_201_when_every_item_is_appended_and_fails_whole_when_none_is(api: APIClient) -> None:
    session = make_session()
    assert api.post(URL, [bench_event(session.id, 1), bench_event(session.id, 2)], format="json").status_code == 201
    body = assert_error_shape(api.post(URL, [bench_event(session.id, 3, type="nope"), {"type": "run_started"}],
                                       format="json"), 400, "validation_error")
    assert [item["status"] for item in body["details"]["items"]] == ["invalid", "invalid"]
    api.post(URL, bench_event(session.id, 4, idempotency_key="k"), format="json")
    body = assert_error_shape(api.post(URL, [bench_event(session.id, 5, idempotency_key="k")], format="json"),
                              409, "idempotency_key_reused")
    assert body["details"]["items"][0]["code"] == "idempotency_key_reused"
    assert LedgerEvent.objects.filter(session=session).count() == 3


def test_a_single_event_reusing_its_key_with_another_body_is_a_409(api: APIClient) -> None:
    session = make_session()
    first = api.post(URL, bench_event(session.id, 1, idempotency_key="k", cost_usd="0.5"), format="json")
    assert first.status_code == 201, first.content
    again = api.post(URL, bench_event(session.id, 1, idempotency_key="k", cost_usd=0.5), format="json")
    assert again.status_code == 200 and again.json() == first.json()  # the same cost, spelled otherwise
    body = assert_error_shape(api.post(URL, bench_event(session.id, 2, idempotency_key="k"), format="json"),
                              409, "idempotency_key_reused")
    assert list(body["details"]) == ["idempotency_key"]
    assert LedgerEvent.objects.filter(session=session).count() == 1


def test_it_a_retried_list_creates_nothing_twice(api: APIClient) -> None:
    session = make_session()
    items = [bench_event(session.id, i, idempotency_key=f"k-{i}") for i in range(5)]
    first = api.post(URL, items, format="json")
    again = api.post(URL, items, format="json")
    assert first.status_code == 201 and again.status_code == 200
    assert [item["id"] for item in first.json()] == [item["id"] for item in again.json()]
    assert {item["status"] for item in again.json()} == {"duplicate"}
    session.refresh_from_db()
    assert session.total_tokens_input == 5 * 120


def test_it_a_retried_single_event_returns_the_existing_one(api: APIClient) -> None:
    session = make_session()
    body = bench_event(session.id, 1, idempotency_key="once")
    first = api.post(URL, body, format="json")
    again = api.post(URL, body, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]


def test_it_limits_a_list_to_1000_events(api: APIClient) -> None:
    session = make_session()
    assert_error_shape(api.post(URL, [bench_event(session.id, i) for i in range(1001)], format="json"),
                       400, "validation_error")
    assert_error_shape(api.post(URL, [], format="json"), 400, "validation_error")
    assert LedgerEvent.objects.count() == 0


def test_it_appends_1000_events_in_one_request_with_few_queries(api: APIClient, django_assert_num_queries) -> None:
    session = make_session()
    # Auth, sessions, keys, the session lock, its total and savepoints, the sessions' key locks
    # (PostgreSQL), the chain head, the events' INSERTs and the head's move, and the calls the events
    # report written into token usage. Events and usage rows go in as bulk_create writes them: as many
    # multi-row INSERTs as the backend's parameter limit needs (one on PostgreSQL, 1000 rows' worth
    # on SQLite's 999).
    usage_fields = [field for field in TokenUsage._meta.concrete_fields if not field.primary_key]
    usage_inserts = -(-1000 // connection.ops.bulk_batch_size(usage_fields, [None] * 1000))
    event_inserts = -(-1000 // connection.ops.bulk_batch_size(LedgerEvent._meta.concrete_fields, [None] * 1000))
    with django_assert_num_queries((10 if connection.vendor == "postgresql" else 9) + event_inserts + usage_inserts):
        response = api.post(URL, [bench_event(session.id, i, idempotency_key=f"k{i}") for i in range(1000)],
                            format="json")
    assert response.status_code == 201
    assert LedgerEvent.objects.filter(session=session).count() == 1000
    assert TokenUsage.objects.filter(session=session, source="event").count() == 1000


def test_it_an_unknown_type_is_a_400_listing_the_valid_ones(api: APIClient) -> None:
    body = assert_error_shape(api.post(URL, {"session": make_session().id, "type": "made_up"}, format="json"),
                              400, "validation_error")
    assert all(name in body["message"] for name in ("run_started", "agent_failed", "session_state_changed", "x-"))


@pytest.mark.parametrize("event_type", [*EVENT_TYPES, "x-custom", "x-my.tool_event"])
def test_it_every_known_and_custom_type_is_accepted(api: APIClient, event_type: str) -> None:
    response = api.post(URL, {"session": make_session().id, "type": event_type}, format="json")
    assert response.status_code == 201, response.content


SESSION = object()  # replaced by a real session id


@pytest.mark.parametrize("body", [
    {"type": "run_started"},                                    # no session
    {"type": "run_started", "session": "nope"},                 # malformed session id
    {"type": "run_started", "session": SESSION, "tokens_in": -1},
    {"type": "run_started", "session": SESSION, "surprise": 1},  # unknown key
    {"type": "x-", "session": SESSION},                         # empty custom name
    {"type": "run_started", "session": SESSION, "meta": "x" * 10},  # meta and data are JSON objects (#26)
    {"type": "run_started", "session": SESSION, "data": {"x": "x" * 10}},  # fine
], ids=["no-session", "bad-session", "negative-tokens", "unknown-key", "empty-custom-type", "meta-not-an-object",
        "control"])
def test_it_rejects_bad_bodies_with_a_400(api: APIClient, body: dict[str, Any]) -> None:
    session_id = make_session().id
    body = {name: session_id if value is SESSION else value for name, value in body.items()}
    response = api.post(URL, body, format="json")
    if "data" in body:
        assert response.status_code == 201, response.content
    else:
        assert_error_shape(response, 400, "validation_error")


def test_it_malformed_json_is_a_parse_error(api: APIClient) -> None:
    response = api.post(URL, data="{not json", content_type="application/json")
    assert_error_shape(response, 400, "parse_error")


def test_it_tails_with_after_and_filters(api: APIClient) -> None:
    session, other = make_session(), make_session()
    events = [make_event(session, i, agent="executor" if i % 2 else "planner") for i in range(6)]
    make_event(other, 9)
    body = api.get(URL, {"session": session.id, "after": events[2].id}).json()
    assert [row["id"] for row in body["results"]] == [e.id for e in events[3:]]
    assert body["next"] is None
    body = api.get(URL, {"session": session.id, "agent": "planner"}).json()
    assert [row["id"] for row in body["results"]] == [events[0].id, events[2].id, events[4].id]
    assert api.get(URL, {"type": "nothing_like_it"}).json()["results"] == []


def test_it_pages_by_cursor_without_count(api: APIClient) -> None:
    session = make_session()
    ids = [make_event(session, i).id for i in range(5)]
    first = api.get(URL, {"session": session.id, "page_size": 2}).json()
    assert "count" not in first and [row["id"] for row in first["results"]] == ids[:2]
    second = api.get(first["next"]).json()
    assert [row["id"] for row in second["results"]] == ids[2:4]


def test_it_pages_the_newest_events_first_by_cursor(api: APIClient, django_assert_num_queries) -> None:
    # ralphy's getRecentEvents(runId, limit) in one call.
    session, other = make_session(), make_session()
    ids = [make_event(session, i).id for i in range(25)]
    make_event(other, 99)
    with django_assert_num_queries(2):  # auth, one keyset page
        first = api.get(URL, {"session": session.id, "ordering": "-id", "page_size": 20}).json()
    assert [row["id"] for row in first["results"]] == ids[::-1][:20]
    rest = api.get(first["next"]).json()
    assert [row["id"] for row in rest["results"]] == ids[::-1][20:] and rest["next"] is None
    assert [row["id"] for row in api.get(rest["previous"]).json()["results"]] == ids[::-1][:20]


@pytest.mark.parametrize("url", ["/api/v1/events/", "/api/v1/token-usage/", "/api/v1/errors/"])
def test_it_orders_a_cursor_list_only_by_its_keys(api: APIClient, url: str) -> None:
    body = assert_error_shape(api.get(url, {"ordering": "timestamp"}), 400, "validation_error")
    assert body["details"]["ordering"] == ["Unknown ordering 'timestamp'; allowed: id (prefix '-' for descending)."]


def test_it_cost_adds_to_the_session_total(api: APIClient) -> None:
    session = make_session()
    api.post(URL, [{"session": session.id, "type": "backend_call_finished", "cost_usd": "0.125000",
                    "tokens_in": 10, "tokens_out": 5, "is_estimated": True}] * 2, format="json")
    session = Session.objects.get(pk=session.id)
    assert session.total_cost_usd == Decimal("0.25")
    assert session.total_tokens_input == 20 and session.total_tokens_output == 10


def test_it_a_list_item_that_is_not_an_object_is_reported_invalid(api: APIClient) -> None:
    session = make_session()
    response = api.post(URL, ["not an object", bench_event(session.id, 1), {"type": "run_started"}], format="json")
    assert response.status_code == 207, response.content
    body = response.json()
    assert [item["status"] for item in body] == ["invalid", "created", "invalid"]
    assert "non_field_errors" in body[0]["errors"] and "session" in body[2]["errors"]


def test_it_refuses_json_with_a_nul_character_per_item(api: APIClient) -> None:
    session = make_session()  # PostgreSQL's jsonb cannot store U+0000: a 400, not a database error
    body = assert_error_shape(api.post(URL, {"session": session.id, "type": "run_started", "meta": {"k\u0000": 1}},
                                       format="json"), 400, "validation_error")
    assert "meta" in body["details"]
    response = api.post(URL, [bench_event(session.id, 1, data={"deep": [["a\u0000b"]]}), bench_event(session.id, 2)],
                        format="json")
    assert response.status_code == 207, response.content
    assert [item["status"] for item in response.json()] == ["invalid", "created"]
    assert "data" in response.json()[0]["errors"]


@pytest.mark.parametrize("event_id", ["99999999999999999999999", "9223372036854775808", "0", "-1", "abc"])
def test_it_answers_an_id_that_cannot_exist_with_a_404(api: APIClient, event_id: str) -> None:
    assert_error_shape(api.get(f"{URL}{event_id}/"), 404, "not_found")


@pytest.mark.parametrize(("params", "expected"), [
    ({"category": "gate"}, [1]),
    ({"model": "opus"}, [2]),
    ({"phase": "review"}, [3]),
    ({"task": "task-4"}, [4]),
    ({"task_key": "task-4"}, [4]),
    ({"since": "2025-03-02T00:00:00Z"}, [4, 5]),
    ({"until": "2025-03-02T00:00:00Z"}, [0, 1, 2, 3]),
    ({"since": "2025-03-01T12:00:00Z", "until": "2025-03-02T12:00:00Z"}, [3, 4]),
], ids=lambda value: "-".join(value) if isinstance(value, dict) else None)
def test_it_filters_events_by_each_field_and_time(api: APIClient, params: dict[str, str],
                                                  expected: list[int]) -> None:
    session = make_session()
    events = [make_event(session, 0, timestamp=utc("2025-03-01T00:00:00Z")),
              make_event(session, 1, category="gate", timestamp=utc("2025-03-01T06:00:00Z")),
              make_event(session, 2, model="opus", timestamp=utc("2025-03-01T11:00:00Z")),
              make_event(session, 3, phase="review", timestamp=utc("2025-03-01T12:00:00Z")),
              make_event(session, 4, timestamp=utc("2025-03-02T06:00:00Z")),
              make_event(session, 5, timestamp=utc("2025-03-03T00:00:00Z"))]
    body = api.get(URL, {"session": session.id, **params}).json()
    assert [row["id"] for row in body["results"]] == [events[i].id for i in expected]


@pytest.mark.parametrize("spelling", ["AgentCompleted", "agent-completed", "AGENT_COMPLETED", "agentCompleted"])
def test_it_accepts_the_seed_spellings_of_an_event_type_the_schema_lists(api: APIClient, spelling: str) -> None:
    """Issue #26 §4: the schema's x-aliases are accepted, stored as the canonical type."""
    session = make_session()
    response = api.post(URL, {"session": session.id, "type": spelling}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["type"] == "agent_completed"
    bulk = api.post(URL, [{"session": session.id, "type": spelling}], format="json")
    assert [item["status"] for item in bulk.json()] == ["created"]
    assert set(LedgerEvent.objects.filter(session=session).values_list("type", flat=True)) == {"agent_completed"}
