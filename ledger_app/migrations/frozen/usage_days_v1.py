"""The daily usage rollup per (day, model, agent) and its triggers, as migration 0008 created them
(and 0009 restores them when reversed). Frozen: see the package's docstring."""

from typing import Any

SUMMED = ("input_tokens", "output_tokens", "cached_read_tokens", "cached_write_tokens", "reasoning_tokens",
          "cost_usd")
_COLUMNS = ", ".join(("day", "model", "agent", "calls", *SUMMED))
_ADDED = ", ".join(f"{name} = ledger_app_usageday.{name} + excluded.{name}" for name in ("calls", *SUMMED))


def _sqlite_add(row: str) -> str:
    values = ", ".join(f"{row}.{name}" for name in SUMMED)
    return (f"INSERT INTO ledger_app_usageday ({_COLUMNS}) VALUES (date({row}.recorded_at), {row}.model, "
            f"{row}.agent, 1, {values}) ON CONFLICT (day, model, agent) DO UPDATE SET {_ADDED};")


def _sqlite_take_away(row: str) -> str:
    taken = ", ".join(f"{name} = {name} - {row}.{name}" for name in SUMMED)
    return (f"UPDATE ledger_app_usageday SET calls = calls - 1, {taken} WHERE day = date({row}.recorded_at) "
            f"AND model = {row}.model AND agent = {row}.agent;")


_SQLITE_CREATE = [
    f"CREATE TRIGGER usage_day_insert AFTER INSERT ON ledger_app_tokenusage BEGIN {_sqlite_add('NEW')} END",
    f"CREATE TRIGGER usage_day_delete AFTER DELETE ON ledger_app_tokenusage BEGIN {_sqlite_take_away('OLD')} END",
    f"""CREATE TRIGGER usage_day_update AFTER UPDATE OF recorded_at, model, agent, {', '.join(SUMMED)}
        ON ledger_app_tokenusage BEGIN {_sqlite_take_away('OLD')} {_sqlite_add('NEW')} END""",
]
_SQLITE_DROP = [f"DROP TRIGGER IF EXISTS {name}" for name in ("usage_day_delete", "usage_day_insert",
                                                              "usage_day_update")]


def _pg_grouped(rows: str) -> str:
    sums = ", ".join(f"SUM({name}) AS {name}" for name in SUMMED)
    return (f"SELECT (recorded_at AT TIME ZONE 'UTC')::date AS day, model, agent, COUNT(*) AS calls, {sums} "
            f"FROM {rows} GROUP BY 1, 2, 3")


_PG_TAKEN = ", ".join(f"{name} = r.{name} - o.{name}" for name in ("calls", *SUMMED))
_PG_CREATE = [
    f"""CREATE OR REPLACE FUNCTION usage_day_apply() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                UPDATE ledger_app_usageday AS r SET {_PG_TAKEN} FROM ({_pg_grouped('old_rows')}) AS o
                 WHERE r.day = o.day AND r.model = o.model AND r.agent = o.agent;
            END IF;
            IF TG_OP IN ('UPDATE', 'INSERT') THEN
                INSERT INTO ledger_app_usageday ({_COLUMNS}) {_pg_grouped('new_rows')} ORDER BY 1, 2, 3
                ON CONFLICT (day, model, agent) DO UPDATE SET {_ADDED};
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
_PG_DROP = [*(f"DROP TRIGGER IF EXISTS {name} ON ledger_app_tokenusage"
              for name in ("usage_day_delete", "usage_day_insert", "usage_day_update")),
            "DROP FUNCTION IF EXISTS usage_day_apply()"]


def _run(schema_editor: Any, statements: list[str]) -> None:
    for statement in statements:
        schema_editor.execute(statement, params=None)


def drop_triggers(apps: Any, schema_editor: Any) -> None:
    _run(schema_editor, _SQLITE_DROP if schema_editor.connection.vendor == "sqlite" else _PG_DROP)


def create_triggers(apps: Any, schema_editor: Any) -> None:
    drop_triggers(apps, schema_editor)
    _run(schema_editor, _SQLITE_CREATE if schema_editor.connection.vendor == "sqlite" else _PG_CREATE)


def fill(apps: Any, schema_editor: Any) -> None:
    """The rollup recomputed from every usage row."""
    day = ("date(recorded_at)" if schema_editor.connection.vendor == "sqlite"
           else "(recorded_at AT TIME ZONE 'UTC')::date")
    sums = ", ".join(f"SUM({name})" for name in SUMMED)
    _run(schema_editor, ["DELETE FROM ledger_app_usageday",
                         f"INSERT INTO ledger_app_usageday ({_COLUMNS}) SELECT {day}, model, agent, COUNT(*), "
                         f"{sums} FROM ledger_app_tokenusage GROUP BY 1, 2, 3"])
