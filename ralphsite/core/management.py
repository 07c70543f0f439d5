"""What every Ralph Site management command shares (`manage.py migrate` excepted).

`RalphCommand`: before its handler runs, the database must exist and be migrated; otherwise the
command says so in one line (a CommandError: `manage.py` prints it and exits 1) and writes nothing.
An SQLite database is looked for before connecting, since connecting would create an empty file.

`older_than_argument` and `parse_age`: the one `--older-than` syntax of the retention commands
(`30d`, `12h`, `90m`) with `--dry-run`, refusing ages beyond `MAX_AGE` with a message.
"""

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.executor import MigrationExecutor

_AGE = re.compile(r"^(?P<amount>\d{1,12})(?P<unit>[dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}
# Beyond a century a retention age is a typo (and 99999999d reaches before year 1: an OverflowError).
MAX_AGE = timedelta(days=36_500)
_HINT = "set RALPH_DATA_DIR or DATABASE_URL to a migrated database, or run `manage.py migrate`"


def parse_age(text: str) -> timedelta:
    """`30d`, `12h`, `90m` → a timedelta of at least a minute and at most `MAX_AGE`."""
    match = _AGE.match(text.strip())
    if not match:
        raise CommandError(f"--older-than {text!r}: use a whole number and a unit d/h/m, e.g. 30d, 12h or 90m.")
    amount = int(match["amount"])
    unit = _UNITS[match["unit"]]
    if amount < 1 or amount > MAX_AGE / timedelta(**{unit: 1}):
        raise CommandError(f"--older-than {text!r}: must be between 1{match['unit']} and {MAX_AGE.days}d.")
    return timedelta(**{unit: amount})


def retention_arguments(parser: CommandParser, *, example: str) -> None:
    parser.add_argument("--older-than", required=True, help=f"An age: a number and d, h or m, e.g. {example}.")
    parser.add_argument("--dry-run", action="store_true", help="Print what would be removed; remove nothing.")


def database_location(connection: BaseDatabaseWrapper) -> str:
    """Where the database is, without credentials."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return str(settings["NAME"])
    return f"{connection.vendor} {settings.get('HOST') or 'localhost'}:{settings.get('PORT') or ''}/{settings['NAME']}"


def database_problem(connection: BaseDatabaseWrapper) -> str | None:
    """Why commands cannot run against this database (missing, unreachable, not migrated), or None."""
    where = database_location(connection)
    name = str(connection.settings_dict["NAME"])
    in_memory = name == ":memory:" or "mode=memory" in name
    if connection.vendor == "sqlite" and not in_memory and not Path(name).exists():
        return f"No database at {where}: {_HINT}."
    try:
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"Cannot read the database at {where} ({reason}): {_HINT}."
    if pending:
        return f"The database at {where} is not migrated ({len(pending)} migrations to apply): {_HINT}."
    return None


class RalphCommand(BaseCommand):
    """A command that needs a migrated database: refused in one line, before writing anything, if not."""

    def execute(self, *args: Any, **options: Any) -> Any:
        problem = database_problem(connections[options.get("database") or DEFAULT_DB_ALIAS])
        if problem:
            raise CommandError(problem)
        return super().execute(*args, **options)
