"""ralphy (seed 001): `.ralphy/ralphy.db`, runs with their tasks, ledger, issues and checkpoints.

A run is a session whose key is the run id; times are epoch integers (seconds or milliseconds). A
task has no title in ralphy: its id is its title. Rows already ours (a session, task, issue or
checkpoint with the same key) are linked, not duplicated.
"""

from datetime import datetime
from typing import Any, ClassVar

from django.db import models

from ledger_app.models import Checkpoint, Issue, LedgerEvent
from ledger_app.services import events_usage_record
from ralphsite.moving.seed_io.base import (
    ImportContext,
    MappedTable,
    Row,
    SeedImporter,
    SessionTable,
    TableImport,
    count,
    enum,
    flag,
    json_or,
    moment,
    number,
    text,
    usd,
)
from ralphsite.moving.seed_io.ledger_rows import event_values_checked
from sessions_app.models import Task


def epoch(value: Any) -> datetime | None:
    """ralphy's times: epoch seconds or milliseconds (the seed does not say which; `moment` reads both)."""
    return moment(value)


def _epoch_millis(when: datetime | None) -> int | None:
    """Ours → ralphy's (TypeScript's Date.now()). A time the file wrote in seconds differs from this, so the
    import keeps it on the SeedRow (MappedTable) and an export writes the seconds back."""
    return None if when is None else round(when.timestamp() * 1000)


epoch.inverse = _epoch_millis  # type: ignore[attr-defined] - read by MappedTable and export_seed

TASK_STATUS = enum({"pending": "not_started", "running": "in_progress", "done": "completed"},
                   default="not_started")


class RunTable(MappedTable):
    sessions, session_table = "run_id", "runs"


class Runs(SessionTable):
    table, created = "runs", "started_at"
    columns: ClassVar = {"status": ("status", text), "started_at": ("started_at", epoch),
                         "ended_at": ("ended_at", epoch), "config_json": ("config", json_or(dict))}


class Tasks(RunTable):
    table, model, key_columns, created = "tasks", Task, ("run_id", "task_id"), "started_at"
    columns: ClassVar = {"status": ("status", TASK_STATUS), "iter_count": ("iteration_count", count),
                         "started_at": ("started_at", epoch), "ended_at": ("completed_at", epoch),
                         "last_phase": ("last_phase", text)}

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["key"] = values["title"] = text(row["task_id"])
        return values

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        return Task.objects.filter(session_id=values["session_id"], key=values["key"]).first()

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"task_id": obj.key}


class Ledger(RunTable):
    table, model, order_by = "ledger", LedgerEvent, "id"
    append_only = True
    columns: ClassVar = {
        "ts": ("timestamp", epoch), "type": ("type", text), "task_id": ("task_key", text), "phase": ("phase", text),
        "duration_ms": ("duration_ms", number), "tokens_in": ("tokens_in", count), "tokens_out": ("tokens_out", count),
        "tokens_total": ("tokens_total", number), "cost_usd": ("cost_usd", usd),
        "is_estimated": ("is_estimated", flag), "meta_json": ("meta", json_or(dict)),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if not isinstance(values, dict):
            return values
        if row["tokens_total"] is None:  # the sum, not the field's default
            values["tokens_total"] = values["tokens_in"] + values["tokens_out"]
        return event_values_checked(self, row, values)

    def after_insert(self, objects: list[models.Model]) -> None:
        """The calls the events report (`backend_call_finished`'s tokens and cost) go into the one book of usage, as
        events appended through the API do: session cost, daily cost and the dashboard count them; a request id
        in `meta_json` is kept, so a call reported again is not counted twice."""
        events_usage_record(events=objects)


class Issues(RunTable):
    table, model, created = "issues", Issue, None
    columns: ClassVar = {
        "task_id": ("task_key", text), "kind": ("kind", text), "signature": ("signature", text),
        "message": ("message", text), "file": ("file", text), "line": ("line", number),
        "ts": ("first_seen_at", epoch), "count": ("count", lambda v: count(v, 1)),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["last_seen_at"] = values["first_seen_at"]
        return values

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        return Issue.objects.filter(session_id=values["session_id"], signature=values["signature"]).first()


class Checkpoints(RunTable):
    table, model, created = "checkpoints", Checkpoint, "ts"
    columns: ClassVar = {"task_id": ("task_key", text), "git_ref": ("git_ref", text),
                         "summary": ("summary", text), "ts": ("created_at", epoch)}

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["key"] = text(row["id"])
        return values

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        return Checkpoint.objects.filter(session_id=values["session_id"], key=values["key"]).first()

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"id": obj.key}


class RalphyImporter(SeedImporter):
    kind = "ralphy"
    tables: ClassVar[list[TableImport]] = [Runs(), Tasks(), Ledger(), Issues(), Checkpoints()]
