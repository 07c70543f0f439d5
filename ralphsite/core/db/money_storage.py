"""The migration step that moves SQLite's USD columns to whole micro-dollars (`ralphsite.core.money`).

PostgreSQL keeps numeric(18, 6): nothing to do there. On SQLite every stored amount (a float, or an
integer where the amount was whole dollars) becomes ROUND(amount * 10^6) as an integer; backwards,
the integer becomes a float again. Column names are the migration's own constants; no input reaches
this SQL.
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations

from ralphsite.core.money import MICROS_PER_USD

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


def _usd_to_micros_step(columns: TableColumns) -> Step:
    return _convert(columns, f"CAST(ROUND({{0}} * {MICROS_PER_USD}) AS INTEGER)")


def _micros_to_usd_step(columns: TableColumns) -> Step:
    return _convert(columns, f"({{0}} / {MICROS_PER_USD}.0)")


def _as_is(step: Step) -> Step:
    return step


def money_to_micros(columns: TableColumns, around: Callable[[Step], Step] = _as_is) -> migrations.RunPython:
    """The reversible operation both ways: to micro-dollars, and back to floats when unapplied.
    `around` wraps each step (the ledger's events drop their append-only triggers around it)."""
    return migrations.RunPython(around(_usd_to_micros_step(columns)), around(_micros_to_usd_step(columns)))
