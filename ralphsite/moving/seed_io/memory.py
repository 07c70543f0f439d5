"""ralph-mem (seed 004): `.ralph-mem/memory.db` (sessions, observations, loop_runs) and the global
`~/.config/ralph-mem/global.db` (global_patterns). Either file is a `memory` database.

Seed column → field: sessions.id → Session.key (the key agents use; ours is a ULID); observations.id
→ Observation.id when it is a ULID, else a ULID derived from the row (ralphsite.moving.seed_io.base.ulid_for),
the original kept on its SeedRow; global patterns already recorded (same type and description) are
linked, not duplicated. observations_fts is not read: our search indexes the imported rows itself (and
an export's observations fill the file's observations_fts through its own trigger).
"""

from typing import Any, ClassVar

from django.db import models

from conversations_app.models import GlobalPattern, Observation
from conversations_app.services import pattern_fingerprint
from ralphsite.moving.seed_io.base import (
    ImportContext,
    MappedTable,
    Row,
    SeedImporter,
    SeedImportError,
    SessionTable,
    TableImport,
    blob,
    count,
    json_or,
    moment,
    text,
)
from sessions_app.models import LoopRun, SessionStatus


def importance(value: Any) -> float:
    return 0.5 if value is None else float(value)  # the column's DEFAULT


class OwnId(MappedTable):
    """A table whose rows a new export names by our id (an imported row gets its own id back)."""

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"id": obj.pk}


class MemorySessions(SessionTable):
    table, created, required = "sessions", "started_at", False
    columns: ClassVar = {
        "project_path": ("project_path", text), "started_at": ("started_at", moment), "ended_at": ("ended_at", moment),
        "summary": ("summary", text), "summary_embedding": ("summary_embedding", blob),
        "token_count": ("token_count", count),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        assert isinstance(values, dict)
        values["updated_at"] = values["last_activity_at"]
        # ralph-mem's session has no status: one with an end time has ended (it is not an interrupted run).
        values["status"] = SessionStatus.COMPLETED if values["ended_at"] else SessionStatus.RUNNING
        return values


class Observations(OwnId):
    table, model, created, required = "observations", Observation, "created_at", False
    columns: ClassVar = {
        "type": ("type", text), "tool_name": ("tool_name", text), "content": ("content", text),
        "content_compressed": ("content_compressed", text), "embedding": ("embedding", blob),
        "importance": ("importance", importance), "created_at": ("created_at", moment),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict) and not 0 <= values["importance"] <= 1:
            return "importance outside 0..1"
        return values


class LoopRuns(OwnId):
    table, model, created, required = "loop_runs", LoopRun, "started_at", False
    columns: ClassVar = {
        "task": ("task", text), "criteria": ("criteria", json_or(list)), "status": ("status", text),
        "iterations": ("iterations", count), "max_iterations": ("max_iterations", lambda v: count(v, 10)),
        "started_at": ("started_at", moment), "ended_at": ("ended_at", moment),
        "snapshot_path": ("snapshot_path", text),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["updated_at"] = values["ended_at"] or values["started_at"]
        return values


class GlobalPatterns(OwnId):
    table, model, sessions, created, required = "global_patterns", GlobalPattern, None, "created_at", False
    columns: ClassVar = {
        "pattern_type": ("pattern_type", text), "description": ("description", text),
        "embedding": ("embedding", blob), "source_projects": ("source_projects", json_or(list)),
        "frequency": ("frequency", lambda v: count(v, 1)), "created_at": ("created_at", moment),
        "updated_at": ("updated_at", moment),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["fingerprint"] = pattern_fingerprint(values["pattern_type"], values["description"])
            values["updated_at"] = values["updated_at"] or values["created_at"]
        return values

    def existing(self, row: Row, values: dict[str, Any]) -> models.Model | None:
        return GlobalPattern.objects.filter(fingerprint=values["fingerprint"]).first()


class MemoryImporter(SeedImporter):
    kind = "memory"
    tables: ClassVar[list[TableImport]] = [MemorySessions(), Observations(), LoopRuns(), GlobalPatterns()]

    def select_tables(self, present: dict[str, list[str]]) -> list[TableImport]:
        project_db = {"sessions", "observations"} <= present.keys()
        if not project_db and "global_patterns" not in present:
            raise SeedImportError(f"{self.path} is not a ralph-mem database: no tables sessions and observations "
                                  f"(memory.db) nor global_patterns (global.db)")
        return [t for t in self.tables if t.table in present]
