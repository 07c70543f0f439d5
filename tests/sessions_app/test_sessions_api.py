from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from sessions_app.models import Session
from tests.api_mixins import APIResourceTests, assert_error_shape
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

SESSIONS = reverse("session-list")
CLIENT_ULID = "01J9ZQ6Y8K3V5X7B2N4M6P8R0T"


class TestSessionResource(APIResourceTests):
    model = Session
    basename = "session"
    list_queries = 3  # token auth, count, page
    update_payload = {"state": "planning", "current_plan_content": "# Plan\n- task-1"}

    def make_instance(self, index: int) -> Session:
        return Session.objects.create(key=f"session-{index}", user_request=f"request {index}")

    def make_deletable_instance(self, index: int) -> Session:
        """A running session is not deleted (409 session_running, tests/sessions_app/test_deletes.py)."""
        return Session.objects.create(key=f"session-{index}", status="completed", ended_at=timezone.now())

    def create_payload(self) -> dict[str, Any]:
        return {"key": "sess-new", "user_request": "Build the thing", "command_type": "implement"}


def test_it_creates_with_defaults_from_the_seeds(api: APIClient) -> None:
    body = api.post(SESSIONS, {"user_request": "x"}, format="json").json()
    assert body["state"] == "initializing"
    assert body["status"] == "running"
    assert body["default_model"] == "gpt-5"
    assert body["max_concurrency"] == 2
    assert body["current_iteration"] == 1
    assert body["max_iterations"] == 10
    assert body["circuit_breaker_state"] == "closed"
    assert body["total_cost_usd"] == "0.000000"
    assert len(body["id"]) == 26


def test_it_accepts_a_client_ulid_and_a_retry_returns_the_same_row(api: APIClient) -> None:
    payload = {"id": CLIENT_ULID, "key": "offline-1", "user_request": "offline"}
    first = api.post(SESSIONS, payload, format="json")
    assert first.status_code == 201
    assert first.json()["id"] == CLIENT_ULID
    retry = api.post(SESSIONS, payload, format="json")
    assert retry.status_code == 200
    assert retry.json() == first.json() | {"updated_at": retry.json()["updated_at"]}
    assert Session.objects.count() == 1


def test_it_accepts_a_lower_case_client_ulid(api: APIClient) -> None:
    response = api.post(SESSIONS, {"id": CLIENT_ULID.lower()}, format="json")
    assert response.status_code == 201
    assert response.json()["id"] == CLIENT_ULID


def test_it_refuses_a_reused_id_with_a_different_body(api: APIClient) -> None:
    api.post(SESSIONS, {"id": CLIENT_ULID, "user_request": "one"}, format="json")
    response = api.post(SESSIONS, {"id": CLIENT_ULID, "user_request": "two"}, format="json")
    body = assert_error_shape(response, 409, "conflict")
    assert body["details"] == {"id": CLIENT_ULID}
    assert Session.objects.get().user_request == "one"


def test_it_rejects_a_bad_ulid(api: APIClient) -> None:
    response = api.post(SESSIONS, {"id": "not-a-ulid"}, format="json")
    body = assert_error_shape(response, 400, "validation_error")
    assert "id" in body["details"]


def test_it_rejects_a_bad_enum_naming_the_allowed_values(api: APIClient) -> None:
    response = api.post(SESSIONS, {"state": "dancing"}, format="json")
    body = assert_error_shape(response, 400, "validation_error")
    message = body["details"]["state"][0]
    assert "dancing" in message
    assert "initializing" in message and "awaiting_feedback" in message


def test_it_rejects_oversized_fields(api: APIClient) -> None:
    response = api.post(SESSIONS, {"key": "k" * 101}, format="json")
    body = assert_error_shape(response, 400, "validation_error")
    assert "key" in body["details"]


def test_it_rejects_malformed_json(api: APIClient) -> None:
    response = api.generic("POST", SESSIONS, "{not json", content_type="application/json")
    assert_error_shape(response, 400, "parse_error")


def test_it_answers_a_duplicate_key_with_409(api: APIClient) -> None:
    api.post(SESSIONS, {"key": "dup"}, format="json")
    response = api.post(SESSIONS, {"key": "dup"}, format="json")
    body = assert_error_shape(response, 409, "conflict")
    assert list(body["details"]) == ["key"]
    assert body["message"].startswith("key: ")


def test_it_allows_many_sessions_without_a_key(api: APIClient) -> None:
    assert api.post(SESSIONS, {}, format="json").status_code == 201
    assert api.post(SESSIONS, {}, format="json").status_code == 201


def test_it_does_not_let_clients_write_the_totals(api: APIClient) -> None:
    response = api.post(SESSIONS, {"total_tokens_input": 999, "total_cost_usd": "5"}, format="json")
    assert set(assert_error_shape(response, 400, "validation_error")["details"]) == {"total_tokens_input",
                                                                                    "total_cost_usd"}
    assert not Session.objects.exists()


def test_it_lets_the_writer_set_the_token_count(api: APIClient) -> None:
    assert api.post(SESSIONS, {"token_count": 1200}, format="json").json()["token_count"] == 1200


def test_it_refuses_to_change_the_id_but_accepts_it_sent_back_unchanged(api: APIClient) -> None:
    session = Session.objects.create()
    url = reverse("session-detail", args=[session.pk])
    response = api.patch(url, {"id": CLIENT_ULID}, format="json")
    assert "id" in assert_error_shape(response, 400, "validation_error")["details"]
    read = api.get(url).json()
    echoed = api.put(url, {**read, "summary_embedding": None, "id": session.pk.lower(), "summary": "s"},
                     format="json")
    assert echoed.status_code == 200, echoed.content
    assert echoed.json()["summary"] == "s"


def test_it_filters_by_status_state_project_and_command_type(api: APIClient) -> None:
    Session.objects.create(key="a", status="running", state="planning", project_path="/p/one",
                           command_type="plan")
    Session.objects.create(key="b", status="completed", state="complete", project_path="/p/two",
                           command_type="bug")
    for params, expected in [
        ({"status": "running"}, {"a"}),
        ({"status": ["running", "completed"]}, {"a", "b"}),
        ({"state": "complete"}, {"b"}),
        ({"project_path": "/p/one"}, {"a"}),
        ({"command_type": "bug"}, {"b"}),
        ({"key": "b"}, {"b"}),
    ]:
        results = api.get(SESSIONS, params).json()["results"]
        assert {row["key"] for row in results} == expected, params


def test_it_rejects_an_unknown_filter_value(api: APIClient) -> None:
    response = api.get(SESSIONS, {"status": "nope"})
    assert_error_shape(response, 400, "validation_error")


def test_it_filters_by_created_range(api: APIClient) -> None:
    old = Session.objects.create(key="old")
    Session.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=10))
    Session.objects.create(key="new")
    since = (timezone.now() - timedelta(days=1)).isoformat()
    results = api.get(SESSIONS, {"created_after": since}).json()["results"]
    assert [row["key"] for row in results] == ["new"]
    results = api.get(SESSIONS, {"created_before": since}).json()["results"]
    assert [row["key"] for row in results] == ["old"]


def test_it_orders(api: APIClient) -> None:
    for key in ("b", "c", "a"):
        Session.objects.create(key=key)
    assert [r["key"] for r in api.get(SESSIONS, {"ordering": "key"}).json()["results"]] == ["a", "b", "c"]
    assert [r["key"] for r in api.get(SESSIONS, {"ordering": "-key"}).json()["results"]] == ["c", "b", "a"]


def test_it_paginates_with_links(api: APIClient) -> None:
    for i in range(5):
        Session.objects.create(key=f"s{i}")
    first = api.get(SESSIONS, {"page_size": 2}).json()
    assert first["count"] == 5
    assert len(first["results"]) == 2
    assert first["previous"] is None
    assert "page=2" in first["next"]
    last = api.get(first["next"]).json()
    assert last["previous"] is not None


def test_it_caps_the_page_size(api: APIClient) -> None:
    for i in range(3):
        Session.objects.create(key=f"s{i}")
    assert len(api.get(SESSIONS, {"page_size": 100000}).json()["results"]) == 3


def test_it_round_trips_the_summary_embedding_as_base64(api: APIClient) -> None:
    response = api.post(SESSIONS, {"summary_embedding": "AAECAw=="}, format="json")
    assert response.status_code == 201
    assert bytes(Session.objects.get().summary_embedding) == b"\x00\x01\x02\x03"
    assert response.json()["summary_embedding"] == "AAECAw=="
    bad = api.post(SESSIONS, {"summary_embedding": "%%%"}, format="json")
    assert_error_shape(bad, 400, "validation_error")


def test_it_rounds_total_cost_cents_half_away_from_zero_like_the_stats(api: APIClient) -> None:
    session = Session.objects.create(total_cost_usd="0.125000")
    assert api.get(reverse("session-detail", args=[session.pk])).json()["total_cost_cents"] == 13


def test_the_session_answers_what_runs_now_from_the_claims(api: APIClient) -> None:
    session = make_session(key="work", current_wave=1)
    first = make_task(session, "t-1", status="completed")
    started = timezone.now() - timedelta(minutes=3)
    make_task(session, "t-2", depends_on=(first,), status="in_progress", claimed_by="exec-a", started_at=started)
    make_task(session, "t-10", depends_on=(first,), status="not_started")
    work = api.get(f"{SESSIONS}{session.pk}/").json()["current_work"]
    assert (work["wave"], work["waves_running"]) == (2, [2])  # derived from the tasks, not the stale current_wave
    [running] = work["in_progress"]
    assert (running["key"], running["agent"], running["wave"], running["lease_expires_at"]) == ("t-2", "exec-a", 2,
                                                                                                 None)
    assert running["started_at"].startswith(started.strftime("%Y-%m-%dT%H:%M"))
    listed = api.get(SESSIONS, {"key": "work"}).json()["results"]
    assert listed[0]["current_work"] is None  # lists stay one query per page


def test_current_work_is_read_only(api: APIClient) -> None:
    session = Session.objects.create(key="ro")
    body = assert_error_shape(api.patch(f"{SESSIONS}{session.pk}/", {"current_work": {"wave": 9}}, format="json"),
                              400, "validation_error")
    assert "current_work" in body["details"], body
