"""import_seed, export_seed, backup and restore on an unmigrated database: one line, exit 1, nothing written."""

import sqlite3
from pathlib import Path

import pytest

from tests.ralphsite.test_operator_commands import _manage
from tests.seed_io.helpers import seed_database


@pytest.mark.smoke
@pytest.mark.sqlite_only  # an empty SQLite file
@pytest.mark.parametrize("command", ["import_seed", "export_seed", "backup", "backup --verify", "restore"])
def test_it_refuses_an_unmigrated_database_in_one_line_and_writes_nothing(tmp_path: Path, command: str) -> None:
    database = tmp_path / "empty.db"
    sqlite3.connect(database).close()
    memory = seed_database(tmp_path / "memory.db", "memory", {})
    backup = tmp_path / "backup.sqlite3"
    sqlite3.connect(backup).close()
    arguments = {
        "import_seed": ["import_seed", "memory", str(memory)],
        "export_seed": ["export_seed", "memory", str(tmp_path / "out.db")],
        "backup": ["backup", "--to", str(tmp_path / "backups")],
        "backup --verify": ["backup", "--verify", str(backup)],
        "restore": ["restore", str(backup), "--force"],
    }[command]
    done = _manage(tmp_path, *arguments, database_url=f"sqlite:///{database}")
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "is not migrated" in done.stderr and "manage.py migrate" in done.stderr
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT name FROM sqlite_master").fetchall() == []
    assert not (tmp_path / "out.db").exists() and not (tmp_path / "backups").exists()
