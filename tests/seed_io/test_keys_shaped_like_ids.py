"""A seed file's key shaped like a ULID (issue #28 §4): the database refuses it as the services do, so the import
lists the row as skipped, with the services' reason, instead of failing on the database's error; a session's id
that is a ULID (export_seed writes a session of no key under its id) is that session's id, not a key."""

import sqlite3
from pathlib import Path

import pytest

from ledger_app.models import Checkpoint
from sessions_app.models import Plan, Session, Task
from tests.seed_io.helpers import import_seed, summary_row
from tests.seed_io.test_devteam import C, _devteam_db

pytestmark = pytest.mark.django_db

ID = "01BX5ZZKBKACTAV9WEVGEMMVRZ"


def _file(tmp_path: Path) -> Path:
    """DevTeam's file with a plan and a checkpoint keyed like ULIDs and session C named by one."""
    path = _devteam_db(tmp_path / "devteam.db")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE plans SET id = ? WHERE id = 'plan-002'", [ID.lower()])
        db.execute("UPDATE checkpoints SET checkpoint_id = ? WHERE id = 1", [ID])
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            if "session_id" in {column[1] for column in db.execute(f'PRAGMA table_info("{table}")')}:
                db.execute(f'UPDATE "{table}" SET session_id = ? WHERE session_id = ?', [ID, C])
        db.execute("UPDATE sessions SET id = ? WHERE id = ?", [ID, C])
    return path


def test_a_plan_or_checkpoint_key_shaped_like_a_ulid_is_skipped_with_the_services_reason(tmp_path: Path) -> None:
    output = import_seed("devteam", _file(tmp_path))
    skipped = " ".join(summary_row(output, "plans")[5:])
    assert skipped == "1 A plan key is never shaped like a ULID: it would read as an id."
    assert f"plans {ID.lower()}: id = '{ID.lower()}': A plan key is never shaped like a ULID" in output, output
    assert f"checkpoints {ID}: checkpoint_id = '{ID}': A checkpoint key is never shaped" in output, output
    assert list(Plan.objects.values_list("key", flat=True)) == ["plan-001"]
    assert list(Checkpoint.objects.values_list("key", flat=True)) == ["chkpt-20250201-130000-def456"]


def test_a_session_named_by_a_ulid_is_imported_under_that_id_and_again_unchanged(tmp_path: Path) -> None:
    path = _file(tmp_path)
    import_seed("devteam", path)
    session = Session.objects.get(pk=ID)
    assert session.key == "" and session.research_sessions.count() == 1
    again = import_seed("devteam", path)
    assert summary_row(again, "sessions")[:4] == ["3", "0", "0", "3"], again
    assert Session.objects.count() == 3


def test_a_task_key_shaped_like_a_ulid_is_skipped_with_the_services_reason(tmp_path: Path) -> None:
    """Task keys name tasks in their session's paths (`sessions/{session}/tasks/{task}/`), so they follow the rule
    too (sessions 0020): the import lists such a task as skipped, as it does a plan or checkpoint."""
    path = _devteam_db(tmp_path / "devteam.db")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE tasks SET id = ? WHERE id = 'TASK-003'", [ID])
    output = import_seed("devteam", path)
    assert f"tasks {ID}: key = '{ID}': A task key is never shaped like a ULID" in output, output
    assert not Task.objects.filter(key__iexact=ID).exists()
    assert Task.objects.filter(key="TASK-001").exists()
