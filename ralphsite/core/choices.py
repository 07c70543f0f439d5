"""Enum aliases: the seeds' spellings of our choice values, accepted on input (bodies and filters).

Every choice value is also accepted in any case and with its `_` or `-` left out or swapped, which
covers Ralph V2's PascalCase names (`ExecutingBatch` → `executing_batch`) and DevTeam's `half-open`
(→ `half_open`). Spellings that are other words are declared next to the enum with `@input_aliases`
(ralphy's task `done` → `completed`). A choice field accepts the aliases of the enums whose values it
offers (or a subset of them); responses always carry the canonical value.
"""

from collections.abc import Callable, Iterable
from functools import cache
from typing import Any, TypeVar

from django.db import models

E = TypeVar("E", bound=type[models.Choices])

# canonical values of a registered enum → its declared aliases (alias → canonical value)
_declared: dict[frozenset[str], dict[str, str]] = {}


def input_aliases(**aliases: str) -> Callable[[E], E]:
    """Declare other spellings of an enum's values (`pending="not_started"`), accepted on input."""

    def register(enum: E) -> E:
        values = frozenset(str(value) for value in enum.values)
        unknown = set(aliases.values()) - values
        if unknown:
            raise ValueError(f"{enum.__name__}: aliases name no value of the enum: {sorted(unknown)}")
        clashing = set(aliases) & values
        if clashing:
            raise ValueError(f"{enum.__name__}: an alias may not be a value of the enum: {sorted(clashing)}")
        _declared[values] = {**_declared.get(values, {}), **aliases}
        return enum

    return register


def _folded(text: str) -> str:
    return text.lower().replace("_", "").replace("-", "").replace(" ", "")


def _pascal(value: str) -> str:
    return "".join(part.capitalize() for part in value.split("_"))


@cache
def _spellings(values: frozenset[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(folded spelling → canonical value, declared alias → canonical value) for a set of choices."""
    declared: dict[str, str] = {}
    for enum_values, aliases in _declared.items():
        if values <= enum_values:
            declared |= {alias: value for alias, value in aliases.items() if value in values}
    folded: dict[str, str] = {}
    ambiguous: set[str] = set()
    for alias, value in [*((v, v) for v in values), *declared.items()]:
        key = _folded(alias)
        if folded.get(key, value) != value:
            ambiguous.add(key)
        folded[key] = value
    return {key: value for key, value in folded.items() if key not in ambiguous}, declared


def _choice_values(choices: Iterable[Any]) -> frozenset[str]:
    return frozenset(str(value) for value in choices if value not in ("", None))


def choice_canonical(choices: Iterable[Any], data: Any) -> str | None:
    """The canonical value `data` spells among `choices` (values), or None when it spells none."""
    if not isinstance(data, str):
        return None
    return _spellings(_choice_values(choices))[0].get(_folded(data))


def choice_aliases_listed(choices: Iterable[Any]) -> dict[str, str]:
    """The aliases the OpenAPI schema lists for a set of choices: the PascalCase name of each value of
    several words and every declared alias (the case-insensitive rule itself is stated in the README)."""
    values = _choice_values(choices)
    listed = {_pascal(value): value for value in sorted(values) if "_" in value}
    return listed | _spellings(values)[1]


def invalid_choice_message(value: Any, allowed: Iterable[Any]) -> str:
    """What every door says of a value no alias maps to a choice (the API's fields and filters, the import)."""
    return f"{value!r} is not a valid choice; allowed: {', '.join(map(str, allowed))}."
