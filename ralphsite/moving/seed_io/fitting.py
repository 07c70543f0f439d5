"""A row's values fitted to what our fields hold, as every other door fits them: JSON to its field's shape
(`ralphsite.core.shapes`), an enum spelling to its canonical value through the API's aliases
(`ralphsite.core.choices`), a cost to the places and the limit of the money columns
(`ralphsite.core.money`). A value that fits neither is set aside: the field gets its default, the tool's
value stays on the SeedRow (`extra`, which export_seed writes back), and the summary reports it; nothing
is stored raw."""

import base64
from collections.abc import Callable
from functools import cache
from typing import Any

from django.db import models

from ralphsite.core.choices import choice_canonical, invalid_choice_message
from ralphsite.core.money import USD_MAX_ANY_BACKEND, MoneyField, usd, usd_max
from ralphsite.core.shapes import (
    NotShaped,
    number_bounds,
    number_problem,
    shaped_fields,
    text_limited,
    text_problem,
)

Row = dict[str, Any]


def jsonable(value: Any) -> Any:
    """A raw column value for a JSON field (`extra`): BLOBs become {"base64": …}."""
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode()}
    return value


@cache
def _fields_where(model: type[models.Model], applies: Callable[[models.Field], Any]) -> tuple[models.Field, ...]:
    """The model's concrete fields a check `applies` to, found once per model: a row touches only those (every
    field of every row, for each check, was a large part of an import's time)."""
    return tuple(f for f in model._meta.concrete_fields if applies(f))


def _is_money(model_field: models.Field) -> bool:
    return isinstance(model_field, MoneyField)


def _text_required(model_field: models.Field) -> bool:
    return isinstance(model_field, models.CharField | models.TextField) and not model_field.blank


def seed_column(table: Any, name: str) -> str:
    """The seed column that feeds our field `name` (the field's name when no column map names it)."""
    return next((column for column, (field_name, _convert) in getattr(table, "columns", {}).items()
                 if field_name == name), name)


def _set_aside(table: Any, row: Row, values: dict[str, Any], extra: dict[str, Any],
               model_field: models.Field) -> str:
    """The field's default in `values`, the tool's value kept in `extra`; returns the seed column."""
    column = seed_column(table, model_field.name)
    extra.setdefault(column, jsonable(row[column]) if column in row else values[model_field.name])
    values[model_field.name] = None if model_field.null else model_field.get_default()
    return column


def _problems_set_aside(table: Any, row: Row, values: dict[str, Any], extra: dict[str, Any],
                        checked: Callable[[models.Field], bool],
                        problem_of: Callable[[models.Field, Any], str | None]) -> list[str]:
    """Each value of a `checked` field that `problem_of` (field, value) finds a problem with is set aside.
    Returns a reason per value set aside."""
    reasons = []
    for model_field in _fields_where(table.model, checked):
        problem = problem_of(model_field, values.get(model_field.name))
        if problem:
            reasons.append(f"{_set_aside(table, row, values, extra, model_field)}: {problem}")
    return reasons


def texts_fit(table: Any, row: Row, values: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    """Each text within the limit every door applies (`text_problem`), else set aside (the tool's value kept
    on the seed row). Returns a reason per value set aside."""
    return _problems_set_aside(table, row, values, extra, text_limited, text_problem)


def shapes_fit(table: Any, row: Row, values: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    """Each JSON value in the shape its field declares: reshaped when it can be (keys spelled another way,
    one object for a list), else set aside. Returns a reason per value set aside."""
    reasons = []
    for model_field, shape in shaped_fields(table.model):
        value = values.get(model_field.name)
        if model_field.name not in values or (value is None and model_field.null) or shape.problem(value) is None:
            continue
        try:
            values[model_field.name] = shape.reshape(value)
        except NotShaped as unfit:
            reasons.append(f"{_set_aside(table, row, values, extra, model_field)}: {unfit}")
    return reasons


def _money_values(table: Any, values: dict[str, Any]) -> list[tuple[models.Field, Any]]:
    return [(f, values[f.name]) for f in _fields_where(table.model, _is_money) if values.get(f.name) is not None]


def costs_fit(table: Any, row: Row, values: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    """Each cost within what the money columns hold (`usd_max`), else set aside. Returns a reason per
    value set aside."""
    # Only an amount past what every backend holds asks the connection's limit (asked per row, it cost more
    # than all of a row's other checks).
    large = [(model_field, value) for model_field, value in _money_values(table, values)
             if abs(value) > USD_MAX_ANY_BACKEND]
    if not large:
        return []
    limit = usd_max()
    return [f"{_set_aside(table, row, values, extra, model_field)}: {value} USD is more than the {limit} "
            "the money columns hold" for model_field, value in large if abs(value) > limit]


def costs_rounded(table: Any, row: Row, values: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    """Each cost to the `USD_PLACES` places the columns keep: a REAL cost keeps its value (1.5e-07 as
    it is); only a float's noise past them (0.30000000000000004) is rounded, half up, the tool's value
    kept on the SeedRow. Returns the seed column of each value rounded (the summary counts them)."""
    columns = []
    for model_field, value in _money_values(table, values):
        if value != usd(value):
            column = seed_column(table, model_field.name)
            extra.setdefault(column, jsonable(row[column]) if column in row else value)
            values[model_field.name] = usd(value)
            columns.append(column)
    return columns


@cache
def _choice_fields(model: type[models.Model]) -> list[tuple[models.Field, frozenset[str]]]:
    """The model's fields with choices, each with its canonical values."""
    return [(f, frozenset(str(value) for value, _label in f.flatchoices)) for f in model._meta.concrete_fields
            if f.choices]


def numbers_fit(table: Any, row: Row, values: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    """Each integer within its column's range (`number_problem`, what every door holds: a negative count, a
    number PostgreSQL's column cannot hold), else set aside. Returns a reason per value set aside."""
    return _problems_set_aside(table, row, values, extra, number_bounds, number_problem)


def required_missing(table: Any, values: dict[str, Any]) -> tuple[str, str] | None:
    """The seed column of the first text a row must have and has blank (a key, a title, a kind), with the API's
    message; None when it has them all. Such a row is left out: no default stands in for it."""
    for model_field in _fields_where(table.model, _text_required):
        if values.get(model_field.name) == "":
            return seed_column(table, model_field.name), "This field may not be blank."
    return None


def choices_fit(table: Any, row: Row, values: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    """Each enum value canonical, through the aliases the API accepts (`half-open` → `half_open`, `Done` →
    `done`); the tool's spelling is kept in `extra` so an export writes it back. A value no alias maps is
    set aside. Returns a reason per value set aside."""
    reasons = []
    for model_field, canonical_values in _choice_fields(table.model):
        value = values.get(model_field.name)
        if value in canonical_values or value is None or (value == "" and model_field.blank):
            continue
        canonical = choice_canonical(canonical_values, value)
        if canonical is None:
            column = _set_aside(table, row, values, extra, model_field)
            reasons.append(f"{column}: {invalid_choice_message(value, (c for c, _label in model_field.flatchoices))}")
            continue
        column = seed_column(table, model_field.name)
        extra.setdefault(column, jsonable(row[column]) if column in row else value)
        values[model_field.name] = canonical
    return reasons
