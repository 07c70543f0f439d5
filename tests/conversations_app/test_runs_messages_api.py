"""Runs and messages: server-assigned sequence numbers, single and bulk append, tool calls, closed runs."""

import pytest
from django.db import connection
from rest_framework.test import APIClient

from conversations_app.models import Message, Run
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db

MISSING = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
TOOL_CALL = {"id": "call-1", "name": "bash", "arguments": {"cmd": "pytest -q"}, "result": "3 passed",
             "status": "completed"}


def _messages_url(run: Run) -> str:
    return f"/api/v1/runs/{run.pk}/messages/"


def test_it_numbers_runs_per_chat(api: APIClient, make_chat) -> None:
    chat, other = make_chat(), make_chat()
    numbers = [api.post("/api/v1/runs/", {"chat": c.pk}, format="json").json()["sequence_number"]
               for c in (chat, chat, other, chat)]
    assert numbers == [1, 2, 1, 3]


def test_it_refuses_a_client_sequence_number(api: APIClient, make_chat, make_run) -> None:
    body = assert_error_shape(api.post("/api/v1/runs/", {"chat": make_chat().pk, "sequence_number": 7},
                                       format="json"), 400, "validation_error")
    assert "sequence_number" in body["details"]
    response = api.post(_messages_url(make_run()), {"role": "user", "content": "x", "sequence_number": 9},
                        format="json")
    assert_error_shape(response, 400, "validation_error")


def test_it_reports_a_missing_parent_as_a_foreign_key_violation(api: APIClient) -> None:
    body = assert_error_shape(api.post("/api/v1/runs/", {"chat": MISSING}, format="json"), 400,
                              "ACODE-CONV-DATA-004")
    assert "chat" in body["details"]
    assert_error_shape(api.post("/api/v1/messages/", {"run": MISSING, "role": "user", "content": "x"},
                                format="json"), 400, "ACODE-CONV-DATA-004")
    assert_error_shape(api.post(f"/api/v1/runs/{MISSING}/messages/", {"role": "user", "content": "x"},
                                format="json"), 404, "ACODE-CONV-DATA-002")


def test_it_appends_one_message_and_returns_it(api: APIClient, make_run) -> None:
    run = make_run()
    response = api.post(_messages_url(run), {"role": "assistant", "content": "hi", "tool_calls": [TOOL_CALL]},
                        format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["run"], body["sequence_number"], body["tool_calls"]) == (run.pk, 1, [TOOL_CALL])


def test_it_appends_a_list_of_1000_in_one_transaction_with_few_queries(api: APIClient, make_run,
                                                                       django_assert_max_num_queries) -> None:
    run = make_run()
    api.post(_messages_url(run), {"role": "system", "content": "first"}, format="json")
    payload = [{"role": "user", "content": f"message {i}"} for i in range(1000)]
    # auth, lock run, the INSERTs (bulk_create's: one on PostgreSQL, as many multi-row INSERTs as
    # SQLite's 999 parameters need), counter update. Never one INSERT per message.
    message_inserts = -(-1000 // connection.ops.bulk_batch_size(Message._meta.concrete_fields, [None] * 1000))
    with django_assert_max_num_queries(15 + message_inserts):
        response = api.post(_messages_url(run), payload, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert [m["sequence_number"] for m in body] == list(range(2, 1002))
    assert Run.objects.get(pk=run.pk).message_count == 1001


def test_it_refuses_more_than_1000_or_an_empty_list(api: APIClient, make_run) -> None:
    run = make_run()
    too_many = [{"role": "user", "content": "x"}] * 1001
    assert_error_shape(api.post(_messages_url(run), too_many, format="json"), 400, "validation_error")
    assert_error_shape(api.post(_messages_url(run), [], format="json"), 400, "validation_error")
    assert_error_shape(api.post(_messages_url(run), "text", format="json"), 400, "validation_error")
    assert not Message.objects.exists()


def test_it_writes_nothing_when_one_item_of_a_bulk_append_is_invalid(api: APIClient, make_run) -> None:
    run = make_run()
    payload = [{"role": "user", "content": "ok"}, {"role": "robot", "content": "bad"}]
    body = assert_error_shape(api.post(_messages_url(run), payload, format="json"), 400, "validation_error")
    assert "tool" in str(body["details"])  # the allowed roles are named
    assert not Message.objects.exists()


@pytest.mark.parametrize("tool_calls", [
    "not a list",
    [{"id": "1", "name": "bash"}],  # no arguments, no status
    [TOOL_CALL | {"status": "exploded"}],
    [TOOL_CALL | {"extra": 1}],
    [["not", "an", "object"]],
])
def test_it_rejects_malformed_tool_calls(api: APIClient, make_run, tool_calls) -> None:
    response = api.post(_messages_url(make_run()), {"role": "assistant", "content": "", "tool_calls": tool_calls},
                        format="json")
    body = assert_error_shape(response, 400, "validation_error")
    assert "tool_calls" in body["details"]


def test_it_refuses_appending_to_a_finished_run_unless_reopened(api: APIClient, make_run) -> None:
    run = make_run()
    assert api.patch(f"/api/v1/runs/{run.pk}/", {"status": "completed"}, format="json").json()["completed_at"]
    body = assert_error_shape(api.post(_messages_url(run), {"role": "user", "content": "late"}, format="json"),
                              409, "run_not_running")
    assert body["details"] == {"status": "completed"}
    response = api.post(_messages_url(run) + "?reopen=true", {"role": "user", "content": "late"}, format="json")
    assert response.status_code == 201
    run.refresh_from_db()
    assert (run.status, run.completed_at) == ("running", None)


def test_it_returns_the_same_messages_for_a_retried_append(api: APIClient, make_run) -> None:
    run = make_run()
    payload = [{"id": "01J9ZQ6Y8K3V5X7B2N4M6P8R0T", "role": "user", "content": "once"},
               {"id": "01J9ZQ6Y8K3V5X7B2N4M6P8R0V", "role": "assistant", "content": "twice"}]
    first = api.post(_messages_url(run), payload, format="json").json()
    retry = api.post(_messages_url(run), payload, format="json")
    assert retry.status_code == 201 and retry.json() == first
    assert Message.objects.count() == 2
    changed = [payload[0] | {"content": "different"}]
    assert_error_shape(api.post(_messages_url(run), changed, format="json"), 409, "conflict")


def test_it_lists_messages_of_a_run_in_sequence_order_with_a_cursor(api: APIClient, make_run, append) -> None:
    run, other = make_run(), make_run()
    append(other, "elsewhere")
    append(run, *[f"m{i}" for i in range(5)])
    first = api.get("/api/v1/messages/", {"run": run.pk, "page_size": 3}).json()
    second = api.get(first["next"]).json()
    contents = [m["content"] for m in first["results"] + second["results"]]
    assert contents == [f"m{i}" for i in range(5)]
    assert api.get("/api/v1/messages/", {"run": run.pk, "role": "assistant"}).json()["results"] == []


def test_it_lists_the_latest_messages_of_a_run_first(api: APIClient, make_run, append) -> None:
    run = make_run()
    append(run, *[f"m{i}" for i in range(5)])
    first = api.get("/api/v1/messages/", {"run": run.pk, "ordering": "-sequence_number", "page_size": 3}).json()
    assert [m["sequence_number"] for m in first["results"]] == [5, 4, 3]
    assert [m["sequence_number"] for m in api.get(first["next"]).json()["results"]] == [2, 1]
    body = assert_error_shape(api.get("/api/v1/messages/", {"ordering": "created_at"}), 400, "validation_error")
    assert "allowed: sequence_number" in body["details"]["ordering"][0]


def test_it_finishes_a_run_with_tokens(api: APIClient, make_run) -> None:
    run = make_run()
    body = api.patch(f"/api/v1/runs/{run.pk}/", {"status": "failed", "tokens_used": 42}, format="json").json()
    assert (body["status"], body["tokens_used"]) == ("failed", 42) and body["completed_at"]
    assert_error_shape(api.patch(f"/api/v1/runs/{run.pk}/", {"tokens_used": -1}, format="json"), 400,
                       "validation_error")
    assert_error_shape(api.delete(f"/api/v1/runs/{run.pk}/"), 405, "method_not_allowed")


def test_it_lists_100_messages_of_a_run_in_two_queries(api: APIClient, make_run, append,
                                                       django_assert_num_queries) -> None:
    run = make_run()
    append(run, *[f"m{i}" for i in range(120)])
    with django_assert_num_queries(2):  # auth, one page (the benchmark's list_100_messages)
        body = api.get("/api/v1/messages/", {"run": run.pk, "page_size": 100}).json()
    assert [m["sequence_number"] for m in body["results"]] == list(range(1, 101))
    with django_assert_num_queries(2):
        assert api.get(f"/api/v1/messages/{body['results'][0]['id']}/").status_code == 200


def test_it_stamps_completed_at_on_a_run_created_finished(api: APIClient, make_chat) -> None:
    body = api.post("/api/v1/runs/", {"chat": make_chat().pk, "status": "completed", "tokens_used": 7},
                    format="json").json()
    assert body["status"] == "completed" and body["completed_at"]
    run = Run.objects.get(pk=body["id"])
    assert run.completed_at >= run.started_at


def test_it_refuses_a_message_created_for_a_finished_run_unless_reopened(api: APIClient, make_run) -> None:
    run = make_run(status="cancelled")
    body = {"run": run.pk, "role": "user", "content": "late"}
    assert_error_shape(api.post("/api/v1/messages/", body, format="json"), 409, "run_not_running")
    assert not Message.objects.exists()
    response = api.post("/api/v1/messages/?reopen=true", body, format="json")
    assert response.status_code == 201 and response.json()["sequence_number"] == 1
    run.refresh_from_db()
    assert (run.status, run.completed_at) == ("running", None)


def test_it_refuses_a_tool_call_that_is_no_object(api: APIClient, make_run) -> None:
    # Found by schemathesis: `[null]` was stored, and every later read of the message was a 500.
    run = make_run()
    created = api.post("/api/v1/messages/", {"run": run.pk, "role": "tool", "content": "x", "tool_calls": [None]},
                       format="json")
    assert_error_shape(created, 400, "validation_error")
    message = api.post("/api/v1/messages/", {"run": run.pk, "role": "tool", "content": "x"}, format="json")
    assert message.status_code == 201, message.content
    url = f"/api/v1/messages/{message.json()['id']}/"
    assert_error_shape(api.patch(url, {"tool_calls": [None, None]}, format="json"), 400, "validation_error")
    assert api.get(url).json()["tool_calls"] == message.json()["tool_calls"]
    assert api.patch(url, {"tool_calls": None}, format="json").status_code == 200


def test_a_patch_replaces_a_tool_call_whole_so_it_needs_its_required_fields(api: APIClient, make_run) -> None:
    # Found by schemathesis's coverage phase: a PATCH let an item miss `status` (DRF hands the PATCH's
    # partial down to nested items), it was stored, and every read of the message was a 500.
    message = api.post("/api/v1/messages/", {"run": make_run().pk, "role": "tool", "content": "x"}, format="json")
    url = f"/api/v1/messages/{message.json()['id']}/"
    item = {name: value for name, value in TOOL_CALL.items() if name != "status"}
    body = assert_error_shape(api.patch(url, {"tool_calls": [item]}, format="json"), 400, "validation_error")
    # Keyed by item index on every DRF version we support (3.16 listed every item, {} for valid ones).
    assert body["details"] == {"tool_calls": {"0": {"status": ["This field is required."]}}}, body
    assert body["message"] == "tool_calls: 0: status: This field is required.", body

    body = assert_error_shape(api.patch(url, {"tool_calls": [TOOL_CALL, item]}, format="json"), 400, "validation_error")
    assert body["details"] == {"tool_calls": {"1": {"status": ["This field is required."]}}}, body  # failing items only
    assert api.get(url).status_code == 200
    assert api.patch(url, {"tool_calls": [TOOL_CALL]}, format="json").json()["tool_calls"] == [TOOL_CALL]
