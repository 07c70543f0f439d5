"""The admin: chat page with runs inline and a link to its conversation; actions; observations and patterns."""

import pytest
from django.test import Client
from django.urls import reverse

from conversations_app import services
from conversations_app.models import Chat, Message, Observation, SyncMapping

pytestmark = pytest.mark.django_db


def test_the_chat_page_lists_its_runs_and_links_the_conversation(admin_client: Client, make_run) -> None:
    run = make_run()
    html = admin_client.get(reverse("admin:conversations_app_chat_change", args=[run.chat_id])).content.decode()
    assert reverse("admin:conversations_app_chat_transcript", args=[run.chat_id]) in html
    assert reverse("admin:conversations_app_run_change", args=[run.pk]) in html  # the runs inline links


def test_the_actions_soft_delete_restore_and_mark_synced(admin_client: Client, make_chat) -> None:
    chats = [make_chat(title=f"c{i}", tags=["ops"]) for i in range(2)]
    url = reverse("admin:conversations_app_chat_changelist")
    ids = [c.pk for c in chats]
    admin_client.post(url, {"action": "soft_delete_chats", "_selected_action": ids})
    assert Chat.objects.filter(is_deleted=True).count() == 2
    assert admin_client.get(url, {"is_deleted__exact": "1", "tag": "ops"}).status_code == 200
    admin_client.post(url, {"action": "restore_chats", "_selected_action": ids})
    assert Chat.objects.filter(is_deleted=False, version=3).count() == 2
    admin_client.post(url, {"action": "mark_synced", "_selected_action": ids})
    assert set(Chat.objects.values_list("sync_status", flat=True)) == {"synced"}


def test_the_chat_form_saves_through_the_versioned_service(admin_client: Client, make_chat) -> None:
    chat = make_chat(title="before")
    url = reverse("admin:conversations_app_chat_change", args=[chat.pk])
    response = admin_client.post(url, {"title": "after", "tags": '["a"]', "worktree_id": "", "session": "",
                                       "sync_status": "pending", "remote_id": "", "runs-TOTAL_FORMS": "0",
                                       "runs-INITIAL_FORMS": "0"})
    assert response.status_code == 302, response.content.decode()[:2000]
    chat.refresh_from_db()
    assert (chat.title, chat.tags, chat.version) == ("after", ["a"], 2)
    assert list(chat.tag_rows.values_list("tag", flat=True)) == ["a"]


def test_the_chat_form_refuses_to_overwrite_a_change_made_while_it_was_open(admin_client: Client, make_chat) -> None:
    chat = make_chat(title="before")
    url = reverse("admin:conversations_app_chat_change", args=[chat.pk])
    assert 'name="opened_version" value="1"' in admin_client.get(url).content.decode()
    Chat.objects.filter(pk=chat.pk).update(title="an agent's change", version=2)  # meanwhile, via the API
    response = admin_client.post(url, {"title": "mine", "tags": "[]", "worktree_id": "", "session": "",
                                       "sync_status": "pending", "remote_id": "", "opened_version": "1",
                                       "runs-TOTAL_FORMS": "0", "runs-INITIAL_FORMS": "0"})
    assert response.status_code == 200  # the form again, with the error
    assert "changed while you edited it (version 1 → 2)" in response.content.decode()
    chat.refresh_from_db()
    assert (chat.title, chat.version) == ("an agent's change", 2)


def test_observations_are_searchable_and_patterns_sorted_by_frequency(admin_client: Client, session) -> None:
    Observation.objects.create(session=session, type="error", tool_name="Bash", content="segfault in parser")
    Observation.objects.create(session=session, type="note", content="lunch")
    page = admin_client.get(reverse("admin:conversations_app_observation_changelist"), {"q": "segfault"})
    assert "1 observation" in page.content.decode()
    services.pattern_record(pattern_type="tool_usage", description="rare", project="a")
    for project in ("a", "b"):
        services.pattern_record(pattern_type="tool_usage", description="common", project=project)
    html = admin_client.get(reverse("admin:conversations_app_globalpattern_changelist")).content.decode()
    assert html.index("common") < html.index("rare")


def test_the_sync_mapping_is_browsable_and_read_only(admin_client: Client, make_chat) -> None:
    chat = make_chat()
    services.sync_mark_synced(items=[{"entity": "chat", "id": chat.pk, "remote_id": "remote-7", "version": 1}])
    page = admin_client.get(reverse("admin:conversations_app_syncmapping_changelist"), {"q": "remote-7"})
    assert page.status_code == 200 and chat.pk in page.content.decode()
    mapping = SyncMapping.objects.get()
    assert admin_client.get(reverse("admin:conversations_app_syncmapping_add")).status_code == 403
    url = reverse("admin:conversations_app_syncmapping_change", args=[mapping.pk])
    admin_client.post(url, {"entity": "chat", "local_id": chat.pk, "remote_id": "tampered"})
    assert SyncMapping.objects.get().remote_id == "remote-7"


def test_the_chat_list_finds_a_sessions_chats(admin_client: Client, make_chat, session) -> None:
    make_chat(title="linked chat", session=session)
    make_chat(title="loose chat")
    html = admin_client.get(reverse("admin:conversations_app_chat_changelist"), {"q": session.key}).content.decode()
    assert "linked chat" in html and "loose chat" not in html


def test_the_delete_button_soft_deletes_a_chat_with_runs(admin_client: Client, make_run, append) -> None:
    chats = []
    for _ in range(2):
        run = make_run()
        append(run, "kept until retention")
        chats.append(run.chat)
    url = reverse("admin:conversations_app_chat_delete", args=[chats[0].pk])
    assert "soft delete: restorable" in admin_client.get(url).content.decode()
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    changelist = reverse("admin:conversations_app_chat_changelist")
    response = admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [chats[1].pk],
                                              "post": "yes"})
    assert response.status_code == 302
    assert list(Chat.objects.values_list("is_deleted", flat=True)) == [True, True]
    assert Message.objects.count() == 2
