"""The daily usage rollup (`UsageDay`): token usage summed per UTC day, model and agent, kept by the
database itself.

Triggers on the usage table add each inserted row to its (day, model, agent) row and take away each
deleted one (an update does both), in the writing transaction, whichever path wrote it: the services,
a seed import, the benchmark's bulk seed, an operator's shell. So the rollup always equals the rows'
sums (`tests/ledger_app/test_usage_days.py`), and the dashboard and the cost view read a few hundred
rows instead of aggregating every call (at 200,000 calls the cost view took 5 s and the dashboard 3 s).

* SQLite: row triggers with `INSERT … ON CONFLICT DO UPDATE` (SQLite 3.24+). Datetimes are stored as
  UTC text, so `date(recorded_at)` is the UTC day.
* PostgreSQL: statement triggers over transition tables, so a bulk insert of 1,000 calls is one grouped
  upsert, its keys in sorted order (two transactions lock shared rollup rows in the same order).

A migration that makes SQLite rebuild the usage table drops its triggers: it must call
`create_triggers` again (the test checks they exist after all migrations). `usage_days_rebuild`
recomputes the rollup from the rows (the migration that created it fills it so).
"""

from typing import Any

from django.db import connection, transaction

USAGE_TABLE = "ledger_app_tokenusage"
ROLLUP_TABLE = "ledger_app_usageday"
SUMMED = ("input_tokens", "output_tokens", "cached_read_tokens", "cached_write_tokens", "reasoning_tokens",
          "cost_usd")
_COLUMNS = ", ".join(("day", "model", "agent", "calls", *SUMMED))
_ADDED = ", ".join(f"{name} = {ROLLUP_TABLE}.{name} + excluded.{name}" for name in ("calls", *SUMMED))

TRIGGER_NAMES = {"sqlite": {"usage_day_insert", "usage_day_delete", "usage_day_update"},
                 "postgresql": {"usage_day_insert", "usage_day_delete", "usage_day_update"}}


def _sqlite_add(row: str) -> str:
    values = ", ".join(f"{row}.{name}" for name in SUMMED)
    return (f"INSERT INTO {ROLLUP_TABLE} ({_COLUMNS}) VALUES (date({row}.recorded_at), {row}.model, {row}.agent, "
            f"1, {values}) ON CONFLICT (day, model, agent) DO UPDATE SET {_ADDED};")


def _sqlite_take_away(row: str) -> str:
    taken = ", ".join(f"{name} = {name} - {row}.{name}" for name in SUMMED)
    return (f"UPDATE {ROLLUP_TABLE} SET calls = calls - 1, {taken} WHERE day = date({row}.recorded_at) "
            f"AND model = {row}.model AND agent = {row}.agent;")


_SQLITE_CREATE = [
    f"CREATE TRIGGER usage_day_insert AFTER INSERT ON {USAGE_TABLE} BEGIN {_sqlite_add('NEW')} END",
    f"CREATE TRIGGER usage_day_delete AFTER DELETE ON {USAGE_TABLE} BEGIN {_sqlite_take_away('OLD')} END",
    # Only a change of what the rollup sums (a session set to null on its deletion changes nothing here).
    f"""CREATE TRIGGER usage_day_update AFTER UPDATE OF recorded_at, model, agent, {', '.join(SUMMED)}
        ON {USAGE_TABLE} BEGIN {_sqlite_take_away('OLD')} {_sqlite_add('NEW')} END""",
]
_SQLITE_DROP = [f"DROP TRIGGER IF EXISTS {name}" for name in sorted(TRIGGER_NAMES["sqlite"])]


def _pg_grouped(rows: str) -> str:
    sums = ", ".join(f"SUM({name}) AS {name}" for name in SUMMED)
    return (f"SELECT (recorded_at AT TIME ZONE 'UTC')::date AS day, model, agent, COUNT(*) AS calls, {sums} "
            f"FROM {rows} GROUP BY 1, 2, 3")


_PG_TAKEN = ", ".join(f"{name} = r.{name} - o.{name}" for name in ("calls", *SUMMED))
_PG_CREATE = [
    f"""CREATE OR REPLACE FUNCTION usage_day_apply() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                UPDATE {ROLLUP_TABLE} AS r SET {_PG_TAKEN} FROM ({_pg_grouped('old_rows')}) AS o
                 WHERE r.day = o.day AND r.model = o.model AND r.agent = o.agent;
            END IF;
            IF TG_OP IN ('UPDATE', 'INSERT') THEN
                INSERT INTO {ROLLUP_TABLE} ({_COLUMNS}) {_pg_grouped('new_rows')} ORDER BY 1, 2, 3
                ON CONFLICT (day, model, agent) DO UPDATE SET {_ADDED};
            END IF;
            RETURN NULL;
        END $$""",
    f"""CREATE TRIGGER usage_day_insert AFTER INSERT ON {USAGE_TABLE} REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION usage_day_apply()""",
    f"""CREATE TRIGGER usage_day_delete AFTER DELETE ON {USAGE_TABLE} REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION usage_day_apply()""",
    f"""CREATE TRIGGER usage_day_update AFTER UPDATE ON {USAGE_TABLE}
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION usage_day_apply()""",
]
_PG_DROP = [*(f"DROP TRIGGER IF EXISTS {name} ON {USAGE_TABLE}" for name in sorted(TRIGGER_NAMES["postgresql"])),
            "DROP FUNCTION IF EXISTS usage_day_apply()"]


def trigger_sql(vendor: str, *, create: bool) -> list[str]:
    statements = {"sqlite": (_SQLITE_CREATE, _SQLITE_DROP), "postgresql": (_PG_CREATE, _PG_DROP)}
    if vendor not in statements:
        raise NotImplementedError(f"usage rollup triggers are not written for {vendor}")
    return statements[vendor][0 if create else 1]


def create_triggers(apps: Any, schema_editor: Any) -> None:
    """Migration step (RunPython); a later migration that rebuilds the usage table calls it again."""
    vendor = schema_editor.connection.vendor
    for statement in trigger_sql(vendor, create=False) + trigger_sql(vendor, create=True):
        schema_editor.execute(statement, params=None)


def drop_triggers(apps: Any, schema_editor: Any) -> None:
    for statement in trigger_sql(schema_editor.connection.vendor, create=False):
        schema_editor.execute(statement, params=None)


def usage_days_rebuild() -> int:
    """Recompute the rollup from every usage row; returns its row count. The triggers keep it from
    then on: this is for the migration that creates it, and a repair."""
    day = "date(recorded_at)" if connection.vendor == "sqlite" else "(recorded_at AT TIME ZONE 'UTC')::date"
    sums = ", ".join(f"SUM({name})" for name in SUMMED)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {ROLLUP_TABLE}")
        cursor.execute(f"INSERT INTO {ROLLUP_TABLE} ({_COLUMNS}) "
                       f"SELECT {day}, model, agent, COUNT(*), {sums} FROM {USAGE_TABLE} GROUP BY 1, 2, 3")
        return cursor.rowcount
