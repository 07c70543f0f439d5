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


def _per_table(vendor: str, columns: TableColumns, statement: str, clause: str) -> Step:
    """A step run on `vendor` only: one `statement` a table, its {table} the table's quoted name and its
    {clauses} the `clause` of each column (its {column} the column's quoted name), joined by commas."""
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != vendor:
            return
        quote = schema_editor.quote_name
        for table, names in columns.items():
            clauses = ", ".join(clause.format(column=quote(name)) for name in names)
            schema_editor.execute(statement.format(table=quote(table), clauses=clauses), params=None)
    return run


def _convert(columns: TableColumns, expression: str) -> Step:
    """SQLite: each column set to `expression` of itself ({column})."""
    return _per_table("sqlite", columns, "UPDATE {table} SET {clauses}", f"{{column}} = {expression}")


def _as_is(step: Step) -> Step:
    return step


def money_to_micros(columns: TableColumns, around: Callable[[Step], Step] = _as_is) -> migrations.RunPython:
    """The reversible operation both ways: to micro-dollars, and back to floats when unapplied.
    `around` wraps each step (the ledger's events drop their append-only triggers around it)."""
    return migrations.RunPython(around(_convert(columns, f"CAST(ROUND({{column}} * {MICROS_PER_USD}) AS INTEGER)")),
                                around(_convert(columns, f"({{column}} / {MICROS_PER_USD}.0)")))


def _numeric(columns: TableColumns, digits: int, places: int) -> Step:
    """PostgreSQL: the columns' type becomes numeric(digits, places)."""
    return _per_table("postgresql", columns, "ALTER TABLE {table} {clauses}",
                      f"ALTER COLUMN {{column}} TYPE numeric({digits}, {places})")


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
    forwards = _both(_numeric(columns, *after), _convert(columns, f"({{column}} * {factor})"))
    backwards = _both(_numeric(columns, *before), _convert(columns, f"(({{column}} + {factor // 2}) / {factor})"))
    return migrations.RunPython(around(forwards), around(backwards))
