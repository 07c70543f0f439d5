"""A seed's ledger event held to the ledger's own rules (`event_rule_problems`), as the append service holds
every other door's: a row breaking one is skipped and listed with the API's message, never stored."""

from typing import Any

from ledger_app.models import event_rule_problems, event_type_canonical
from ralphsite.moving.seed_io.base import EXTRA, BadValue, Row
from ralphsite.moving.seed_io.fitting import seed_column


def event_values_checked(table: Any, row: Row, values: dict[str, Any]) -> dict[str, Any]:
    """`values` with the type in its canonical spelling (an alias the API takes: AgentCompleted → agent_completed;
    the tool's kept in `EXTRA` for an export), or `BadValue` naming the seed column of the first broken rule."""
    column = seed_column(table, "type")
    canonical = event_type_canonical(values["type"])
    if canonical != values["type"]:
        values.setdefault(EXTRA, {})[column] = row[column]
        values["type"] = canonical
    # The row's values by name are the rule's mapping: no model instance is built per row to check it.
    if problems := event_rule_problems(values):
        name, [message] = next(iter(problems.items()))
        column = seed_column(table, name)
        raise BadValue(column, row.get(column), f"{column}: {message}")
    return values
