"""The usage rollup per (session, day, model, agent) and its triggers, as migration 0009 creates them.
Frozen: see the package's docstring; `ledger_app.usage_days` explains the design.

A call whose session is NULL (deleted) is summed under one NULL key: the unique index and every match
use COALESCE(session_id, ''). A row that no call is summed in any more is deleted, so a deleted
session leaves no rows behind. On PostgreSQL each statement's change is one signed upsert (a deletion
adds minus its calls), its keys in the index's order (two writers lock shared rows in the same order);
on SQLite (one writer at a time) row triggers add each call and take each away."""

from typing import Any

SUMMED = ("input_tokens", "output_tokens", "cached_read_tokens", "cached_write_tokens", "reasoning_tokens",
          "cost_usd")
FIGURES = ("calls", *SUMMED)
TRIGGER_NAMES = ("usage_day_delete", "usage_day_insert", "usage_day_update")
_KEY = "day, model, agent, COALESCE(session_id, '')"
_COLUMNS = ", ".join(("session_id", "day", "model", "agent", *FIGURES))
_ADDED = ", ".join(f"{name} = ledger_app_usageday.{name} + excluded.{name}" for name in FIGURES)
_UPSERT = f"ON CONFLICT ({_KEY}) DO UPDATE SET {_ADDED}"


def _day(column: str, vendor: str) -> str:
    # SQLite holds datetimes as UTC text (USE_TZ), so its date() is the UTC day.
    return f"date({column})" if vendor == "sqlite" else f"({column} AT TIME ZONE 'UTC')::date"


# -- SQLite: row triggers -------------------------------------------------------------------------

def _sqlite_match(row: str) -> str:
    return (f"day = date({row}.recorded_at) AND model = {row}.model AND agent = {row}.agent "
            f"AND COALESCE(session_id, '') = COALESCE({row}.session_id, '')")


def _sqlite_add(row: str) -> str:
    figures = ", ".join(("1", *(f"{row}.{name}" for name in SUMMED)))
    return (f"INSERT INTO ledger_app_usageday ({_COLUMNS}) VALUES ({row}.session_id, date({row}.recorded_at), "
            f"{row}.model, {row}.agent, {figures}) {_UPSERT};")


# An UPDATE, not an upsert of minus the call: Django's test flush deletes the rollup's rows before the
# calls' (row by row, the triggers firing), and must not leave negative rows behind.
_SQLITE_TAKE_AWAY = (
    f"UPDATE ledger_app_usageday SET {', '.join(f'{name} = {name} - OLD.{name}' for name in SUMMED)}, "
    f"calls = calls - 1 WHERE {_sqlite_match('OLD')}; "
    f"DELETE FROM ledger_app_usageday WHERE {_sqlite_match('OLD')} AND calls = 0;")
_SQLITE_CREATE = [
    f"CREATE TRIGGER usage_day_insert AFTER INSERT ON ledger_app_tokenusage BEGIN {_sqlite_add('NEW')} END",
    f"CREATE TRIGGER usage_day_delete AFTER DELETE ON ledger_app_tokenusage BEGIN {_SQLITE_TAKE_AWAY} END",
    # A session set to NULL (its deletion) moves the call's sums to the NULL key.
    f"""CREATE TRIGGER usage_day_update AFTER UPDATE OF session_id, recorded_at, model, agent, {', '.join(SUMMED)}
        ON ledger_app_tokenusage BEGIN {_SQLITE_TAKE_AWAY} {_sqlite_add('NEW')} END""",
]
_SQLITE_DROP = [f"DROP TRIGGER IF EXISTS {name}" for name in TRIGGER_NAMES]


# -- PostgreSQL: statement triggers over transition tables ----------------------------------------

def _pg_signed(rows: str, sign: str) -> str:
    figures = ", ".join(f"{sign}{value} AS {name}" for value, name in zip(("1", *SUMMED), FIGURES, strict=True))
    return f"SELECT session_id, {_day('recorded_at', 'postgresql')} AS day, model, agent, {figures} FROM {rows}"


def _pg_apply(*signed: str) -> str:
    """One grouped upsert of the signed calls; groups whose figures cancel out (an update that moved
    nothing the rollup sums) write and lock nothing."""
    sums = ", ".join(f"SUM({name})" for name in FIGURES)
    changed = " OR ".join(f"SUM({name}) <> 0" for name in FIGURES)
    return (f"INSERT INTO ledger_app_usageday ({_COLUMNS}) SELECT session_id, day, model, agent, {sums} "
            f"FROM ({' UNION ALL '.join(signed)}) AS c GROUP BY 1, 2, 3, 4 HAVING {changed} "
            f"ORDER BY day, model, agent, COALESCE(session_id, '') {_UPSERT};")


_PG_DROP_EMPTY = (
    f"DELETE FROM ledger_app_usageday AS r USING (SELECT DISTINCT session_id, {_day('recorded_at', 'postgresql')} "
    "AS day, model, agent FROM old_rows) AS o WHERE r.day = o.day AND r.model = o.model AND r.agent = o.agent "
    "AND COALESCE(r.session_id, '') = COALESCE(o.session_id, '') AND r.calls = 0;")
_PG_CREATE = [
    f"""CREATE OR REPLACE FUNCTION usage_day_apply() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                {_pg_apply(_pg_signed('new_rows', ''))}
            ELSIF TG_OP = 'DELETE' THEN
                {_pg_apply(_pg_signed('old_rows', '-'))}
                {_PG_DROP_EMPTY}
            ELSE
                {_pg_apply(_pg_signed('old_rows', '-'), _pg_signed('new_rows', ''))}
                {_PG_DROP_EMPTY}
            END IF;
            RETURN NULL;
        END $$""",
    """CREATE TRIGGER usage_day_insert AFTER INSERT ON ledger_app_tokenusage REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION usage_day_apply()""",
    """CREATE TRIGGER usage_day_delete AFTER DELETE ON ledger_app_tokenusage REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION usage_day_apply()""",
    """CREATE TRIGGER usage_day_update AFTER UPDATE ON ledger_app_tokenusage
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION usage_day_apply()""",
]
_PG_DROP = [*(f"DROP TRIGGER IF EXISTS {name} ON ledger_app_tokenusage" for name in TRIGGER_NAMES),
            "DROP FUNCTION IF EXISTS usage_day_apply()"]


def _run(connection: Any, statements: list[str]) -> int:
    """Run the statements; the last one's row count."""
    rowcount = 0
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
            rowcount = cursor.rowcount
    return rowcount


def drop_triggers(connection: Any) -> None:
    _run(connection, _SQLITE_DROP if connection.vendor == "sqlite" else _PG_DROP)


def create_triggers(connection: Any) -> None:
    drop_triggers(connection)
    _run(connection, _SQLITE_CREATE if connection.vendor == "sqlite" else _PG_CREATE)


def fill(connection: Any) -> int:
    """The rollup recomputed from every usage row; returns its row count."""
    sums = ", ".join(f"SUM({name})" for name in SUMMED)
    return _run(connection, [
        "DELETE FROM ledger_app_usageday",
        f"INSERT INTO ledger_app_usageday ({_COLUMNS}) SELECT session_id, {_day('recorded_at', connection.vendor)}, "
        f"model, agent, COUNT(*), {sums} FROM ledger_app_tokenusage GROUP BY 1, 2, 3, 4"])


def empty(connection: Any) -> None:
    _run(connection, ["DELETE FROM ledger_app_usageday"])
