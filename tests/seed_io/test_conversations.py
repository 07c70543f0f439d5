"""import_seed conversations: Acode's conversations.db, built from seed 002's DDL."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from conversations_app.models import Chat, ChatTag, Message, Run
from conversations_app.services import run_create
from ralphsite.core.models import SeedRow
from tests.seed_io.helpers import import_seed, seed_database, summary_row

pytestmark = pytest.mark.django_db

CHAT_1, CHAT_2, CHAT_3 = "01JH1000000000000000000001", "01JH1000000000000000000002", "chat-not-a-ulid"
TOOL_CALLS = [{"id": "call_1", "name": "read_file", "arguments": {"path": "src/앱.py"}, "result": "…",
               "status": "completed"}]


def _conversations_db(path: Path) -> Path:
    return seed_database(path, "conversations", {
        "chats": [
            {"id": CHAT_1, "title": "Refactor the parser 🛠", "tags": '["refactor", "파서"]', "worktree_id": "wt-1",
             "is_deleted": 0, "deleted_at": None, "created_at": "2026-01-01T10:00:00Z",
             "updated_at": "2026-01-01T11:00:00Z", "sync_status": "synced", "version": 3},
            {"id": CHAT_2, "title": "지워진 대화", "tags": None, "worktree_id": None, "is_deleted": 1,
             "deleted_at": "2026-01-02T00:00:00Z", "created_at": "2026-01-01T12:00:00Z",
             "updated_at": "2026-01-02T00:00:00Z", "sync_status": None, "version": None},
            {"id": CHAT_3, "title": "odd tags", "tags": "refactor,misc", "worktree_id": None, "is_deleted": 0,
             "deleted_at": None, "created_at": "2026-01-03T00:00:00Z", "updated_at": "2026-01-03T00:00:00Z",
             "sync_status": "conflict", "version": 1},
        ],
        "runs": [
            {"id": f"01JH20000000000000000000{n:02d}", "chat_id": chat, "status": status,
             "started_at": f"2026-01-01T10:{n:02d}:00Z", "completed_at": None if status == "running" else
             f"2026-01-01T10:{n:02d}:30Z", "tokens_used": 100 * n if n else None, "sequence_number": seq,
             "sync_status": "failed" if n == 3 else "pending"}
            for n, (chat, status, seq) in enumerate([(CHAT_1, "completed", 1), (CHAT_1, "failed", 2),
                                                     (CHAT_1, "running", 5), (CHAT_2, "cancelled", 1)])],
        "messages": [
            {"id": f"01JH30000000000000000000{n:02d}", "run_id": "01JH2000000000000000000000", "role": role,
             "content": content, "tool_calls": json.dumps(TOOL_CALLS) if role == "assistant" else None,
             "created_at": f"2026-01-01T10:00:{n:02d}Z", "sequence_number": n + 1, "sync_status": "pending"}
            for n, (role, content) in enumerate([("system", "You are Acode."), ("user", "파서를 리팩터링해 주세요 🙏"),
                                                 ("assistant", "Reading the tokenizer first."),
                                                 ("tool", ""), ("user", "thanks")])],
    })


def test_it_imports_chats_runs_and_messages_with_their_counters_and_tags(tmp_path: Path, api: APIClient) -> None:
    output = import_seed("conversations", _conversations_db(tmp_path / "conversations.db"))
    assert [summary_row(output, t) for t in ("chats", "runs", "messages")] == [["3", "3", "0", "0", "0", "0"],
                                                                              ["4", "4", "0", "0", "0", "0"],
                                                                              ["5", "5", "0", "0", "0", "0"]]
    chat = Chat.objects.get(pk=CHAT_1)
    assert (chat.title, chat.tags, chat.worktree_id, chat.sync_status, chat.version, chat.run_count) == (
        "Refactor the parser 🛠", ["refactor", "파서"], "wt-1", "synced", 3, 5)
    assert chat.created_at == datetime(2026, 1, 1, 10, tzinfo=UTC)
    assert sorted(ChatTag.objects.filter(chat=chat).values_list("tag", flat=True)) == ["refactor", "파서"]
    deleted = Chat.objects.get(pk=CHAT_2)
    assert (deleted.is_deleted, deleted.deleted_at, deleted.sync_status, deleted.version, deleted.tags) == (
        True, datetime(2026, 1, 2, tzinfo=UTC), "pending", 1, [])
    odd = Chat.objects.get(pk=SeedRow.objects.get(source_table="chats", source_key=CHAT_3).object_id)
    assert odd.tags == [] and SeedRow.objects.get(source_key=CHAT_3).extra == {"tags": "refactor,misc",
                                                                              "worktree_id": None}

    assert {r.status for r in Run.objects.all()} == {"completed", "failed", "running", "cancelled"}
    first = Run.objects.get(pk="01JH2000000000000000000000")
    assert (first.tokens_used, first.sequence_number, first.message_count) == (0, 1, 5)
    messages = list(Message.objects.filter(run=first).order_by("sequence_number"))
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[1].content == "파서를 리팩터링해 주세요 🙏" and messages[2].tool_calls == TOOL_CALLS
    assert messages[0].tool_calls is None

    # The next run of the chat follows its imported runs; tags and search answer over the import.
    assert run_create(data={"chat_id": chat.pk}).sequence_number == 6
    tagged = api.get("/api/v1/chats/", {"tag": "파서"})
    assert tagged.status_code == 200 and [c["id"] for c in tagged.json()["results"]] == [CHAT_1]
    found = api.get("/api/v1/search/", {"q": "리팩터링", "kind": "message"})
    assert [hit["id"] for hit in found.json()["results"]] == [messages[1].pk]


def test_a_second_import_creates_nothing(tmp_path: Path) -> None:
    path = _conversations_db(tmp_path / "conversations.db")
    import_seed("conversations", path)
    again = import_seed("conversations", path)
    assert "nothing new" in again and summary_row(again, "messages") == ["5", "0", "0", "5", "0", "0"]
    assert Message.objects.count() == 5 and ChatTag.objects.count() == 2
