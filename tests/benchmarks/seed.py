"""Bulk seeding for the scale phase: many rows straight into a model's table, fast.

Nothing here names a column. The table, its columns and a value for each column come from the
model's `_meta` at run time (Django must be set up):

* an auto-increment primary key is left to the database; a ULID primary key gets a fresh ULID;
* the foreign key to the given parent model takes the parent ids round-robin;
* a field in a unique constraint gets a distinct value per row (so e.g. a per-run sequence number or
  an idempotency key never collides with the rows the API wrote);
* `overrides` names a value for a field (e.g. a ledger `type` the API would validate);
* otherwise the field's default, NULL when nullable, or a plain value of the field's type.

Rows go in with executemany in large transactions on SQLite and with COPY on PostgreSQL; the
database's own triggers (full-text search, append-only guards) fire as for any insert. A model whose
manager has its own `bulk_create` (ledger events: the hash chain) is seeded through it.
"""

import datetime
import decimal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ralphsite.core.progress import Progress
from ralphsite.core.ulid import ulid_new

UNIQUE_BASE = 10_000_000  # distinct values start far above anything the API assigned


class SeedSkipped(Exception):
    """The model (or a way to fill one of its required columns) does not exist: say so, do not crash."""


@dataclass(frozen=True)
class SeedResult:
    table: str
    rows: int
    seconds: float

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


def model_get(app_label: str, model_name: str) -> Any:
    from django.apps import apps

    try:
        return apps.get_model(app_label, model_name)
    except LookupError:
        raise SeedSkipped(f"model {app_label}.{model_name} does not exist") from None


def _unique_field_names(model: Any) -> set[str]:
    names = {f.name for f in model._meta.concrete_fields if f.unique and not f.primary_key}
    for group in model._meta.unique_together:
        names.update(group)
    for constraint in model._meta.constraints:
        names.update(getattr(constraint, "fields", ()) or ())
    return names


def _plain_value(field: Any, i: int) -> Any:
    from django.db import models
    from django.utils import timezone

    if field.choices:
        return field.choices[0][0]
    if isinstance(field, models.JSONField):
        return {}
    if isinstance(field, models.BooleanField):
        return False
    if isinstance(field, models.DateTimeField):
        return timezone.now()
    if isinstance(field, models.DateField):
        return datetime.date.today()
    if isinstance(field, models.DecimalField):
        return decimal.Decimal(0)
    if isinstance(field, models.FloatField):
        return 0.0
    if isinstance(field, (models.IntegerField, models.DurationField)):
        return 0 if isinstance(field, models.IntegerField) else datetime.timedelta(0)
    if isinstance(field, models.BinaryField):
        return b""
    if isinstance(field, (models.TextField, models.CharField)):
        text = f"benchmark row {i}: the quick brown fox jumps over the lazy dog"
        return text[: field.max_length] if field.max_length else text
    raise SeedSkipped(f"no value for required field {field.model.__name__}.{field.name} ({type(field).__name__})")


def _column_plan(model: Any, parent_model: Any, overrides: dict[str, Any]) -> tuple[list[Any], Any]:
    """(fields to insert, the foreign key field to the parent)."""
    from django.db import models

    parent_fk = None
    fields = []
    for field in model._meta.concrete_fields:
        if getattr(field, "generated", False):
            continue
        if field.primary_key and isinstance(field, models.AutoField):
            continue
        if field.is_relation and field.related_model is parent_model and parent_fk is None:
            parent_fk = field
        fields.append(field)
    if parent_fk is None:
        raise SeedSkipped(f"{model.__name__} has no foreign key to {parent_model.__name__}")
    unknown = set(overrides) - {f.name for f in fields}
    if unknown:
        # An override for a field the model does not have is harmless; the default is used instead.
        print(f"seed: {model.__name__} has no field(s) {sorted(unknown)}; ignored", file=sys.stderr)
    return fields, parent_fk


# How often a column's value changes: once for the whole seed, once per batch, or on every row.
CONST, BATCH, ROW = "const", "batch", "row"

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PAIRS = [a + b for a in _CROCKFORD for b in _CROCKFORD]  # 10 bits -> 2 characters


def fast_ulid(prefix: str, i: int) -> str:
    """A valid, unique, sortable ULID: a fresh 16-character prefix per batch plus a 50-bit counter.

    python-ulid costs ~10 µs per id; a million rows should not spend ten seconds on ids.
    """
    return prefix + "".join(_PAIRS[(i >> shift) & 1023] for shift in (40, 30, 20, 10, 0))


@dataclass(frozen=True)
class _Column:
    field: Any
    kind: str
    make: Callable[[int], Any]


def _column_values(model: Any, fields: list[Any], parent_fk: Any, parent_ids: Sequence[str],
                   overrides: dict[str, Any]) -> list[_Column]:
    from django.db import models
    from django.utils import timezone

    unique = _unique_field_names(model)
    columns: list[_Column] = []
    for field in fields:
        if field is parent_fk:
            columns.append(_Column(field, ROW, lambda i: parent_ids[i % len(parent_ids)]))
        elif field.primary_key:
            # A text primary key (ULID) is filled by fast_ulid in bulk_seed; any other gets a counter.
            columns.append(_Column(field, ROW, lambda i: UNIQUE_BASE + i))
        elif field.name in overrides:
            value = overrides[field.name]
            if callable(value):
                columns.append(_Column(field, ROW, value))
            else:
                columns.append(_Column(field, CONST, lambda i, v=value: v))
        elif field.name in unique:
            if isinstance(field, models.IntegerField):
                columns.append(_Column(field, ROW, lambda i: UNIQUE_BASE + i))
            elif isinstance(field, models.CharField):
                columns.append(_Column(field, ROW, lambda i: f"bench-{UNIQUE_BASE + i}"))
            else:
                raise SeedSkipped(f"cannot make distinct values for {model.__name__}.{field.name}")
        elif field.is_relation:
            if not field.null:
                raise SeedSkipped(f"{model.__name__}.{field.name} needs a {field.related_model.__name__}")
            columns.append(_Column(field, CONST, lambda i: None))
        elif isinstance(field, models.DateTimeField) and (field.auto_now or field.auto_now_add):
            columns.append(_Column(field, BATCH, lambda i: timezone.now()))
        elif field.has_default():
            kind = BATCH if callable(field.default) else CONST
            columns.append(_Column(field, kind, lambda i, f=field: f.get_default()))
        elif field.null:
            columns.append(_Column(field, CONST, lambda i: None))
        else:
            columns.append(_Column(field, BATCH, lambda i, f=field: _plain_value(f, i)))
    return columns


def bulk_seed(*, model: Any, parent_model: Any, parent_ids: Sequence[str], total: int,
              overrides: dict[str, Any] | None = None, batch_size: int = 20_000) -> SeedResult:
    """Insert `total` rows of `model`, spread round-robin over `parent_ids`, with a progress bar."""
    from django.db import DEFAULT_DB_ALIAS, connections, models, transaction

    if not parent_ids:
        raise SeedSkipped(f"no {parent_model.__name__} rows to attach {model.__name__} rows to")
    connection = connections[DEFAULT_DB_ALIAS]
    overrides = overrides or {}
    fields, parent_fk = _column_plan(model, parent_model, overrides)
    columns = _column_values(model, fields, parent_fk, parent_ids, overrides)
    table = model._meta.db_table
    qn = connection.ops.quote_name
    column_sql = ", ".join(qn(f.column) for f in fields)
    pk_index = next((n for n, c in enumerate(columns) if c.field.primary_key), None)
    ulid_pk = pk_index is not None and isinstance(columns[pk_index].field, models.CharField)

    def prep(column: _Column, i: int) -> Any:
        return column.field.get_db_prep_save(column.make(i), connection)

    template = [prep(c, 0) if c.kind == CONST else None for c in columns]
    row_columns = [(n, c) for n, c in enumerate(columns) if c.kind == ROW and not (ulid_pk and n == pk_index)]

    def rows(start: int, stop: int) -> Iterator[tuple]:
        batch_row = list(template)
        for n, column in enumerate(columns):
            if column.kind == BATCH:
                batch_row[n] = prep(column, start)
        prefix = ulid_new()[:16]
        for i in range(start, stop):
            row = list(batch_row)
            for n, column in row_columns:
                row[n] = prep(column, i)
            if ulid_pk:
                row[pk_index] = fast_ulid(prefix, i)
            yield tuple(row)

    # A manager with its own bulk_create (the ledger's chains every event) gets instances instead.
    chained = type(model._default_manager).bulk_create is not models.Manager.bulk_create

    def instances(start: int, stop: int) -> list[Any]:
        values = {c.field.attname: c.make(start) for c in columns if c.kind != ROW}
        return [model(**values, **{c.field.attname: c.make(i) for c in columns if c.kind == ROW})
                for i in range(start, stop)]

    progress = Progress(f"seed {table}", total)
    started = time.monotonic()
    done = 0
    for start in range(0, total, batch_size):
        stop = min(start + batch_size, total)
        with transaction.atomic(), connection.cursor() as cursor:
            if chained:
                model._default_manager.bulk_create(instances(start, stop))
            elif connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {qn(table)} ({column_sql}) FROM STDIN") as copy:
                    for row in rows(start, stop):
                        copy.write_row(row)
            else:
                placeholders = ", ".join(["%s"] * len(fields))
                cursor.executemany(f"INSERT INTO {qn(table)} ({column_sql}) VALUES ({placeholders})",
                                   rows(start, stop))
        done = stop
        progress.update(done)
    seconds = time.monotonic() - started
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Fresh planner statistics, as autovacuum would provide shortly after a real bulk load.
            cursor.execute(f"ANALYZE {qn(table)}")
        else:
            # Copy the load's write-ahead log into the database now, as the server's checkpointer
            # would shortly after: otherwise the first requests measured share the disk with it.
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return SeedResult(table=table, rows=done, seconds=seconds)


def nth_child_id(*, model: Any, parent_model: Any, parent_id: str, fraction: float) -> Any:
    """The pk of the child row `fraction` of the way through the parent's rows in pk order."""
    _, parent_fk = _column_plan(model, parent_model, {})
    queryset = model._default_manager.filter(**{parent_fk.attname: parent_id}).order_by("pk")
    count = queryset.count()
    if not count:
        return None
    return queryset.values_list("pk", flat=True)[min(int(count * fraction), count - 1)]


__all__ = ["Progress", "SeedResult", "SeedSkipped", "bulk_seed", "model_get", "nth_child_id"]
