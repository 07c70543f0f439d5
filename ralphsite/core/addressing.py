"""Rows named by id or by their human key, one rule for the API's paths, bodies and filters, the MCP
tools and the admin alike.

A model whose rows agents name by a unique key says so next to its fields as `address_key = "key"`
(sessions, plans, checkpoints); tasks are named by key within their session. A value shaped like a
ULID is read as an id first: where a row is looked up (paths, related-row fields, MCP arguments) it
names a row by key only when no row has that id; where a value is only translated into a column
(reference fields, filters) a ULID-shaped value is the id. Any other value is a key.

A row a seed tool's file brought (`manage.py import_seed`) may also be named by the id it had there (a Ralph
V2 GUID, a ralphy run id that is no ULID, claude-mem's `obs-0001`), where the value names no row by id or key
and exactly one row in scope had that id (two projects' files may number alike): `by_seed_id`.
"""

from typing import Any, TypeVar

from django.db import models
from django.db.models import Case, Q, QuerySet, Value, When

from ralphsite.core.access import current_scope
from ralphsite.core.fields import ULIDField
from ralphsite.core.models import SeedRow
from ralphsite.core.ulid import ulid_normalize

M = TypeVar("M", bound=models.Model)


def address_key_of(model: type[models.Model] | None) -> str | None:
    """The unique key field agents may name `model`'s rows by, or None."""
    return getattr(model, "address_key", None)


def as_ulid(value: Any) -> str | None:
    """`value` as a canonical ULID, or None when it is not shaped like one."""
    try:
        return ulid_normalize(value)
    except ValueError:
        return None


def by_key(queryset: QuerySet[M], key_field: str, key: str) -> QuerySet[M]:
    """The rows of `queryset` whose `key_field` is `key`. The query repeats the condition of a key's
    partial unique index (blank keys are not unique): SQLite uses such an index only when it does."""
    return queryset.filter(**{key_field: key}).exclude(**{key_field: ""})


def by_reference(queryset: QuerySet[M], reference: Any, *, key_field: str | None = None) -> M | None:
    """The row of `queryset` named by `reference`: its id (tried first when ULID-shaped) or its key
    (`key_field`, by default the model's `address_key`). None when it names no row of the queryset."""
    key_field = key_field or address_key_of(queryset.model)
    if not isinstance(reference, str) or not reference:
        return None
    pk = as_ulid(reference)
    row = queryset.filter(pk=pk).first() if pk is not None else None
    if row is None and key_field:
        row = by_key(queryset, key_field, reference).first()
    return row if row is not None or pk is not None else by_seed_id(queryset, reference)


def by_seed_id(queryset: QuerySet[M], reference: Any) -> M | None:
    """The row of `queryset` a seed tool's file brought under its own id `reference`, when exactly one did;
    None otherwise. Only for rows with ULID ids (an integer id and a tool's row number look alike)."""
    if not isinstance(reference, str) or not reference:
        return None
    rows = list(queryset.filter(_seed_id_condition(queryset.model, reference))[:2])
    return rows[0] if len(rows) == 1 else None


def _seed_id_condition(model: type[models.Model], reference: str) -> Q:
    """The rows an import brought under the tool's id `reference` (none for a model with integer ids)."""
    if not isinstance(model._meta.pk, ULIDField):
        return Q(pk__in=[])
    return Q(pk__in=SeedRow.objects.filter(object_model=model._meta.label_lower, source_key=reference)
             .values("object_id"))


def filter_reference(model: type[models.Model], reference: str) -> str | None:
    """The id a filter's value (`?session=…`) names: a ULID-shaped value is the id itself (a filter of
    an id no row in scope has matches nothing), any other value the id of the row in scope with that
    key; None when no row in scope has that key."""
    return as_ulid(reference) or pk_by_key(model, reference)


def unknown_reference(model: type[models.Model], reference: Any) -> str:
    """What a filter naming no row says (the same words for a missing row and one out of scope)."""
    return f"No {model._meta.verbose_name} has the id or key {reference!r}."


def pk_by_key(model: type[models.Model], reference: Any) -> str | None:
    """The id of the row of a keyed model whose key is `reference`, within the request's scope; None
    when there is none (a row out of scope is answered as one that does not exist)."""
    key_field = address_key_of(model)
    if key_field is None or not isinstance(reference, str) or not reference:
        return None
    # One query: the row with that key, else the one row an import brought under that id (`by_seed_id`).
    named = Q(**{key_field: reference}) & ~Q(**{key_field: ""})
    rows = list(current_scope().filter(model._default_manager.all())
                .filter(named | _seed_id_condition(model, reference))
                .order_by(Case(When(named, then=Value(0)), default=Value(1)))
                .values_list("pk", key_field)[:2])
    if rows and (rows[0][1] == reference or len(rows) == 1):
        return rows[0][0]
    return None
