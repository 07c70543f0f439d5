"""A newer copy brings its changes (issue #29): importing the same source again updates the rows changed in the
file through the model's update service (the API's), counts created / updated / unchanged / gone / skipped per
table, and reports the rows gone from the file (deleted only with --delete-missing). For each of the five kinds."""

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.db import models

from ledger_app.models import LedgerEvent
from ralphsite.core.models import SeedRow
from ralphsite.moving.seed_io import importer_class
from sessions_app.models import Session, SessionStatus
from tests.seed_io.helpers import import_seed, summary_row
from tests.seed_io.test_conversations import CHAT_1
from tests.seed_io.test_export import BUILDERS

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Row:
    """A row of a seed table, by its key (the SeedRow's source_key) and the SQL that finds it in the file."""

    table: str
    key: str
    where: str


@dataclass(frozen=True)
class Change:
    row: Row
    column: str
    value: Any
    field: str  # our field the column feeds


CHANGES = {
    "ralphy": Change(Row("issues", "iss-1", "id = 'iss-1'"), "count", 7, "count"),
    "conversations": Change(Row("chats", CHAT_1, f"id = '{CHAT_1}'"), "title", "newer title 🆕", "title"),
    "devteam": Change(Row("sessions", "sess-20250202-b", "id = 'sess-20250202-b'"), "command", "/devteam:bug 43",
                      "command"),
    "ralph": Change(Row("Tasks", "2", "Id = 2"), "Title", "task-2 새 제목", "title"),
    "memory": Change(Row("loop_runs", "loop-running", "id = 'loop-running'"), "task", "make it run again",
                     "task"),
}
# A leaf row each (nothing in the file names it), to take out of the file.
GONE = {
    "ralphy": Row("checkpoints", "chk-auth-001", "id = 'chk-auth-001'"),
    "conversations": Row("messages", "01JH3000000000000000000004", "id = '01JH3000000000000000000004'"),
    "devteam": Row("gate_results", "8", "id = 8"),
    "ralph": Row("Signals", "4", "Id = 4"),
    "memory": Row("loop_runs", "loop-stopped", "id = 'loop-stopped'"),
}


def _sql(path: Path, statement: str, *parameters: Any) -> None:
    with sqlite3.connect(path) as db:
        db.execute(statement, parameters)


def _object(kind: str, row: Row) -> models.Model | None:
    """Our object row `row` of the kind's file became (None: it is gone)."""
    seed_row = SeedRow.objects.get(kind=kind, source_table=row.table, source_key=row.key)
    return apps.get_model(seed_row.object_model)._default_manager.filter(pk=seed_row.object_id).first()


def _cells(output: str, table: str) -> dict[str, str]:
    read, created, updated, unchanged, gone, *skipped = summary_row(output, table)
    return {"read": read, "created": created, "updated": updated, "unchanged": unchanged, "gone": gone,
            "skipped": " ".join(skipped)}


def _tables(kind: str, output: str) -> list[str]:
    return [t.table for t in importer_class(kind).tables if f"\n{t.table} " in output]


@pytest.mark.parametrize("kind", BUILDERS)
def test_it_updates_the_row_a_newer_copy_changed_and_counts_the_rest_unchanged(tmp_path: Path, kind: str) -> None:
    path = BUILDERS[kind](tmp_path / "file.db")
    first = import_seed(kind, path)
    change = CHANGES[kind]
    _sql(path, f'UPDATE "{change.row.table}" SET "{change.column}" = ? WHERE {change.row.where}', change.value)
    output = import_seed(kind, path)
    cells = _cells(output, change.row.table)
    assert (cells["created"], cells["updated"], cells["gone"], cells["skipped"]) == ("0", "1", "0", "0"), output
    assert int(cells["unchanged"]) == int(cells["read"]) - 1
    assert getattr(_object(kind, change.row), change.field) == change.value
    for table in _tables(kind, output):
        if table != change.row.table:  # every other row as it was: unchanged (or skipped as the first time)
            assert (_cells(output, table)["created"], _cells(output, table)["updated"]) == ("0", "0"), table
            assert _cells(output, table)["skipped"] == _cells(first, table)["skipped"], table
    assert "0 rows created, 1 updated" in output
    assert "nothing new" in import_seed(kind, path)  # the change is remembered: a third import has none


@pytest.mark.parametrize("kind", BUILDERS)
def test_a_row_compared_field_by_field_is_unchanged_when_the_file_has_what_we_have(tmp_path: Path, kind: str) -> None:
    """Rows imported before digests were kept are compared with their objects field by field: the file as
    imported changes nothing (no value is read back otherwise than it was stored)."""
    path = BUILDERS[kind](tmp_path / "file.db")
    import_seed(kind, path)
    SeedRow.objects.update(digest="")
    output = import_seed(kind, path)
    assert "nothing new" in output, output
    assert not SeedRow.objects.filter(digest="").exists()


@pytest.mark.parametrize("kind", BUILDERS)
def test_a_row_gone_from_the_file_is_reported_and_kept_unless_asked(tmp_path: Path, kind: str) -> None:
    path = BUILDERS[kind](tmp_path / "file.db")
    import_seed(kind, path)
    gone = GONE[kind]
    _sql(path, f'DELETE FROM "{gone.table}" WHERE {gone.where}')
    output = import_seed(kind, path)
    assert _cells(output, gone.table)["gone"] == "1"
    assert f"  {gone.table}: 1 kept (--delete-missing deletes them): {gone.key}" in output
    assert _object(kind, gone) is not None
    deleting = import_seed(kind, path, "--delete-missing")
    assert f"  {gone.table}: 1 deleted (--delete-missing)" in deleting, deleting
    assert not SeedRow.objects.filter(kind=kind, source_table=gone.table, source_key=gone.key).exists()
    after = import_seed(kind, path)
    assert "gone from the file" not in after and all(_cells(after, t)["gone"] == "0" for t in _tables(kind, after))


def test_a_run_the_file_ended_ends_through_the_lifecycle_and_is_never_reopened(tmp_path: Path) -> None:
    """ralphy: a run completed in the newer copy finishes as finish/ does; a copy that says it runs again is
    refused as the API refuses it, listed, and the session stays completed."""
    path = BUILDERS["ralphy"](tmp_path / "ralphy.db")
    import_seed("ralphy", path)
    ended = 1_767_312_000  # 2026-01-02T00:00:00Z, in seconds as ralphy writes it
    _sql(path, "UPDATE runs SET status = 'completed', ended_at = ? WHERE id = 'run-20260102-b'", ended)
    output = import_seed("ralphy", path)
    assert _cells(output, "runs")["updated"] == "1"
    run = Session.objects.get(key="run-20260102-b")
    assert (run.status, int(run.ended_at.timestamp())) == (SessionStatus.COMPLETED, ended)
    assert run.ledger_events.filter(type="session_finished").exists()
    _sql(path, "UPDATE runs SET status = 'running', ended_at = NULL WHERE id = 'run-20260102-b'")
    refused = import_seed("ralphy", path)
    assert _cells(refused, "runs")["updated"] == "0"
    assert re.search(r"^1 not updated: Session \w+ already finished \(completed\); resume/ runs it again\.$",
                     _cells(refused, "runs")["skipped"])
    assert Session.objects.get(key="run-20260102-b").status == SessionStatus.COMPLETED
    again = import_seed("ralphy", path)  # the refused row keeps its old digest: reported again, not forgotten
    assert "not updated" in _cells(again, "runs")["skipped"]


def test_a_ralph_session_whose_state_became_complete_ends(tmp_path: Path) -> None:
    path = BUILDERS["ralph"](tmp_path / "ralph.db")
    import_seed("ralph", path)
    _sql(path, "UPDATE Sessions SET CurrentState = 6, CompletedAt = '2026-02-09 16:00:00' "
               "WHERE SessionId = 'sess-auth'")
    output = import_seed("ralph", path)
    assert _cells(output, "Sessions")["updated"] == "1", output
    session = Session.objects.get(key="sess-auth")
    assert (session.state, session.status) == ("complete", SessionStatus.COMPLETED)


def test_a_ledger_event_changed_in_the_file_is_reported_not_rewritten(tmp_path: Path) -> None:
    path = BUILDERS["devteam"](tmp_path / "devteam.db")
    import_seed("devteam", path)
    _sql(path, "UPDATE events SET message = 'rewritten' WHERE id = 1")
    output = import_seed("devteam", path)
    assert "1 changed in the file, but ledger events are append-only" in _cells(output, "events")["skipped"]
    assert not LedgerEvent.objects.filter(message="rewritten").exists()
