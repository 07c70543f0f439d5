"""The ledger's domain verbs: issue record, checkpoint restore, token pricing, dead-letter retry."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import Checkpoint, CheckpointRestore, DeadLetter, Issue, LedgerEvent, ModelPrice, TokenUsage
from sessions_app.models import Session
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import make_session, utc

pytestmark = pytest.mark.django_db


# -- issues ----------------------------------------------------------------------------------
# `POST issues/` is the same verb as `POST issues/record/` (seed 001: the same issue in the next
# iteration increments count, no new row): every recording test runs against both.
RECORD_URLS = pytest.mark.parametrize("url", ["/api/v1/issues/record/", "/api/v1/issues/"], ids=["record", "create"])


@RECORD_URLS
def test_it_recording_a_known_signature_increments_count_and_last_seen(api: APIClient, url: str) -> None:
    session = make_session()
    body = {"session": session.id, "task_key": "auth-002", "kind": "typecheck",
            "signature": "typecheck:src/api.ts:42:TS2322", "message": "first", "file": "src/api.ts", "line": 42}
    first = api.post(url, {**body, "seen_at": "2025-02-01T10:00:00Z"}, format="json")
    second = api.post(url, {**body, "message": "again", "seen_at": "2025-02-01T11:00:00Z"}, format="json")
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"]
    issue = Issue.objects.get()
    assert issue.count == 2 and issue.message == "again"
    assert issue.first_seen_at == utc("2025-02-01T10:00:00Z") and issue.last_seen_at == utc("2025-02-01T11:00:00Z")
    events = LedgerEvent.objects.filter(type="issue_recorded", session=session)
    assert [event.data["count"] for event in events] == [1, 2]


@RECORD_URLS
def test_it_the_same_signature_in_another_session_is_another_issue(api: APIClient, url: str) -> None:
    body = {"task_key": "t", "kind": "lint", "signature": "lint:a", "message": "m"}
    answers = [api.post(url, {**body, "session": session.id}, format="json").status_code
               for session in (make_session(), make_session())]
    assert answers == [201, 201]
    assert Issue.objects.count() == 2


@RECORD_URLS
def test_it_recording_for_an_unknown_session_is_a_400(api: APIClient, url: str) -> None:
    response = api.post(url, {"session": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "task_key": "t", "kind": "lint",
                              "signature": "s", "message": "m"}, format="json")
    assert_error_shape(response, 400, "validation_error")
    assert not LedgerEvent.objects.exists()


@RECORD_URLS
def test_it_a_client_id_names_a_new_issue_and_a_repeat_keeps_the_first_id(api: APIClient, url: str) -> None:
    session = make_session()
    body = {"session": session.id, "task_key": "t", "kind": "lint", "signature": "lint:b", "message": "m"}
    first_id, other_id = "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01BX5ZZKBKACTAV9WEVGEMMVRZ"
    first = api.post(url, {**body, "id": first_id.lower()}, format="json")
    again = api.post(url, {**body, "id": other_id}, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"] == first_id
    assert again.json()["count"] == 2 and not Issue.objects.filter(pk=other_id).exists()


@RECORD_URLS
def test_it_a_client_id_taken_by_another_issue_is_a_409_leaving_nothing(api: APIClient, url: str) -> None:
    session = make_session()
    taken = Issue.objects.create(session=session, task_key="t", kind="lint", signature="lint:old", message="m")
    body = {"id": taken.id, "session": session.id, "task_key": "t", "kind": "lint", "signature": "lint:new",
            "message": "m"}
    assert_error_shape(api.post(url, body, format="json"), 409, "conflict")
    assert list(Issue.objects.values_list("signature", "count")) == [("lint:old", 1)]
    assert not LedgerEvent.objects.exists()


def test_it_issues_list_sorted_by_count(api: APIClient) -> None:
    session = make_session()
    for signature, count in (("a", 1), ("b", 5), ("c", 3)):
        Issue.objects.create(session=session, task_key="t", kind="k", signature=signature, message="m", count=count)
    assert [row["signature"] for row in api.get("/api/v1/issues/").json()["results"]] == ["b", "c", "a"]


# -- checkpoints -----------------------------------------------------------------------------

def test_it_creating_a_checkpoint_appends_a_checkpoint_created_event(api: APIClient) -> None:
    session = make_session()
    response = api.post("/api/v1/checkpoints/", {"key": "chkpt-1", "session": session.id, "git_ref": "abc"},
                        format="json")
    assert response.status_code == 201, response.content
    event = LedgerEvent.objects.get(type="checkpoint_created")
    assert event.session_id == session.id and event.data["key"] == "chkpt-1"


def test_it_checkpoint_keys_are_unique_and_a_repeated_create_is_a_retry(api: APIClient) -> None:
    body = {"key": "chkpt-1", "session": make_session().id, "git_ref": "abc123", "summary": "green"}
    first = api.post("/api/v1/checkpoints/", body, format="json")
    assert first.status_code == 201, first.content
    again = api.post("/api/v1/checkpoints/", body, format="json")
    assert again.status_code == 200 and again.json() == first.json()
    changed = assert_error_shape(api.post("/api/v1/checkpoints/", {**body, "git_ref": "def456"}, format="json"),
                                 409, "conflict")
    assert changed["details"] == {"key": "chkpt-1"}
    assert Checkpoint.objects.get().git_ref == "abc123"
    assert LedgerEvent.objects.filter(type="checkpoint_created").count() == 1  # the retry appended nothing


def test_it_restore_records_a_restore_and_refuses_an_unrestorable_checkpoint(api: APIClient) -> None:
    checkpoint_id = api.post("/api/v1/checkpoints/", {"key": "chkpt-1"}, format="json").json()["id"]
    response = api.post(f"/api/v1/checkpoints/{checkpoint_id}/restore/", {"agent": "orchestrator"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["checkpoint_key"] == "chkpt-1"
    api.patch(f"/api/v1/checkpoints/{checkpoint_id}/", {"can_restore": False}, format="json")
    body = assert_error_shape(api.post(f"/api/v1/checkpoints/{checkpoint_id}/restore/", {}, format="json"),
                              409, "checkpoint_not_restorable")
    assert "chkpt-1" in body["message"]
    assert_error_shape(api.post("/api/v1/checkpoint-restores/", {"checkpoint": checkpoint_id}, format="json"),
                       409, "checkpoint_not_restorable")
    assert CheckpointRestore.objects.count() == 1


def test_it_checkpoint_restores_are_history_the_api_does_not_edit(api: APIClient) -> None:
    from ledger_app.models import Checkpoint

    restore = CheckpointRestore.objects.create(checkpoint=Checkpoint.objects.create(key="chkpt-1"))
    url = f"/api/v1/checkpoint-restores/{restore.id}/"
    assert_error_shape(api.patch(url, {"note": "x"}, format="json"), 405, "method_not_allowed")
    assert_error_shape(api.delete(url), 405, "method_not_allowed")


# -- token usage and prices ------------------------------------------------------------------

def test_it_usage_without_a_cost_is_priced_from_the_price_in_force_and_marked_estimated(api: APIClient) -> None:
    ModelPrice.objects.create(model="sonnet", valid_from=utc("2025-01-01T00:00:00Z"), input_per_mtok=3,
                              output_per_mtok=15, cached_read_per_mtok=Decimal("0.3"),
                              cached_write_per_mtok=Decimal("3.75"), reasoning_per_mtok=15)
    ModelPrice.objects.create(model="sonnet", valid_from=utc("2025-06-01T00:00:00Z"), input_per_mtok=6,
                              output_per_mtok=30)
    session = make_session()
    rows = [
        {"session": session.id, "model": "sonnet", "input_tokens": 1000, "output_tokens": 2000,
         "cached_read_tokens": 10000, "cached_write_tokens": 400, "reasoning_tokens": 100,
         "recorded_at": "2025-03-01T00:00:00Z"},
        {"session": session.id, "model": "sonnet", "input_tokens": 1000, "output_tokens": 2000,
         "recorded_at": "2025-07-01T00:00:00Z"},
        {"session": session.id, "model": "sonnet", "input_tokens": 1, "cost_usd": "0.500000"},
    ]
    response = api.post("/api/v1/token-usage/", rows, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    # 1000*3 + 2000*15 + 10000*0.3 + 400*3.75 + 100*15 = 3000 + 30000 + 3000 + 1500 + 1500 = 39000 / 1e6
    assert [row["cost_usd"] for row in body] == ["0.039000", "0.066000", "0.500000"]
    assert [row["is_estimated"] for row in body] == [True, True, False]
    session = Session.objects.get(pk=session.id)
    assert session.total_cost_usd == Decimal("0.605")
    assert session.total_tokens_input == 2001 and session.total_tokens_output == 4000


def test_it_usage_without_a_cost_and_without_a_price_is_a_400(api: APIClient) -> None:
    response = api.post("/api/v1/token-usage/", {"model": "unpriced", "input_tokens": 5}, format="json")
    body = assert_error_shape(response, 400, "no_model_price")
    assert "unpriced" in body["message"] and body["details"] == {"cost_usd": [body["message"]]}
    assert TokenUsage.objects.count() == 0


def test_it_token_usage_is_append_only_in_the_api(api: APIClient) -> None:
    row = TokenUsage.objects.create(model="m")
    assert_error_shape(api.patch(f"/api/v1/token-usage/{row.id}/", {"model": "x"}, format="json"), 405,
                       "method_not_allowed")
    assert_error_shape(api.delete(f"/api/v1/token-usage/{row.id}/"), 405, "method_not_allowed")


# -- dead letters ----------------------------------------------------------------------------

def test_it_retry_takes_a_due_item_once(api: APIClient) -> None:
    item = DeadLetter.objects.create(operation_type="push", retry_after=timezone.now() - timedelta(seconds=1))
    response = api.post(f"/api/v1/dead-letters/{item.id}/retry/")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "retried" and response.json()["attempt_count"] == 2
    assert_error_shape(api.post(f"/api/v1/dead-letters/{item.id}/retry/"), 409, "dead_letter_not_due")
    assert_error_shape(api.post("/api/v1/dead-letters/999999/retry/"), 404, "not_found")


def test_it_retry_refuses_an_item_not_yet_due_or_expired(api: APIClient) -> None:
    later = DeadLetter.objects.create(operation_type="a", retry_after=timezone.now() + timedelta(hours=1))
    expired = DeadLetter.objects.create(operation_type="b", expires_at=timezone.now() - timedelta(hours=1))
    for item in (later, expired):
        assert_error_shape(api.post(f"/api/v1/dead-letters/{item.id}/retry/"), 409, "dead_letter_not_due")


def test_it_claim_takes_the_oldest_due_item_then_answers_204(api: APIClient) -> None:
    now = timezone.now()
    DeadLetter.objects.create(operation_type="push", retry_after=now + timedelta(hours=1))
    older = DeadLetter.objects.create(operation_type="push", retry_after=now - timedelta(hours=2))
    newer = DeadLetter.objects.create(operation_type="push", retry_after=now - timedelta(hours=1))
    assert api.post("/api/v1/dead-letters/claim/", {}, format="json").json()["id"] == older.id
    assert api.post("/api/v1/dead-letters/claim/", {"operation_type": "push"}, format="json").json()["id"] == newer.id
    assert api.post("/api/v1/dead-letters/claim/", {}, format="json").status_code == 204


# -- hostile input ---------------------------------------------------------------------------

def test_it_refuses_a_line_number_the_database_cannot_store(api: APIClient) -> None:
    body = {"session": make_session().id, "task_key": "t", "kind": "lint", "signature": "s", "message": "m",
            "line": 2**31}
    assert "line" in assert_error_shape(api.post("/api/v1/issues/record/", body, format="json"), 400,
                                        "validation_error")["details"]
    assert not Issue.objects.exists()


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_it_refuses_a_float_that_is_not_a_number(api: APIClient, number: str) -> None:
    body = {"session": make_session().id, "gate": "tests", "iteration": 1, "passed": True, "coverage_percent": number}
    response = api.post("/api/v1/gate-results/", body, format="json")
    assert "coverage_percent" in assert_error_shape(response, 400, "validation_error")["details"]


@pytest.mark.parametrize(("url", "body", "field"), [
    ("/api/v1/gate-results/", {"gate": "tests", "iteration": 1, "passed": True, "details": {"log": "\u0000"}},
     "details"),
    ("/api/v1/dead-letters/", {"operation_type": "push", "operation_params": {"\u0000": 1}}, "operation_params"),
])
def test_it_refuses_json_with_a_nul_character(api: APIClient, url: str, body: dict, field: str) -> None:
    response = api.post(url, {**body, "session": make_session().id}, format="json")
    assert field in assert_error_shape(response, 400, "validation_error")["details"]


@pytest.mark.parametrize("url", ["/api/v1/token-usage/{}/", "/api/v1/errors/{}/", "/api/v1/dead-letters/{}/"])
def test_it_answers_an_integer_id_out_of_range_with_a_404(api: APIClient, url: str) -> None:
    assert_error_shape(api.get(url.format(2**64)), 404, "not_found")


def test_it_retrying_a_dead_letter_id_out_of_range_is_a_404(api: APIClient) -> None:
    assert_error_shape(api.post(f"/api/v1/dead-letters/{2**64}/retry/"), 404, "not_found")


def test_it_records_a_list_of_usage_rows_with_a_constant_number_of_queries(
        api: APIClient, django_assert_num_queries, django_assert_max_num_queries) -> None:
    sessions = [make_session(), make_session()]

    def rows(count: int) -> list[dict]:
        return [{"session": sessions[i % 2].id, "model": "m", "input_tokens": 1, "cost_usd": "0.000001"}
                for i in range(count)]

    # Auth, the sessions, the sessions locked, the savepoint pair, the INSERT, one total UPDATE per session.
    with django_assert_max_num_queries(8) as few:
        assert api.post("/api/v1/token-usage/", rows(2), format="json").status_code == 201
    with django_assert_num_queries(len(few.captured_queries)):
        assert api.post("/api/v1/token-usage/", rows(40), format="json").status_code == 201
    assert [Session.objects.get(pk=s.id).total_tokens_input for s in sessions] == [21, 21]


def test_it_usage_for_an_unknown_session_is_a_400_recording_nothing(api: APIClient) -> None:
    known = make_session()
    rows = [{"session": known.id, "model": "m", "cost_usd": "1"},
            {"session": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "model": "m", "cost_usd": "1"}]
    body = assert_error_shape(api.post("/api/v1/token-usage/", rows, format="json"), 400, "validation_error")
    assert "01ARZ3NDEKTSV4RRFFQ69G5FAV" in body["message"]
    assert not TokenUsage.objects.exists() and Session.objects.get(pk=known.id).total_cost_usd == 0
