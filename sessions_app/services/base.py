"""What the orchestration services share: row locks and time stamps."""

from typing import Any, TypeVar

from django.db import connection, models
from django.db.models import QuerySet
from django.utils import timezone

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
