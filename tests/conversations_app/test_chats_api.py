"""Chats: optimistic concurrency (version, ETag, If-Match), soft delete and restore, filters, latest run."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from conversations_app import services
from conversations_app.models import Chat
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db

CHATS = "/api/v1/chats/"


def _url(chat: Chat, suffix: str = "") -> str:
    return f"{CHATS}{chat.pk}/{suffix}"


def test_it_carries_the_version_as_an_etag(api: APIClient, make_chat) -> None:
    created = api.post(CHATS, {"title": "t"}, format="json")
    assert created["ETag"] == '"1"'
    chat = Chat.objects.get(pk=created.json()["id"])
    response = api.get(_url(chat))
    assert response["ETag"] == '"1"' and response.json()["version"] == 1


def test_it_increments_the_version_on_every_change(api: APIClient, make_chat) -> None:
    chat = make_chat()
    first = api.patch(_url(chat), {"title": "one"}, format="json")
    second = api.patch(_url(chat), {"tags": ["a"]}, format="json")
    assert (first.json()["version"], second.json()["version"]) == (2, 3)
    assert second["ETag"] == '"3"'


def test_it_refuses_a_stale_if_match_with_412_and_the_current_version(api: APIClient, make_chat) -> None:
    chat = make_chat()
    api.patch(_url(chat), {"title": "moved on"}, format="json")
    response = api.patch(_url(chat), {"title": "stale"}, format="json", HTTP_IF_MATCH='"1"')
    body = assert_error_shape(response, 412, "precondition_failed")
    assert body["details"]["current_version"] == 2
    assert Chat.objects.get(pk=chat.pk).title == "moved on"


def test_it_accepts_a_current_if_match(api: APIClient, make_chat) -> None:
    chat = make_chat()
    response = api.patch(_url(chat), {"title": "ok"}, format="json", HTTP_IF_MATCH='W/"1"')
    assert response.status_code == 200 and response.json()["version"] == 2


def test_it_refuses_a_stale_version_field_with_409(api: APIClient, make_chat) -> None:
    chat = make_chat()
    api.patch(_url(chat), {"title": "moved on"}, format="json")
    response = api.patch(_url(chat), {"title": "stale", "version": 1}, format="json")
    body = assert_error_shape(response, 409, "conflict")
    assert body["details"] == {"current_version": 2, "expected_version": 1}


@pytest.mark.parametrize("header", ["nope", "", "1", '"1', 'W/1', '"1", "2"'])
def test_it_refuses_a_garbage_if_match_naming_the_header(api: APIClient, make_chat, header: str) -> None:
    # The schema's pattern, enforced: an empty header is no "no header" (found by schemathesis).
    chat = make_chat()
    body = assert_error_shape(api.patch(_url(chat), {"title": "x"}, format="json", HTTP_IF_MATCH=header),
                              400, "validation_error")
    assert list(body["details"]) == ["If-Match"], body
    assert api.patch(_url(chat), {"title": "x"}, format="json", HTTP_IF_MATCH="*").status_code == 200


def test_it_sets_a_changed_chat_back_to_pending_sync(api: APIClient, make_chat) -> None:
    chat = make_chat()
    services.sync_mark_synced(items=[{"entity": "chat", "id": chat.pk, "remote_id": "r-1", "version": chat.version}])
    assert api.patch(_url(chat), {"title": "changed"}, format="json").json()["sync_status"] == "pending"


def test_it_soft_deletes_and_restores_with_runs_and_messages(api: APIClient, make_run, append) -> None:
    run = make_run()
    message = append(run, "hello")[0]
    chat = run.chat
    assert api.delete(_url(chat)).status_code == 204
    assert api.get(CHATS).json()["count"] == 0
    assert_error_shape(api.get(f"/api/v1/runs/{run.pk}/"), 404, "ACODE-CONV-DATA-002")
    assert_error_shape(api.get(f"/api/v1/messages/{message.pk}/"), 404, "ACODE-CONV-DATA-003")
    assert api.get("/api/v1/runs/", {"chat": chat.pk}).json()["count"] == 0
    assert api.get("/api/v1/messages/", {"run": run.pk}).json()["results"] == []
    tombstones = api.get(CHATS, {"include_deleted": "true"}).json()["results"]
    assert [(c["id"], c["is_deleted"]) for c in tombstones] == [(chat.pk, True)]
    assert api.get(f"/api/v1/messages/{message.pk}/", {"include_deleted": "true"}).status_code == 200
    # A tombstone is read-only until restored: ?include_deleted is for reads only.
    assert_error_shape(api.patch(_url(chat), {"title": "x"}, format="json"), 404, "ACODE-CONV-DATA-001")
    assert_error_shape(api.patch(_url(chat) + "?include_deleted=true", {"title": "x"}, format="json"), 400,
                       "validation_error")

    restored = api.post(_url(chat, "restore/"))
    assert restored.status_code == 200 and restored.json()["is_deleted"] is False
    assert api.get(f"/api/v1/messages/{message.pk}/").status_code == 200
    assert [m["id"] for m in api.get("/api/v1/messages/", {"run": run.pk}).json()["results"]] == [message.pk]


def test_it_answers_404_with_the_chat_code(api: APIClient) -> None:
    missing = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    for response in (api.get(f"{CHATS}{missing}/"), api.post(f"{CHATS}{missing}/restore/"),
                     api.get(f"{CHATS}{missing}/latest-run/")):
        assert_error_shape(response, 404, "ACODE-CONV-DATA-001")


def test_it_filters_by_tag_worktree_session_sync_status_and_update_time(api: APIClient, make_chat,
                                                                         session) -> None:
    tagged = make_chat(tags=["red", "blue"], worktree_id="wt-a", session=session)
    make_chat(tags=["green"], worktree_id="wt-b")

    def ids(**params: str) -> list[str]:
        return [c["id"] for c in api.get(CHATS, params).json()["results"]]

    assert ids(tag="blue") == [tagged.pk]
    assert ids(worktree="wt-a") == [tagged.pk]
    assert ids(session=session.pk) == [tagged.pk]
    assert len(ids(sync_status="pending")) == 2
    assert ids(updated_after=(timezone.now() + timedelta(minutes=1)).isoformat()) == []


def test_it_rejects_unknown_fields_and_bad_enums(api: APIClient) -> None:
    body = assert_error_shape(api.post(CHATS, {"title": "t", "colour": "red"}, format="json"), 400,
                              "validation_error")
    assert "colour" in body["details"]
    body = assert_error_shape(api.post(CHATS, {"title": "t", "sync_status": "maybe"}, format="json"), 400,
                              "validation_error")
    assert "conflict" in body["details"]["sync_status"][0]


def test_it_returns_the_latest_run(api: APIClient, make_chat, make_run) -> None:
    chat = make_chat()
    assert_error_shape(api.get(_url(chat, "latest-run/")), 404, "ACODE-CONV-DATA-002")
    make_run(chat)
    latest = make_run(chat)
    response = api.get(_url(chat, "latest-run/"))
    assert response.json()["id"] == latest.pk and response.json()["sequence_number"] == 2


def test_it_soft_deletes_only_at_the_version_if_match_names(api: APIClient, make_chat) -> None:
    chat = make_chat()
    api.patch(_url(chat), {"title": "moved on"}, format="json")
    body = assert_error_shape(api.delete(_url(chat), HTTP_IF_MATCH='"1"'), 412, "precondition_failed")
    assert body["details"]["current_version"] == 2
    assert not Chat.objects.get(pk=chat.pk).is_deleted
    assert api.delete(_url(chat), HTTP_IF_MATCH='"2"').status_code == 204
    assert Chat.objects.get(pk=chat.pk).is_deleted


def test_it_refuses_a_version_field_that_contradicts_if_match(api: APIClient, make_chat) -> None:
    chat = make_chat()
    body = assert_error_shape(api.patch(_url(chat), {"title": "x", "version": 2}, format="json",
                                        HTTP_IF_MATCH='"1"'), 400, "validation_error")
    assert "version" in body["details"]
    assert Chat.objects.get(pk=chat.pk).version == 1


def test_it_carries_the_new_version_as_the_etag_of_a_restore(api: APIClient, make_chat) -> None:
    chat = make_chat()
    api.delete(_url(chat))
    restored = api.post(_url(chat, "restore/"))
    assert restored.json()["version"] == 3 and restored["ETag"] == '"3"'
    again = api.post(_url(chat, "restore/"))  # restoring a live chat changes nothing
    assert again.json()["version"] == 3
