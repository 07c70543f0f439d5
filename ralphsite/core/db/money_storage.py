"""The migration steps that keep SQLite's USD columns in whole units (`ralphsite.core.money`).

On SQLite:

* `money_to_micros` (sessions_app 0009, ledger_app 0007): every stored amount (a float, or an integer
  where the amount was whole dollars) became ROUND(amount * 10^6) as an integer, micro-dollars;
  backwards, the integer becomes a float again.
* `money_places` (sessions_app 0019, ledger_app 0019): micro-dollars become 1e-10 USD, the integers
  times 10^4; backwards, divided by 10^4, half up (the amounts are never negative). On PostgreSQL
  the same step alters numeric(18, 6) to numeric(22, 10) (and back).

The factors are the steps' own constants, as they were when each migration was written (not
`money.UNITS_PER_USD`, which a later migration may change). Column names are the migrations' own
constants; no input reaches this SQL.
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations

MICROS_PER_USD = 10**6

TableColumns = dict[str, tuple[str, ...]]
Step = Callable[[Any, Any], None]


def _convert(columns: TableColumns, expression: str) -> Step:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return
        quote = schema_editor.quote_name
        for table, names in columns.items():
            assignments = ", ".join(f"{quote(name)} = {expression.format(quote(name))}" for name in names)
            schema_editor.execute(f"UPDATE {quote(table)} SET {assignments}", params=None)
    return run


def _as_is(step: Step) -> Step:
    return step


def money_to_micros(columns: TableColumns, around: Callable[[Step], Step] = _as_is) -> migrations.RunPython:
    """The reversible operation both ways: to micro-dollars, and back to floats when unapplied.
    `around` wraps each step (the ledger's events drop their append-only triggers around it)."""
    return migrations.RunPython(around(_convert(columns, f"CAST(ROUND({{0}} * {MICROS_PER_USD}) AS INTEGER)")),
                                around(_convert(columns, f"({{0}} / {MICROS_PER_USD}.0)")))


def _numeric(columns: TableColumns, digits: int, places: int) -> Step:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        quote = schema_editor.quote_name
        for table, names in columns.items():
            changes = ", ".join(f"ALTER COLUMN {quote(name)} TYPE numeric({digits}, {places})" for name in names)
            schema_editor.execute(f"ALTER TABLE {quote(table)} {changes}", params=None)
    return run


def _both(*steps: Step) -> Step:
    def run(apps: Any, schema_editor: Any) -> None:
        for step in steps:
            step(apps, schema_editor)
    return run


def money_places(columns: TableColumns, *, before: tuple[int, int], after: tuple[int, int],
                 around: Callable[[Step], Step] = _as_is) -> migrations.RunPython:
    """USD columns from numeric(`before`) to numeric(`after`) (digits, places), reversible: PostgreSQL
    alters the columns' type (a table rewrite: no row trigger fires; backwards numeric rounds half away
    from zero); SQLite multiplies its whole units by 10^(places gained), backwards divides, half up (the
    amounts are never negative). `around` wraps each step (SQLite's triggers dropped around its UPDATEs)."""
    factor = 10 ** (after[1] - before[1])
    forwards = _both(_numeric(columns, *after), _convert(columns, f"({{0}} * {factor})"))
    backwards = _both(_numeric(columns, *before), _convert(columns, f"(({{0}} + {factor // 2}) / {factor})"))
    return migrations.RunPython(around(forwards), around(backwards))
