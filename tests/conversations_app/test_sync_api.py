"""sync/pending/ and sync/mark-synced/: what needs syncing, and marking it synced in one transaction."""

import pytest
from rest_framework.test import APIClient

from conversations_app.models import Chat, Message, Run, SyncMapping
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db

PENDING = "/api/v1/sync/pending/"
MARK = "/api/v1/sync/mark-synced/"


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
    items = [{"entity": "chat", "id": run.chat_id, "remote_id": "remote-chat"},
             {"entity": "run", "id": run.pk, "remote_id": "remote-run"},
             {"entity": "message", "id": message.pk, "remote_id": "remote-message"}]
    response = api.post(MARK, {"items": items}, format="json")
    assert response.json() == {"marked": {"chat": 1, "run": 1, "message": 1}}
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
    items = [{"entity": "chat", "id": run.chat_id, "remote_id": "rc"},
             {"entity": "run", "id": run.pk, "remote_id": "rr"},
             {"entity": "message", "id": message.pk, "remote_id": "rm"}]
    api.post(MARK, {"items": items}, format="json")
    for resource, remote_id, local_id in (("chats", "rc", run.chat_id), ("runs", "rr", run.pk),
                                          ("messages", "rm", message.pk)):
        rows = api.get(f"/api/v1/{resource}/", {"remote_id": remote_id}).json()["results"]
        assert [row["id"] for row in rows] == [local_id], resource
        assert api.get(f"/api/v1/{resource}/", {"remote_id": "elsewhere"}).json()["results"] == []


def test_it_marks_nothing_when_one_id_is_unknown(api: APIClient, make_chat) -> None:
    chat = make_chat()
    items = [{"entity": "chat", "id": chat.pk, "remote_id": "r1"},
             {"entity": "run", "id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "remote_id": "r2"}]
    body = assert_error_shape(api.post(MARK, {"items": items}, format="json"), 404, "ACODE-CONV-DATA-002")
    assert body["details"] == {"missing": {"run": ["01ARZ3NDEKTSV4RRFFQ69G5FAV"]}}
    assert Chat.objects.get().sync_status == "pending" and not SyncMapping.objects.exists()


def test_it_validates_the_request(api: APIClient) -> None:
    assert_error_shape(api.post(MARK, {"items": []}, format="json"), 400, "validation_error")
    body = assert_error_shape(api.post(MARK, {"items": [{"entity": "chatroom", "id": "x", "remote_id": "r"}]},
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
