"""Seed tools' databases built from their own DDL (ralphsite/moving/seed_io/schemas/, verbatim from the seeds)."""

import sqlite3
from collections.abc import Iterable
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import call_command

SCHEMAS = Path(__file__).resolve().parents[2] / "ralphsite" / "moving" / "seed_io" / "schemas"


def seed_database(path: Path, kind: str, rows: dict[str, Iterable[dict[str, Any]]]) -> Path:
    """A SQLite file with `kind`'s schema and `rows` per table (columns named per row)."""
    with sqlite3.connect(path) as db:
        db.executescript((SCHEMAS / f"{kind}.sql").read_text())
        for table, table_rows in rows.items():
            for row in table_rows:
                columns = ", ".join(f'"{c}"' for c in row)
                db.execute(f'INSERT INTO "{table}" ({columns}) VALUES ({", ".join("?" * len(row))})',
                           list(row.values()))
    return path


def file_rows(path: Path, table: str) -> list[dict[str, Any]]:
    """The rows of a table or view of a seed tool's file, as dicts."""
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        return [dict(row) for row in db.execute(f'SELECT * FROM "{table}"')]


def file_tables(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every table of a seed tool's file (SQLite's own left out) with its rows."""
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%'")]
    return {table: file_rows(path, table) for table in tables}


def import_seed(kind: str, path: Path, *options: str) -> str:
    out = StringIO()
    call_command("import_seed", kind, str(path), *options, stdout=out, stderr=StringIO())
    return out.getvalue()


def summary_row(output: str, table: str) -> list[str]:
    """The summary table's cells for `table`: read, created, updated, unchanged, gone, skipped."""
    for line in output.splitlines():
        cells = line.split()
        if cells and cells[0] == table:
            return cells[1:]
    raise AssertionError(f"no summary line for {table} in:\n{output}")
