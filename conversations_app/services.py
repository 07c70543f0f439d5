"""Every operation that changes conversations or memory: one function per domain verb, one transaction."""

import hashlib
from datetime import datetime
from typing import Any, Literal

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from conversations_app import selectors
from conversations_app.errors import NOT_FOUND_CODES, missing_parent, not_found
from conversations_app.models import (
    Chat,
    ChatTag,
    GlobalPattern,
    Message,
    Observation,
    Run,
    RunStatus,
    SyncMapping,
    SyncStatus,
)
from conversations_app.selectors import SYNC_MODELS
from ralphsite.core.access import current_scope
from ralphsite.core.activity import sessions_touch
from ralphsite.core.errors import Conflict, InvalidInput, NotFound, PreconditionFailed
from ralphsite.core.services import instance_create, instance_update
from ralphsite.core.shapes import stored_values_check

MAX_BULK_MESSAGES = 1000
TERMINAL_RUN_STATUSES = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)


# -- chats -------------------------------------------------------------------------------------

def _chat_tags_set(*, chat_id: str, tags: list[str], replace: bool) -> None:
    if replace:
        ChatTag.objects.filter(chat_id=chat_id).delete()
    ChatTag.objects.bulk_create([ChatTag(chat_id=chat_id, tag=tag) for tag in dict.fromkeys(tags)])


def chat_create(*, data: dict[str, Any]) -> Chat:
    data = {name: value for name, value in data.items() if name != "version"}  # a new chat is version 1
    with transaction.atomic():
        chat = instance_create(model=Chat, data=data)
        if chat.tags:
            _chat_tags_set(chat_id=chat.id, tags=chat.tags, replace=False)
    return chat


def _chat_versioned_update(*, chat: Chat, expected_version: int | None, stale_error: type[Conflict] |
                           type[PreconditionFailed], changes: dict[str, Any]) -> Chat:
    """Apply `changes` only if the chat still has `expected_version` (one UPDATE … WHERE version = ?),
    incrementing the version; otherwise refuse with the current version in the details."""
    expected = chat.version if expected_version is None else expected_version
    now = timezone.now()
    updated = Chat.objects.filter(pk=chat.pk, version=expected).update(
        **changes, version=F("version") + 1, updated_at=now)
    if not updated:
        current = Chat.objects.filter(pk=chat.pk).values_list("version", flat=True).first()
        if current is None:
            raise not_found("chat", chat.pk)
        raise stale_error(f"Chat {chat.pk} is at version {current}, not {expected}; reload it and retry.",
                          details={"current_version": current, "expected_version": expected})
    for name, value in changes.items():
        setattr(chat, name, value)
    chat.version, chat.updated_at = expected + 1, now
    sessions_touch([chat.session_id])
    return chat


def chat_update(*, chat: Chat, data: dict[str, Any], if_match: int | None = None) -> Chat:
    """Update a chat under optimistic concurrency: a stale `If-Match` → 412, a stale `version` → 409.

    A change needs syncing again, so it sets sync_status back to pending (unless the caller sets it).
    """
    data = dict(data)
    body_version = data.pop("version", None)
    with transaction.atomic():
        if if_match is not None:
            expected, stale_error = if_match, PreconditionFailed
        else:
            expected, stale_error = body_version, Conflict
        if if_match is not None and body_version is not None and body_version != if_match:
            raise InvalidInput("The version field and If-Match disagree.",
                               details={"version": [f"{body_version} ≠ If-Match {if_match}"]})
        changes = {"sync_status": SyncStatus.PENDING, **data}
        chat = _chat_versioned_update(chat=chat, expected_version=expected, stale_error=stale_error,
                                      changes=changes)
        if "tags" in data:
            _chat_tags_set(chat_id=chat.pk, tags=data["tags"], replace=True)
    return chat


def chat_soft_delete(*, chat: Chat, if_match: int | None = None) -> Chat:
    """Tombstone the chat: it and its runs and messages leave default lists, details and search."""
    with transaction.atomic():
        return _chat_versioned_update(chat=chat, expected_version=if_match, stale_error=PreconditionFailed,
                                      changes={"is_deleted": True, "deleted_at": timezone.now(),
                                               "sync_status": SyncStatus.PENDING})


def chat_restore(*, chat_id: str) -> Chat:
    with transaction.atomic():
        chat = Chat.objects.filter(pk=chat_id).first()
        if chat is None:
            raise not_found("chat", chat_id)
        if not chat.is_deleted:
            return chat
        return _chat_versioned_update(chat=chat, expected_version=None, stale_error=Conflict,
                                      changes={"is_deleted": False, "deleted_at": None,
                                               "sync_status": SyncStatus.PENDING})


def chat_purge_deleted(*, deleted_before: datetime, include_unsynced: bool = False,
                       dry_run: bool = False) -> tuple[list[str], dict[str, int]]:
    """Hard-delete chats tombstoned before `deleted_before`, cascading to their runs and messages.
    A tombstone not yet synced is kept (the remote must learn of the delete) unless `include_unsynced`.
    `dry_run`: the same work, rolled back.

    Returns the purged chat ids and the number of rows removed per model."""
    with transaction.atomic():
        chats = Chat.objects.filter(is_deleted=True, deleted_at__lt=deleted_before)
        if not include_unsynced:
            chats = chats.filter(sync_status=SyncStatus.SYNCED)
        ids = list(chats.values_list("id", flat=True))
        _, per_model = chats.delete()
        if dry_run:
            transaction.set_rollback(True)
    return ids, per_model


# -- runs --------------------------------------------------------------------------------------

def run_create(*, data: dict[str, Any]) -> Run:
    """Create the chat's next run: sequence numbers are gap-free per chat under concurrency (the chat
    row is locked on PostgreSQL; SQLite's BEGIN IMMEDIATE serializes writers; the unique
    constraint is the backstop)."""
    data = dict(data)
    chat_id = data.pop("chat_id")
    if data.get("status") in TERMINAL_RUN_STATUSES and not data.get("completed_at"):
        # A run recorded after it finished (offline sync): it ended now, or when it started if later.
        data.setdefault("started_at", timezone.now())
        data["completed_at"] = max(timezone.now(), data["started_at"])
    with transaction.atomic():
        chat = (Chat.objects.select_for_update(no_key=True).filter(pk=chat_id, is_deleted=False)
                .only("run_count").first())
        if chat is None:
            raise missing_parent("chat", chat_id)
        # Activity moves the chat's updated_at ("recent chats"), not its version: a run added conflicts
        # with no edit of the chat's own fields.
        Chat.objects.filter(pk=chat_id).update(run_count=F("run_count") + 1, updated_at=timezone.now())
        return instance_create(model=Run, data={**data, "chat_id": chat_id,
                                                "sequence_number": chat.run_count + 1})


def run_update(*, run: Run, data: dict[str, Any]) -> Run:
    """Update a run; finishing it stamps completed_at, reopening it clears it."""
    data = dict(data)
    if "chat_id" in data and data.pop("chat_id") != run.chat_id:
        raise InvalidInput("A run cannot move to another chat.", details={"chat": ["Read-only after creation."]})
    status = data.get("status")
    if status in TERMINAL_RUN_STATUSES and not run.completed_at and "completed_at" not in data:
        data["completed_at"] = timezone.now()
    elif status == RunStatus.RUNNING and "completed_at" not in data:
        data["completed_at"] = None
    with transaction.atomic():
        return instance_update(instance=run, data={"sync_status": SyncStatus.PENDING, **data})


# -- messages ----------------------------------------------------------------------------------

def _existing_retries(run_id: str, items: list[dict[str, Any]]) -> dict[str, Message]:
    """Messages of a retried append (client ids already stored): same run and content, or a 409."""
    ids = [item["id"] for item in items if item.get("id")]
    if not ids:
        return {}
    existing = {m.id: m for m in Message.objects.filter(pk__in=ids)}
    for item in items:
        stored = existing.get(item.get("id"))
        if stored is not None and (stored.run_id != run_id or stored.role != item["role"]
                                   or stored.content != item.get("content", "")):
            raise Conflict(f"A message with id {stored.id} already exists with different content.",
                           details={"id": stored.id})
    return existing


def message_append(*, run_id: str, items: list[dict[str, Any]], reopen: bool = False,
                   missing_run: Literal["not_found", "foreign_key"] = "not_found") -> list[Message]:
    """AppendAsync / BulkCreateAsync: append 1…1,000 messages to a run in one transaction.

    Sequence numbers continue the run's, gap-free, under concurrent appends (run row locked on
    PostgreSQL, writers serialized on SQLite, unique constraint as backstop). A finished run refuses
    appends (409 run_not_running) unless `reopen`, which sets it running again. Messages whose client
    id is already stored (a retried request) are returned as they are, not added twice.
    `missing_run`: "not_found" (the run is the URL's resource: 404) or "foreign_key" (a body field: 400).
    """
    if not 1 <= len(items) <= MAX_BULK_MESSAGES:
        raise InvalidInput(f"Append 1 to {MAX_BULK_MESSAGES} messages per request, not {len(items)}.",
                           details={"messages": [f"{len(items)} items"]})
    with transaction.atomic():
        run = selectors.run_for_append(run_id=run_id)
        if run is None:
            raise not_found("run", run_id) if missing_run == "not_found" else missing_parent("run", run_id)
        existing = _existing_retries(run_id, items)
        new_items = [item for item in items if item.get("id") not in existing]
        if not new_items:
            return [existing[item["id"]] for item in items]
        run_changes: dict[str, Any] = {"message_count": F("message_count") + len(new_items)}
        if run.status in TERMINAL_RUN_STATUSES:
            if not reopen:
                raise Conflict(f"Run {run_id} is {run.status}; append with reopen=true to reopen it.",
                               code="run_not_running", details={"status": run.status})
            run_changes |= {"status": RunStatus.RUNNING, "completed_at": None}
        created = [Message(**item, run_id=run_id, sequence_number=run.message_count + position)
                   for position, item in enumerate(new_items, start=1)]
        for message in created:
            stored_values_check(message)
        Message.objects.bulk_create(created)
        Run.objects.filter(pk=run_id).update(**run_changes)
        Chat.objects.filter(pk=run.chat_id).update(updated_at=timezone.now())  # as run_create: activity, no version
        sessions_touch([run.chat.session_id])
    by_id = {m.id: m for m in created} | existing
    return [by_id[item["id"]] for item in items] if existing else created


def message_update(*, message: Message, data: dict[str, Any]) -> Message:
    data = dict(data)
    if "run_id" in data and data.pop("run_id") != message.run_id:
        raise InvalidInput("A message cannot move to another run.", details={"run": ["Read-only after creation."]})
    with transaction.atomic():
        return instance_update(instance=message, data={"sync_status": SyncStatus.PENDING, **data})


# -- memory ------------------------------------------------------------------------------------

def observation_create(*, data: dict[str, Any]) -> Observation:
    with transaction.atomic():
        return instance_create(model=Observation, data=data)


def observation_update(*, observation: Observation, data: dict[str, Any]) -> Observation:
    with transaction.atomic():
        return instance_update(instance=observation, data=data)


def pattern_fingerprint(pattern_type: str, description: str) -> str:
    return hashlib.sha256(f"{pattern_type}\x00{description}".encode()).hexdigest()


def pattern_record(*, pattern_type: str, description: str, project: str = "",
                   embedding: bytes | None = None) -> tuple[GlobalPattern, bool]:
    """Record a pattern seen in `project`: the first time creates it (frequency 1), again increments
    its frequency and adds the project to source_projects. Race-free: the row is locked (PostgreSQL)
    or writers serialized (SQLite); two first recordings racing meet on the unique fingerprint and
    the loser retries as an increment. Returns (pattern, created)."""
    fingerprint = pattern_fingerprint(pattern_type, description)
    for _attempt in range(3):
        with transaction.atomic():
            pattern = GlobalPattern.objects.select_for_update(no_key=True).filter(fingerprint=fingerprint).first()
            if pattern is None:
                try:
                    with transaction.atomic():
                        pattern = GlobalPattern.objects.create(
                            pattern_type=pattern_type, description=description, fingerprint=fingerprint,
                            embedding=embedding, source_projects=[project] if project else [])
                    return pattern, True
                except IntegrityError:
                    continue  # a concurrent first recording won: increment it instead
            if project and project not in pattern.source_projects:
                pattern.source_projects = [*pattern.source_projects, project]
            pattern.frequency += 1
            if embedding is not None:
                pattern.embedding = embedding
            pattern.save(update_fields=["frequency", "source_projects", "embedding", "updated_at"])
            return pattern, False
    raise Conflict("The pattern is being recorded concurrently; retry.", details={"fingerprint": fingerprint})


# -- sync --------------------------------------------------------------------------------------

def sync_mark_synced(*, items: list[dict[str, Any]]) -> dict[str, Any]:
    """Mark chats/runs/messages synced with the remote ids the remote store gave them, and record the
    local ↔ remote mapping, for each item whose `version` (as `sync/pending/` gave it) is still the
    row's: an item edited since is refused (status 409, `stale_version`) and stays pending, so its
    edit is sent next time. An unknown id, or one of a session the request's token does not see,
    refuses the whole call (404, nothing marked). Marking
    synced is sync metadata, not a change: it moves neither the version nor updated_at.

    Returns {"marked": rows marked per entity, "results": one {entity, id, status, ...} per item}."""
    by_entity: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_entity.setdefault(item["entity"], []).append(item)
    counts: dict[str, int] = {}
    outcome: dict[tuple[str, str], dict[str, Any]] = {}
    with transaction.atomic():
        for entity, entity_items in by_entity.items():
            model = SYNC_MODELS[entity]
            ids = [item["id"] for item in entity_items]
            rows = {row.pk: row for row in current_scope().filter(model.objects.select_for_update().filter(pk__in=ids))}
            missing = sorted(set(ids) - set(rows))
            if missing:
                raise NotFound(f"{len(missing)} {entity}(s) do not exist; nothing was marked.",
                               code=NOT_FOUND_CODES[entity], details={"missing": {entity: missing}})
            marked: dict[str, Any] = {}
            for item in entity_items:
                row, current = rows[item["id"]], selectors.sync_version(entity, rows[item["id"]])
                if current != item["version"]:
                    outcome[(entity, item["id"])] = {
                        "status": 409, "code": "stale_version", "version": current,
                        "message": f"The {entity} changed since version {item['version']}: read "
                                   "sync/pending/ again and sync the change."}
                    continue
                row.remote_id, row.sync_status = item["remote_id"], SyncStatus.SYNCED
                marked[row.pk] = row
                outcome[(entity, item["id"])] = {"status": 200, "version": current}
            model.objects.bulk_update(list(marked.values()), ["remote_id", "sync_status"])
            SyncMapping.objects.bulk_create(
                [SyncMapping(entity=entity, local_id=pk, remote_id=row.remote_id) for pk, row in marked.items()],
                update_conflicts=True, unique_fields=["entity", "local_id"], update_fields=["remote_id", "synced_at"])
            counts[entity] = len(marked)
    return {"marked": counts,
            "results": [{"entity": item["entity"], "id": item["id"], **outcome[(item["entity"], item["id"])]}
                        for item in items]}
