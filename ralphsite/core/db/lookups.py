"""`<field>__ulid_shaped=True`: a text spelled like a ULID, in SQL every connection to the database runs.

A key shaped like a ULID would read as another row's id wherever an id is taken
(`ralphsite.core.addressing`), so the services refuse one (400 `key_shaped_like_id`) and the database
refuses it too (`key_not_shaped_like_id`), for writes past the services (raw SQL, another tool).
Django's `__regex` is no use in a CHECK on SQLite: there REGEXP is a Python function each of Django's
connections registers, so the sqlite3 shell and every other tool could no longer write the table.
SQLite's GLOB is built in; PostgreSQL's `~` is.
"""

from typing import Any

from django.db import NotSupportedError, models
from django.db.models import Lookup, Q

from ralphsite.core.ulid import ULID_GLOB, ULID_REGEX

_OPERATORS = {"sqlite": ("GLOB", ULID_GLOB), "postgresql": ("~", ULID_REGEX)}


@models.CharField.register_lookup
class ULIDShaped(Lookup):
    """True (or False) where the value is (or is not) spelled as `ralphsite.core.ulid.ulid_normalize` reads a
    ULID: 26 Crockford base32 characters in either case, the first at most 7."""

    lookup_name = "ulid_shaped"
    prepare_rhs = False

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        if not isinstance(self.rhs, bool):
            raise ValueError("__ulid_shaped takes True or False")
        if connection.vendor not in _OPERATORS:
            raise NotSupportedError(f"__ulid_shaped has no spelling for {connection.vendor}")
        lhs, params = self.process_lhs(compiler, connection)
        operator, pattern = _OPERATORS[connection.vendor]
        sql = f"{lhs} {operator} %s"
        return (sql if self.rhs else f"NOT ({sql})"), [*params, pattern]


def key_not_shaped_like_id(key_field: str, name: str) -> models.CheckConstraint:
    """The database's half of `address_key_check`'s shape rule, for a keyed model's `Meta.constraints`."""
    return models.CheckConstraint(condition=~Q(**{f"{key_field}__ulid_shaped": True}), name=name)
