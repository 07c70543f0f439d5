"""Acode (seed 002): `.agent/data/conversations.db`, chats → runs → messages.

Acode's ids are ULIDs and stay ours; soft-deleted chats (is_deleted, deleted_at) come in as
tombstones. What we derive is kept right: a chat's tag rows (`?tag=`), a chat's `run_count` and a
run's `message_count` (the last sequence number handed out, so new runs and messages follow on).
"""

import json
from typing import Any, ClassVar

from django.db import models
from django.db.models import Max, OuterRef, Subquery
from django.db.models.functions import Coalesce, Greatest

from conversations_app.models import Chat, ChatTag, Message, Run
from ralphsite.moving.seed_io.base import (
    EXTRA,
    ImportContext,
    MappedTable,
    Parent,
    Row,
    SeedImporter,
    TableImport,
    count,
    enum,
    flag,
    json_value,
    moment,
    same,
    text,
)

SYNC_STATUS = enum({}, default="pending")


class Chats(MappedTable):
    table, model, sessions, created = "chats", Chat, None, "created_at"
    columns: ClassVar = {
        "title": ("title", text), "worktree_id": ("worktree_id", text), "is_deleted": ("is_deleted", flag),
        "deleted_at": ("deleted_at", moment), "created_at": ("created_at", moment),
        "updated_at": ("updated_at", moment), "sync_status": ("sync_status", SYNC_STATUS),
        "version": ("version", lambda v: count(v, 1)),
    }
    reads = frozenset({"tags"})

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            tags = json_value(row["tags"], default=[])
            if isinstance(tags, list) and all(isinstance(tag, str) for tag in tags):
                values["tags"] = tags
                if row["tags"] is None:
                    values.setdefault(EXTRA, {})["tags"] = None
            else:  # not a JSON list of strings: kept as written, the chat untagged
                values["tags"] = []
                values.setdefault(EXTRA, {})["tags"] = row["tags"]
        return values

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"id": obj.pk, "tags": json.dumps(obj.tags, ensure_ascii=False)}

    def after_insert(self, objects: list[models.Model]) -> None:
        ChatTag.objects.bulk_create([ChatTag(chat_id=chat.pk, tag=tag) for chat in objects
                                     for tag in dict.fromkeys(chat.tags)])


class Runs(MappedTable):
    table, model, sessions, created = "runs", Run, None, "started_at"
    columns: ClassVar = {
        "status": ("status", same), "started_at": ("started_at", moment), "completed_at": ("completed_at", moment),
        "tokens_used": ("tokens_used", count), "sequence_number": ("sequence_number", count),
        "sync_status": ("sync_status", SYNC_STATUS),
    }
    parents: ClassVar = {"chat_id": Parent("chats", "chat_id", "chat")}

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"id": obj.pk}

    def after_insert(self, objects: list[models.Model]) -> None:
        last = Run.objects.filter(chat=OuterRef("pk")).values("chat").annotate(m=Max("sequence_number")).values("m")
        Chat.objects.filter(pk__in={run.chat_id for run in objects}).update(
            run_count=Greatest("run_count", Coalesce(Subquery(last), 0)))


class Messages(MappedTable):
    table, model, sessions, created = "messages", Message, None, "created_at"
    columns: ClassVar = {
        "role": ("role", same), "content": ("content", text), "tool_calls": ("tool_calls", json_value),
        "created_at": ("created_at", moment), "sequence_number": ("sequence_number", count),
        "sync_status": ("sync_status", SYNC_STATUS),
    }
    parents: ClassVar = {"run_id": Parent("runs", "run_id", "run")}

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"id": obj.pk}

    def after_insert(self, objects: list[models.Model]) -> None:
        last = Message.objects.filter(run=OuterRef("pk")).values("run").annotate(m=Max("sequence_number")) \
            .values("m")
        Run.objects.filter(pk__in={message.run_id for message in objects}).update(
            message_count=Greatest("message_count", Coalesce(Subquery(last), 0)))


class ConversationsImporter(SeedImporter):
    kind = "conversations"
    tables: ClassVar[list[TableImport]] = [Chats(), Runs(), Messages()]
