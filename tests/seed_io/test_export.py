"""export_seed: import a tool's database, export it, and get the tool's rows back (every table, every column)."""

import json
from datetime import UTC
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from ralphsite.moving.seed_io.base import moment
from tests.seed_io.helpers import file_tables, import_seed
from tests.seed_io.test_conversations import _conversations_db
from tests.seed_io.test_devteam import _devteam_db
from tests.seed_io.test_memory import OBSERVATIONS, _memory_db
from tests.seed_io.test_ralph import _ralph_db
from tests.seed_io.test_ralphy import _ralphy_db

pytestmark = pytest.mark.django_db



def _memory_db_of_whole_sessions(path: Path) -> Path:
    """ralph-mem's file without the observation whose session is not in it (the import skips that one)."""
    return _memory_db(path, observations=[o for o in OBSERVATIONS if o["session_id"] != "no-such-session"])


BUILDERS = {"devteam": _devteam_db, "ralphy": _ralphy_db, "conversations": _conversations_db, "ralph": _ralph_db,
            "memory": _memory_db_of_whole_sessions}
# Tables the importers skip rows of on purpose (a row whose parent is not in the file) or do not import yet,
# and tables the file derives itself (ralph-mem's full-text index, filled by its trigger).
LEFT_OUT = {"devteam": {"interview_questions"}, "memory": {f"observations_fts{suffix}" for suffix in
                                                   ("", "_data", "_idx", "_docsize", "_config")}}


def _normal(value: Any) -> Any:
    """One spelling per value: a date as its instant, JSON text as its value, 0/1 and floats as numbers."""
    if isinstance(value, str):
        try:
            if value[:4].isdigit() and value[4:5] == "-":
                return ("date", moment(value).astimezone(UTC))  # the instant (an export writes UTC)
            return json.dumps(json.loads(value), sort_keys=True)  # JSON as its value (PostgreSQL reorders keys)
        except ValueError:
            return value
    return value


# ralphy's epoch columns: the seed does not say seconds or milliseconds; the import reads both and the
# export writes milliseconds, so they are compared as instants.
EPOCH_COLUMNS = {"started_at", "ended_at", "ts"}


def _identity(row: dict[str, Any]) -> str:
    return json.dumps({k: repr(moment(v) if k in EPOCH_COLUMNS and isinstance(v, int) else _normal(v))
                       for k, v in sorted(row.items())})


def _export(kind: str, path: Path, *sessions: str) -> Path:
    args = [item for key in sessions for item in ("--session", key)]
    call_command("export_seed", kind, str(path), *args, stdout=StringIO())
    return path


@pytest.mark.parametrize("kind", BUILDERS)
def test_an_import_exports_back_to_the_tools_ownfile_tables(tmp_path: Path, kind: str) -> None:
    original = BUILDERS[kind](tmp_path / "original.db")
    import_seed(kind, original)
    exported = file_tables(_export(kind, tmp_path / "exported.db"))
    source = file_tables(original)
    for table, rows in source.items():
        if table in LEFT_OUT.get(kind, set()) or table.startswith("v_"):
            continue
        expected = sorted(map(_identity, rows))
        assert sorted(map(_identity, exported.get(table, []))) == expected, table


@pytest.mark.parametrize("kind", BUILDERS)
def test_an_export_imported_again_adds_nothing_and_exports_the_samefile_tables(tmp_path: Path, kind: str) -> None:
    """Moving back in: the export, imported as the source it was exported from, is that source's rows."""
    import_seed(kind, BUILDERS[kind](tmp_path / "original.db"), "--source", "project")
    first = _export(kind, tmp_path / "first.db")
    assert "nothing new" in import_seed(kind, first, "--source", "project")
    assert file_tables(_export(kind, tmp_path / "second.db")) == file_tables(first)


def test_it_exports_only_the_named_sessions(tmp_path: Path) -> None:
    import_seed("devteam", _devteam_db(tmp_path / "original.db"))
    rows = file_tables(_export("devteam", tmp_path / "one.db", "sess-20250202-b"))
    assert [r["id"] for r in rows["sessions"]] == ["sess-20250202-b"]
    assert {r["session_id"] for r in rows["events"]} == {"sess-20250202-b"}
    assert rows["acceptance_criteria"] == []


def test_it_never_overwrites_a_file(tmp_path: Path) -> None:
    (tmp_path / "taken.db").write_text("x")
    with pytest.raises(CommandError, match="exists"):
        _export("devteam", tmp_path / "taken.db")
