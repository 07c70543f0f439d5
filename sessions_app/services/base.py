"""What the orchestration services share: row locks and time stamps."""

from typing import Any, TypeVar

from django.db import connection, models
from django.db.models import QuerySet
from django.utils import timezone

from ralphsite.core.errors import Conflict, detail_time
from sessions_app.models import FINISHED_SESSION_STATUSES, Session

M = TypeVar("M", bound=models.Model)


def stamp_on_change(data: dict[str, Any], *, previous: Any, field: str, value: Any, stamp: str) -> dict[str, Any]:
    """Set the time `stamp` when `field` becomes `value` (an explicit stamp in `data` wins) and clear
    it when `field` leaves `value`: resolved_at, completed_at and verified_at follow their status."""
    if field not in data or data[field] == previous:
        return data
    if data[field] == value:
        return {stamp: timezone.now(), **data}
    return {**data, stamp: None}


def lock_rows(queryset: QuerySet[M], *, skip_locked: bool = False) -> QuerySet[M]:
    """Row locks for a read-then-write transaction, per backend.

    PostgreSQL: SELECT … FOR NO KEY UPDATE [SKIP LOCKED], so concurrent claimers lock different rows.
    NO KEY: no row's key ever changes, and a plain FOR UPDATE also blocks the FOR KEY SHARE lock that
    every foreign-key check takes at COMMIT (Django's constraints are deferred), so a transaction
    inserting a row that references a locked task waited on it while holding the session row the
    locker wanted next: a deadlock, seen under many agents on several hosts (the scale-out benchmark).
    SQLite: unchanged — every transaction starts with BEGIN IMMEDIATE and so already holds the
    database's write lock while it reads.
    """
    if connection.vendor == "postgresql":
        # OF self: only the queried table's rows (joined optional rows cannot be locked).
        return queryset.select_for_update(skip_locked=skip_locked, of=("self",), no_key=True)
    return queryset


# What a finished session still takes (issue #27 §3; docs/resources.md "A finished session"): resume/ (which
# runs it again), poll-signal/ (its pending signals are still delivered), a PATCH of these fields (ralph-mem
# writes the summary when the session ends), its deletion, and the ledger's and conversations' records
# (events, usage, checkpoints, messages: what happened is recorded even when it is reported late).
# Every other orchestration verb is a 409 `session_finished`.
FINISHED_SESSION_WRITABLE_FIELDS = frozenset({"summary", "summary_embedding", "token_count", "exit_reason"})


def session_open_check(*, session_id: str | None, verb: str) -> None:
    """Refuse `verb` on a finished session: 409 `session_finished` (resume/ runs it again)."""
    if session_id is None:
        return
    row = Session.objects.filter(pk=session_id).values("status", "ended_at").first()
    if row is not None and row["status"] in FINISHED_SESSION_STATUSES:
        raise Conflict(f"Session {session_id} is {row['status']}: it is read-only ({verb} refused); resume/ runs it "
                       "again.", code="session_finished",
                       details={"session": session_id, "status": row["status"],
                                "ended_at": detail_time(row["ended_at"]), "verb": verb})
