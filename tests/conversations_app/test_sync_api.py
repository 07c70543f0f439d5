"""sync/pending/ and sync/mark-synced/: what needs syncing, and marking it synced in one transaction."""

import pytest
from rest_framework.test import APIClient

from conversations_app.models import Chat, Message, Run, SyncMapping
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db

PENDING = "/api/v1/sync/pending/"
MARK = "/api/v1/sync/mark-synced/"


def _items(api: APIClient, remote_ids: dict[str, str]) -> list[dict]:
    """Mark-synced items for these local ids, each with the version sync/pending/ gives it."""
    pending = api.get(PENDING).json()
    return [{"entity": entity, "id": row["id"], "remote_id": remote_ids[row["id"]], "version": row["version"]}
            for entity, data in pending.items() for row in data["results"] if row["id"] in remote_ids]


def test_it_lists_pending_rows_per_entity(api: APIClient, make_run, append) -> None:
    run = make_run()
    message = append(run, "hi")[0]
    body = api.get(PENDING).json()
    assert {entity: (data["count"], [r["id"] for r in data["results"]]) for entity, data in body.items()} == {
        "chat": (1, [run.chat_id]), "run": (1, [run.pk]), "message": (1, [message.pk])}
    assert body["chat"]["results"][0]["version"] == 1
    only_runs = api.get(PENDING, {"entity": "run", "limit": 1}).json()
    assert list(only_runs) == ["run"]


def test_it_marks_rows_synced_with_their_remote_ids(api: APIClient, make_run, append) -> None:
    run = make_run()
    message = append(run, "hi")[0]
    items = _items(api, {run.chat_id: "remote-chat", run.pk: "remote-run", message.pk: "remote-message"})
    response = api.post(MARK, {"items": items}, format="json")
    assert response.json()["marked"] == {"chat": 1, "run": 1, "message": 1}
    assert [result["status"] for result in response.json()["results"]] == [200, 200, 200]
    chat = Chat.objects.get()
    assert (chat.sync_status, chat.remote_id, chat.version) == ("synced", "remote-chat", 1)
    assert Run.objects.get().remote_id == "remote-run"
    assert Message.objects.get().sync_status == "synced"
    assert set(SyncMapping.objects.values_list("entity", "local_id", "remote_id")) == {
        ("chat", run.chat_id, "remote-chat"), ("run", run.pk, "remote-run"),
        ("message", message.pk, "remote-message")}
    assert all(data["count"] == 0 for data in api.get(PENDING).json().values())
    # Marking again with a new remote id updates the mapping.
    api.post(MARK, {"items": [items[0] | {"remote_id": "remote-chat-2"}]}, format="json")
    assert SyncMapping.objects.get(entity="chat").remote_id == "remote-chat-2"


def test_it_finds_chats_runs_and_messages_by_remote_id(api: APIClient, make_run, append) -> None:
    run, other = make_run(), make_run()
    message = append(run, "hi")[0]
    append(other, "unsynced")
    api.post(MARK, {"items": _items(api, {run.chat_id: "rc", run.pk: "rr", message.pk: "rm"})}, format="json")
    for resource, remote_id, local_id in (("chats", "rc", run.chat_id), ("runs", "rr", run.pk),
                                          ("messages", "rm", message.pk)):
        rows = api.get(f"/api/v1/{resource}/", {"remote_id": remote_id}).json()["results"]
        assert [row["id"] for row in rows] == [local_id], resource
        assert api.get(f"/api/v1/{resource}/", {"remote_id": "elsewhere"}).json()["results"] == []


def test_it_marks_nothing_when_one_id_is_unknown(api: APIClient, make_chat) -> None:
    chat = make_chat()
    items = [{"entity": "chat", "id": chat.pk, "remote_id": "r1", "version": 1},
             {"entity": "run", "id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "remote_id": "r2", "version": 1}]
    body = assert_error_shape(api.post(MARK, {"items": items}, format="json"), 404, "ACODE-CONV-DATA-002")
    assert body["details"] == {"missing": {"run": ["01ARZ3NDEKTSV4RRFFQ69G5FAV"]}}
    assert Chat.objects.get().sync_status == "pending" and not SyncMapping.objects.exists()


def test_it_validates_the_request(api: APIClient) -> None:
    assert_error_shape(api.post(MARK, {"items": []}, format="json"), 400, "validation_error")
    body = assert_error_shape(api.post(MARK, {"items": [{"entity": "chatroom", "id": "x", "remote_id": "r",
                                                          "version": 1}]},
                                       format="json"), 400, "validation_error")
    assert "message" in str(body["details"])
    assert_error_shape(api.get(PENDING, {"entity": "everything"}), 400, "validation_error")


def test_it_lists_pending_rows_in_a_constant_number_of_queries(api: APIClient, make_run, append,
                                                               django_assert_num_queries) -> None:
    def pending_queries(runs: int) -> None:
        for _ in range(runs):
            append(make_run(), "a", "b")
        with django_assert_num_queries(7):  # auth, then a count and a page per entity
            body = api.get(PENDING, {"limit": 50}).json()
        assert body["message"]["count"] == 2 * Run.objects.count()

    pending_queries(2)
    pending_queries(20)


def test_an_item_edited_since_pending_was_read_is_refused_and_stays_pending(api: APIClient, make_run,
                                                                            append) -> None:
    run = make_run()
    message = append(run, "hi")[0]
    items = _items(api, {run.chat_id: "rc", run.pk: "rr", message.pk: "rm"})
    assert api.patch(f"/api/v1/chats/{run.chat_id}/", {"title": "edited offline"}, format="json").status_code == 200
    assert api.patch(f"/api/v1/runs/{run.pk}/", {"tokens_used": 5}, format="json").status_code == 200
    body = api.post(MARK, {"items": items}, format="json").json()
    assert body["marked"] == {"chat": 0, "run": 0, "message": 1}
    by_id = {result["id"]: result for result in body["results"]}
    assert (by_id[run.chat_id]["status"], by_id[run.chat_id]["code"], by_id[run.chat_id]["version"]) == (
        409, "stale_version", 2)
    assert (by_id[run.pk]["status"], by_id[run.pk]["code"]) == (409, "stale_version")
    assert by_id[message.pk]["status"] == 200
    pending = api.get(PENDING).json()
    assert ([r["id"] for r in pending["chat"]["results"]], [r["id"] for r in pending["run"]["results"]]) == (
        [run.chat_id], [run.pk])
    assert Chat.objects.get().remote_id == "" and not SyncMapping.objects.filter(entity__in=["chat", "run"]).exists()
    # With the versions read again the edits are sent, and marked.
    again = _items(api, {run.chat_id: "rc", run.pk: "rr"})
    assert api.post(MARK, {"items": again}, format="json").json()["marked"] == {"chat": 1, "run": 1}


def test_the_mapping_rows_are_listed(api: APIClient, make_run, append) -> None:
    run = make_run()
    api.post(MARK, {"items": _items(api, {run.chat_id: "rc", run.pk: "rr"})}, format="json")
    rows = api.get("/api/v1/sync-mappings/").json()["results"]
    assert {(row["entity"], row["local_id"], row["remote_id"]) for row in rows} == {
        ("chat", run.chat_id, "rc"), ("run", run.pk, "rr")}
    only = api.get("/api/v1/sync-mappings/", {"remote_id": "rr"}).json()["results"]
    assert [row["local_id"] for row in only] == [run.pk]
    assert api.get("/api/v1/sync-mappings/", {"entity": "message"}).json()["results"] == []


def test_adding_runs_and_messages_moves_the_chats_updated_at_not_its_version(api: APIClient, make_chat) -> None:
    chat = make_chat()
    before = Chat.objects.get().updated_at
    run = api.post("/api/v1/runs/", {"chat": chat.pk}, format="json").json()
    after_run = Chat.objects.get()
    assert after_run.updated_at > before and after_run.version == 1
    api.post(f"/api/v1/runs/{run['id']}/messages/", {"role": "user", "content": "hi"}, format="json")
    after_message = Chat.objects.get()
    assert after_message.updated_at > after_run.updated_at and after_message.version == 1
