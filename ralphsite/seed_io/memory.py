"""ralph-mem (seed 004): `.ralph-mem/memory.db` (sessions, observations, loop_runs) and the global
`~/.config/ralph-mem/global.db` (global_patterns). Either file is a `memory` database.

Seed column → field: sessions.id → Session.key (the key agents use; ours is a ULID); observations.id
→ Observation.id when it is a ULID, else a ULID derived from the row (ralphsite.seed_io.base.ulid_for),
the original kept on its SeedRow; global patterns already recorded (same type and description) are
linked, not duplicated. observations_fts is not read: our search indexes the imported rows itself.
"""

from typing import Any

from django.db import models

from conversations_app.models import GlobalPattern, Observation
from conversations_app.services import pattern_fingerprint
from ralphsite.seed_io.base import (
    ImportContext,
    Row,
    SeedImporter,
    SeedImportError,
    TableImport,
    blob,
    count,
    json_value,
    moment,
    text,
    ulid_for,
)
from sessions_app.models import LoopRun, Session


class MemorySessions(TableImport):
    table, model = "sessions", Session
    mapped = frozenset({"project_path", "started_at", "ended_at", "summary", "summary_embedding", "token_count"})
    required = False

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        started = moment(row["started_at"])
        return {"key": text(row["id"]), "project_path": text(row["project_path"]), "started_at": started,
                "created_at": started, "updated_at": moment(row["ended_at"]) or started,
                "last_activity_at": moment(row["ended_at"]) or started, "ended_at": moment(row["ended_at"]),
                "summary": text(row["summary"]), "summary_embedding": blob(row["summary_embedding"]),
                "token_count": count(row["token_count"])}

    def existing(self, row: Row, values: dict[str, Any]) -> models.Model | None:
        return Session.objects.filter(key=values["key"]).first()


class Observations(TableImport):
    table, model = "observations", Observation
    mapped = frozenset({"session_id", "type", "tool_name", "content", "content_compressed", "embedding",
                        "importance", "created_at"})
    required = False

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        session_id = context.resolve("sessions", row["session_id"])
        if session_id is None:
            return "its session is not in the file"
        importance = 0.5 if row["importance"] is None else float(row["importance"])
        if not 0 <= importance <= 1:
            return "importance outside 0..1"
        created = moment(row["created_at"])
        return {"id": ulid_for(context.kind, self.table, text(row["id"]), created), "session_id": session_id,
                "type": text(row["type"]), "tool_name": text(row["tool_name"]), "content": text(row["content"]),
                "content_compressed": text(row["content_compressed"]), "embedding": blob(row["embedding"]),
                "importance": importance, "created_at": created, "updated_at": created}


class LoopRuns(TableImport):
    table, model = "loop_runs", LoopRun
    mapped = frozenset({"session_id", "task", "criteria", "status", "iterations", "max_iterations", "started_at",
                        "ended_at", "snapshot_path"})
    required = False

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        session_id = context.resolve("sessions", row["session_id"])
        if session_id is None:
            return "its session is not in the file"
        started = moment(row["started_at"])
        return {"id": ulid_for(context.kind, self.table, text(row["id"]), started), "session_id": session_id,
                "task": text(row["task"]), "criteria": json_value(row["criteria"], default=[]),
                "status": text(row["status"]), "iterations": count(row["iterations"]),
                "max_iterations": count(row["max_iterations"], 10), "started_at": started,
                "ended_at": moment(row["ended_at"]), "snapshot_path": text(row["snapshot_path"]),
                "created_at": started, "updated_at": moment(row["ended_at"]) or started}


class GlobalPatterns(TableImport):
    table, model = "global_patterns", GlobalPattern
    mapped = frozenset({"pattern_type", "description", "embedding", "source_projects", "frequency", "created_at",
                        "updated_at"})
    required = False

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        created = moment(row["created_at"])
        return {"id": ulid_for(context.kind, self.table, text(row["id"]), created),
                "pattern_type": text(row["pattern_type"]), "description": text(row["description"]),
                "fingerprint": pattern_fingerprint(text(row["pattern_type"]), text(row["description"])),
                "embedding": blob(row["embedding"]), "source_projects": json_value(row["source_projects"], []),
                "frequency": count(row["frequency"], 1), "created_at": created,
                "updated_at": moment(row["updated_at"]) or created}

    def existing(self, row: Row, values: dict[str, Any]) -> models.Model | None:
        return GlobalPattern.objects.filter(fingerprint=values["fingerprint"]).first()


class MemoryImporter(SeedImporter):
    kind = "memory"
    tables = [MemorySessions(), Observations(), LoopRuns(), GlobalPatterns()]

    def select_tables(self, present: dict[str, list[str]]) -> list[TableImport]:
        project_db = {"sessions", "observations"} <= present.keys()
        if not project_db and "global_patterns" not in present:
            raise SeedImportError(f"{self.path} is not a ralph-mem database: no tables sessions and observations "
                                  f"(memory.db) nor global_patterns (global.db)")
        return [t for t in self.tables if t.table in present]
