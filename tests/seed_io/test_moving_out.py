"""A way back out that always works (issue #29): export_seed after a deletion (its ledger's retention record names
no session), a per-session export that is foreign-key complete, ralphy's epoch seconds written back as seconds, and
each kind receiving only its own rows."""

import sqlite3
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from ledger_app.services import sessions_purge
from sessions_app.models import Session, SessionStatus
from sessions_app.services.sessions import session_delete
from tests.seed_io.helpers import file_rows, file_tables, import_seed
from tests.seed_io.test_devteam import _devteam_db
from tests.seed_io.test_export import BUILDERS, LEFT_OUT, _identity
from tests.seed_io.test_ralph import MIGRATIONS, _ralph_db
from tests.seed_io.test_ralphy import T0, _ralphy_db

pytestmark = pytest.mark.django_db


def _export(kind: str, path: Path, *options: str) -> str:
    out = StringIO()
    call_command("export_seed", kind, str(path), *options, stdout=out)
    return out.getvalue()


def test_a_full_export_works_after_a_session_was_deleted(tmp_path: Path) -> None:
    import_seed("devteam", _devteam_db(tmp_path / "devteam.db"))
    session = Session.objects.get(key="sess-20250201-a")
    assert session.status != SessionStatus.RUNNING
    session_delete(session=session)  # its 8 events leave through a retention record that names no session
    output = _export("devteam", tmp_path / "out.db")
    assert "events: 1 no session_id" in output, output
    assert {row["id"] for row in file_rows(tmp_path / "out.db", "sessions")} == {"sess-20250202-b",
                                                                                 "sess-20250203-c"}
    assert {row["session_id"] for row in file_rows(tmp_path / "out.db", "events")} == {"sess-20250202-b"}


@pytest.mark.parametrize("kind", [kind for kind in BUILDERS if kind != "conversations"])  # Acode's: no sessions
def test_a_per_session_export_is_foreign_key_complete(tmp_path: Path, kind: str) -> None:
    import_seed(kind, BUILDERS[kind](tmp_path / "file.db"))
    session = Session.objects.exclude(key="").order_by("key").first()
    out = tmp_path / "out.db"
    _export(kind, out, "--session", session.key)
    with sqlite3.connect(out) as db:
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_devteam_sessions_export_clears_the_plan_it_leaves_out(tmp_path: Path) -> None:
    path = _devteam_db(tmp_path / "devteam.db")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE tasks SET plan_id = 'plan-001'")
    import_seed("devteam", path)
    output = _export("devteam", tmp_path / "out.db", "--session", "sess-20250201-a")
    assert "tasks: 2 written without its reference to a row not exported" in output, output
    assert {row["plan_id"] for row in file_rows(tmp_path / "out.db", "tasks")} == {None}


def test_ralphys_epoch_seconds_stay_seconds_and_milliseconds_stay_milliseconds(tmp_path: Path) -> None:
    import_seed("ralphy", _ralphy_db(tmp_path / "ralphy.db"))
    out = tmp_path / "out.db"
    _export("ralphy", out)
    runs = {row["id"]: row["started_at"] for row in file_rows(out, "runs")}
    assert runs == {"run-20260101-a": T0, "run-20260102-b": (T0 + 86400) * 1000}
    assert file_rows(out, "checkpoints")[0]["ts"] == T0 + 601


def test_each_kind_receives_only_its_own_rows(tmp_path: Path) -> None:
    import_seed("devteam", _devteam_db(tmp_path / "devteam.db"))
    import_seed("memory", BUILDERS["memory"](tmp_path / "memory.db"))
    out = tmp_path / "out.db"
    _export("memory", out)
    assert {row["id"] for row in file_rows(out, "sessions")} == {"mem-sess-1", "mem-sess-2"}
    devteam = tmp_path / "devteam-out.db"
    _export("devteam", devteam)
    assert "mem-sess-1" not in {row["id"] for row in file_rows(devteam, "sessions")}


def test_the_ralph_export_has_the_migration_history_ralph_v2_wrote_so_it_does_not_create_its_tables_again(
        tmp_path: Path) -> None:
    assert "__EFMigrationsHistory: 1 none: no ralph file imported here had one" in _export("ralph", tmp_path / "no.db")
    import_seed("ralph", _ralph_db(tmp_path / "ralph.db"))
    import_seed("ralph", _ralph_db(tmp_path / "other.db", Sessions=[]), "--source", "other")  # the same history
    output = _export("ralph", tmp_path / "out.db")
    assert "__EFMigrationsHistory             2 rows" in output, output
    assert file_rows(tmp_path / "out.db", "__EFMigrationsHistory") == MIGRATIONS


@pytest.mark.parametrize("kind", BUILDERS)
def test_every_kind_exports_after_a_deletion_and_a_purge(tmp_path: Path, kind: str) -> None:
    """A session deleted and the rest of the ended ones purged (each leaves a retention record of no session): the
    full export works, names no row deleted here (a row the tool's schema needs it for is left out), holds only
    the sessions left, and imports again."""
    import_seed(kind, BUILDERS[kind](tmp_path / "file.db"))
    ended = list(Session.objects.exclude(status=SessionStatus.RUNNING).order_by("key"))
    if ended:
        session_delete(session=ended[0])
    sessions_purge(older_than=timedelta(days=1))
    assert not Session.objects.exclude(status=SessionStatus.RUNNING).exists()
    left = set(Session.objects.values_list("key", flat=True))
    out = tmp_path / "out.db"
    _export(kind, out)
    assert _dangling(out) <= _dangling(tmp_path / "file.db")  # only the references the tool's own file left so
    session_table, key_column = {"devteam": ("sessions", "id"), "memory": ("sessions", "id"), "ralphy": ("runs", "id"),
                                 "ralph": ("Sessions", "SessionId")}.get(kind, (None, None))
    if session_table:
        assert {row[key_column] for row in file_rows(out, session_table)} == left
    import_seed(kind, out, "--source", "moved-back")  # moving back in: no refusal, no traceback


def _dangling(path: Path) -> set[tuple[str, str]]:
    """The (table, parent) of each reference `PRAGMA foreign_key_check` finds naming no row."""
    with sqlite3.connect(path) as db:
        return {(table, parent) for table, _rowid, parent, _key in db.execute("PRAGMA foreign_key_check")}


def test_each_kind_receives_only_its_own_rows_with_all_five_imported(tmp_path: Path) -> None:
    """With a file of every kind imported, each kind's export is exactly its own file's rows."""
    originals = {kind: build(tmp_path / f"{kind}.db") for kind, build in BUILDERS.items()}
    for kind, original in originals.items():
        import_seed(kind, original)
    for kind, original in originals.items():
        exported = file_tables(_export_path(kind, tmp_path / f"{kind}-out.db"))
        for table, rows in file_tables(original).items():
            if table in LEFT_OUT.get(kind, set()) or table.startswith("v_"):
                continue
            assert sorted(map(_identity, exported.get(table, []))) == sorted(map(_identity, rows)), (kind, table)


def _export_path(kind: str, path: Path) -> Path:
    _export(kind, path)
    return path


def test_two_ralph_v2_files_with_the_same_guids_export_one_session_per_guid(tmp_path: Path) -> None:
    """A copied project: two Ralph V2 files whose rows have the same GUIDs, imported side by side. The whole export
    keeps one session per GUID and leaves the other out with its rows (listed), never a traceback nor another
    project's rows under its GUID; a per-session export writes the other."""
    import_seed("ralph", _ralph_db(tmp_path / "a.db"))
    copy = _ralph_db(tmp_path / "b.db")
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE Sessions SET SessionId = SessionId || '-copy'")
    import_seed("ralph", copy)
    output = _export("ralph", tmp_path / "out.db")
    assert "Sessions: 2 left out: UNIQUE constraint failed: Sessions.Id" in output, output
    assert sorted(row["SessionId"] for row in file_rows(tmp_path / "out.db", "Sessions")) == ["sess-auth", "sess-done"]
    exported, original = file_tables(tmp_path / "out.db"), file_tables(tmp_path / "a.db")
    for table in ("Tasks", "Questions", "Signals"):
        assert sorted(map(_identity, exported[table])) == sorted(map(_identity, original[table])), table
    _export("ralph", tmp_path / "copy.db", "--session", "sess-auth-copy")
    assert [row["SessionId"] for row in file_rows(tmp_path / "copy.db", "Sessions")] == ["sess-auth-copy"]
