"""Rows named by id or by their human key, one rule for the API's paths, bodies and filters, the MCP
tools and the admin alike.

A model whose rows agents name by a key says so next to its fields as `address_key = "key"`
(sessions, plans, checkpoints); tasks are named by key within their session. A key is unique within
its scope only (a session's within its project, a plan's or checkpoint's within its session), so one
project neither learns nor blocks another's keys; a key that names several rows the caller can see
(a global token's view of two projects) is a 409 `ambiguous_key` asking for the id. A value shaped
like a ULID is read as an id first: where a row is looked up (paths, related-row fields, MCP
arguments) it names a row by key only when no row has that id; where a value is only translated into
a column (reference fields, filters) a ULID-shaped value is the id. Any other value is a key, and no
key may be shaped like a ULID (`address_key_check`): it would read as another row's id.

A row a seed tool's file brought (`manage.py import_seed`) may also be named by the id it had there (a Ralph
V2 GUID, a ralphy run id that is no ULID, claude-mem's `obs-0001`), where the value names no row by id or key
and exactly one row in scope had that id (two projects' files may number alike): `by_seed_id`. Every list of a
model with ULID ids also takes `?source_id=` (`ralphsite.core.api.filters.SeedIdFilter`): all the rows in scope an
import brought under that id.
"""

from typing import Any, TypeVar

from django.db import models
from django.db.models import Case, Q, QuerySet, Value, When

from ralphsite.core.access import current_scope
from ralphsite.core.errors import Conflict, InvalidInput
from ralphsite.core.fields import ULIDField
from ralphsite.core.models import SeedRow
from ralphsite.core.ulid import ulid_normalize

M = TypeVar("M", bound=models.Model)


def address_key_of(model: type[models.Model] | None) -> str | None:
    """The unique key field agents may name `model`'s rows by, or None."""
    return getattr(model, "address_key", None)


def key_in_paths_of(model: type[models.Model] | None) -> str | None:
    """The key field that names `model`'s rows where an id may stand, so never shaped like a ULID: the address
    key, or the key a row is named by within its session in paths (`session_path_key`: a task's, a question's,
    `sessions/{session}/tasks/{task}/`)."""
    return address_key_of(model) or getattr(model, "session_path_key", None)


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


def address_key_check(model: type[models.Model], data: dict[str, Any], instance: models.Model | None = None) -> None:
    """The rules of a keyed model's key, for a create (`instance` None) or an update of `instance` with `data`:

    * a key shaped like a ULID is refused (400 `key_shaped_like_id`): wherever an id is taken, a ULID-shaped
      reference is read as an id, so such a key would name (or squat) another row's id, perhaps one out of
      the writer's scope;
    * a key is unique within its scope (the model's unique constraint that leads with the key: a session's
      project, a plan's or checkpoint's session): a key taken there is a 409 `conflict` on `key`. Another
      scope's row with the same key is no conflict, so a writer learns nothing of rows it cannot see.
    """
    key_field = key_in_paths_of(model)
    if key_field is None:
        return
    meta = model._meta

    def value(name: str) -> Any:
        field = meta.get_field(name)
        for given in (name, field.attname):
            if given in data:
                return getattr(data[given], "pk", data[given])
        return field.get_default() if instance is None else getattr(instance, field.attname)

    key = value(key_field)
    if key_field in data and (instance is None or key != getattr(instance, key_field)):
        shaped = key_shaped_like_id(model, key)
        if shaped is not None:
            raise shaped
    for constraint in meta.constraints:
        if not isinstance(constraint, models.UniqueConstraint) or constraint.fields[:1] != (key_field,):
            continue
        if instance is not None and not any(name in data or meta.get_field(name).attname in data
                                            for name in constraint.fields):
            continue
        lookup = {meta.get_field(name).attname: value(name) for name in constraint.fields}
        if not key or None in lookup.values():  # blank keys repeat; so do rows of no session (NULLs differ)
            continue
        holders = model._default_manager.filter(**lookup)
        if instance is not None:
            holders = holders.exclude(pk=instance.pk)
        if holders.exists():
            where = " and ".join(meta.get_field(name).verbose_name for name in constraint.fields[1:])
            raise Conflict(f"{key_field}: a {meta.verbose_name} with this {key_field} already exists in its {where}.",
                           details={key_field: [f"Taken in this {where}."]})


def key_shaped_like_id(model: type[models.Model], key: Any) -> InvalidInput | None:
    """The refusal of a keyed model's `key` shaped like a ULID (400 `key_shaped_like_id`), or None. The database
    refuses such a key too (`ralphsite.core.db.lookups.key_not_shaped_like_id`), for writes past the services."""
    key_field = key_in_paths_of(model)
    if key_field is None or not as_ulid(key):
        return None
    noun = model._meta.verbose_name
    return InvalidInput(f"A {noun} {key_field} is never shaped like a ULID: it would read as an id.",
                        code="key_shaped_like_id", details={key_field: ["Not shaped like a ULID."]})


def one_by_key(queryset: QuerySet[M], key_field: str, key: str) -> M | None:
    """The one row of `queryset` (the caller's scope) whose `key_field` is `key`; None when there is none.
    Keys are unique per scope, so a broader caller (a global token) may see several: that is a 409
    `ambiguous_key` listing their ids, never a guess."""
    rows = list(by_key(queryset, key_field, key)[:_AMBIGUOUS_IDS_SHOWN])
    if len(rows) > 1:
        raise ambiguous_key(queryset.model, key_field, key, [row.pk for row in rows])
    return rows[0] if rows else None


def ambiguous_key(model: type[models.Model], key_field: str, key: str, ids: list[Any]) -> Conflict:
    noun = model._meta.verbose_name_plural
    return Conflict(f"The {key_field} {key!r} names several {noun} you can see: name the one you mean by its id.",
                    code="ambiguous_key", details={key_field: key, "ids": ids})


_AMBIGUOUS_IDS_SHOWN = 20


def by_reference(queryset: QuerySet[M], reference: Any, *, key_field: str | None = None) -> M | None:
    """The row of `queryset` named by `reference`: its id (tried first when ULID-shaped) or its key
    (`key_field`, by default the model's `address_key`). None when it names no row of the queryset."""
    key_field = key_field or address_key_of(queryset.model)
    if not isinstance(reference, str) or not reference:
        return None
    pk = as_ulid(reference)
    row = queryset.filter(pk=pk).first() if pk is not None else None
    if row is None and key_field:
        row = one_by_key(queryset, key_field, reference)
    return row if row is not None or pk is not None else by_seed_id(queryset, reference)


def by_seed_id(queryset: QuerySet[M], reference: Any) -> M | None:
    """The row of `queryset` a seed tool's file brought under its own id `reference`, when exactly one did;
    None otherwise. Only for rows with ULID ids (an integer id and a tool's row number look alike)."""
    if not isinstance(reference, str) or not reference:
        return None
    rows = list(queryset.filter(seed_id_condition(queryset.model, reference))[:2])
    return rows[0] if len(rows) == 1 else None


def seed_id_condition(model: type[models.Model], reference: str) -> Q:
    """The rows an import brought under the tool's id `reference` (none for a model with integer ids), any number
    of them (several projects' files may number alike). One indexed lookup (SeedRow's `seedrow_model_key`)."""
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
    when there is none (a row out of scope is answered as one that does not exist); 409 `ambiguous_key` when
    several rows in scope have it."""
    key_field = address_key_of(model)
    if key_field is None or not isinstance(reference, str) or not reference:
        return None
    # One query: the rows with that key, else the one row an import brought under that id (`by_seed_id`).
    named = Q(**{key_field: reference}) & ~Q(**{key_field: ""})
    rows = list(current_scope().filter(model._default_manager.all())
                .filter(named | seed_id_condition(model, reference))
                .order_by(Case(When(named, then=Value(0)), default=Value(1)))
                .values_list("pk", key_field)[:_AMBIGUOUS_IDS_SHOWN])
    keyed = [pk for pk, key in rows if key == reference]
    if len(keyed) > 1:
        raise ambiguous_key(model, key_field, reference, keyed)
    if keyed or len(rows) == 1:
        return rows[0][0]
    return None
