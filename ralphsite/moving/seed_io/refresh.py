"""A newer copy of a source: rows changed in the file are updated, rows gone from it are reported.

A row already imported from the same source whose digest (`row_digest`) differs from its SeedRow's changed
in the file: its field values are compared with the object's, and the fields that differ go through the
model's update service (`ralphsite.core.writes`), the one the API and the admin call, so the same
lifecycle rules hold (a finished session is not reopened, a task's status follows its lifecycle). A
service's refusal skips the row, listed with its reason, and the SeedRow keeps its old digest so the
next import tries again. Rows of the source the file no longer has are reported; `--delete-missing`
deletes them through the model's delete service (a refusal is reported, the row kept).
"""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import IntegrityError, models, transaction

from ralphsite.core.errors import DomainError
from ralphsite.core.models import SeedRow
from ralphsite.core.writes import writes_for

# Fields an update never sets from the file: the id is the row's identity, the stamps are the service's.
UNCOMPARED = frozenset({"id", "created_at", "updated_at", "last_activity_at"})
# What a service refuses a change with: the reason goes into the summary, the row is skipped.
REFUSALS = (DomainError, ValidationError, IntegrityError)


def row_digest(row: dict[str, Any]) -> str:
    """The row as the file has it, in 32 hex digits: equal digests, an unchanged row."""
    return hashlib.blake2b(repr(tuple(row.items())).encode(), digest_size=16).hexdigest()


def refusal(error: Exception) -> str:
    """A service's refusal in one line."""
    if isinstance(error, DomainError):
        return error.message
    if isinstance(error, ValidationError):
        return "; ".join(error.messages)
    return str(error).splitlines()[0]


def field_changes(obj: models.Model, values: dict[str, Any]) -> dict[str, Any]:
    """The update service's `data`: each field whose value in the file differs from the object's, by field
    name (a foreign key as its object, as the API's serializers give it)."""
    data: dict[str, Any] = {}
    for name, value in values.items():
        if name in UNCOMPARED or name.startswith("_"):
            continue
        try:
            model_field = obj._meta.get_field(name)  # a name or a foreign key's attname (`session_id`)
        except FieldDoesNotExist:
            continue
        if not model_field.concrete or model_field.primary_key:
            continue
        if _holds(model_field, getattr(obj, model_field.attname), value):
            continue
        if model_field.is_relation:
            value = None if value is None else model_field.related_model._default_manager.get(pk=value)
        data[model_field.name] = value
    return data


def _holds(model_field: models.Field, current: Any, value: Any) -> bool:
    """Whether the stored `current` is the file's `value` as the field keeps it (a BLOB as bytes; money to the
    field's places, which the file's REALs may pass)."""
    if isinstance(current, memoryview):
        current = bytes(current)
    if isinstance(model_field, models.DecimalField) and isinstance(current, Decimal) and value is not None:
        return abs(current - Decimal(value)) < Decimal(1).scaleb(-model_field.decimal_places)
    return current == value


def object_update(obj: models.Model, data: dict[str, Any]) -> str | None:
    """`data` through the model's update service in a savepoint of its own (a refusal undoes only this
    row); None when it landed, else the refusal."""
    try:
        with transaction.atomic():
            writes_for(type(obj)).update(obj, data)
    except REFUSALS as error:
        return f"not updated: {refusal(error)}"
    return None


def object_delete(obj: models.Model) -> str | None:
    """`obj` through the model's delete service in a savepoint of its own; None when it went, else the refusal."""
    try:
        with transaction.atomic():
            writes_for(type(obj)).delete(obj)
    except REFUSALS as error:
        return f"not deleted: {refusal(error)}"
    return None


@dataclass(frozen=True)
class Known:
    """A row of the file imported before: its SeedRow and the object it became."""

    seed_row_id: int
    object_id: str
    digest: str


def known_rows(seed_rows: models.QuerySet[SeedRow], keys: list[str]) -> dict[str, Known]:
    return {key: Known(pk, object_id, digest) for key, pk, object_id, digest in
            seed_rows.filter(source_key__in=keys).values_list("source_key", "pk", "object_id", "digest")}


def objects_by_id(model: type[models.Model], ids: list[str]) -> dict[str, models.Model]:
    return {str(pk): obj for pk, obj in model._default_manager.in_bulk(ids).items()}


def seed_row_extras(seed_row_ids: list[int]) -> dict[int, dict[str, Any]]:
    """What these SeedRows keep of their rows (`extra`), by SeedRow id."""
    return dict(SeedRow.objects.filter(pk__in=seed_row_ids).values_list("pk", "extra"))


def seed_rows_refresh(refreshed: list[tuple[int, str, dict[str, Any]]]) -> None:
    """The SeedRows of rows brought up to date: (SeedRow id, the row's new digest, its new extra) each."""
    SeedRow.objects.bulk_update([SeedRow(pk=pk, digest=digest, extra=extra) for pk, digest, extra in refreshed],
                                ["digest", "extra"], batch_size=500)


def missing_keys(seed_rows: models.QuerySet[SeedRow], file_keys: set[str]) -> Iterator[tuple[str, int, str]]:
    """(key, SeedRow id, object id) of each row of the source the file no longer has."""
    for key, pk, object_id in seed_rows.values_list("source_key", "pk", "object_id").iterator(chunk_size=2000):
        if key not in file_keys:
            yield key, pk, object_id
