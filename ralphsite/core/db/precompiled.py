"""Queries compiled to SQL once and run many times.

Compiling a query (the ORM building SQL from a QuerySet) cost more than running it on the hot
paths (get by id: ~1 ms of compile for a ~0.05 ms SQLite lookup on the benchmark machine).
`PrecompiledLookup` compiles `queryset.filter(<field>=?)` once and then only binds the value,
runs the SQL through Django's cursor (parameterised, query-logged) and builds instances the way
Django's ModelIterable does, with the same converters, select_related populators and prefetches.
`PrecompiledInsert` does the same for `save(force_insert=True)` / `bulk_create` of new rows.

Fast paths `lookups` and `inserts` (`ralphsite.core.db.fast_paths`): with them off, `precompiled_lookup`
answers None (the caller runs its queryset) and `instances_insert` goes to the ORM.
Measured gain (`make bench BENCH_ARGS=--fast-paths`: interleaved A/B with the piece off, SQLite,
2-vCPU AMD VM at load 9-12, 2026-11-25): `lookups` p50 off/on 0.97-1.47 on get chat and 0.81-1.81 on
insert message over four runs (median about 1.2: kept, at the edge of the noise); `inserts` 0.86-0.98
on insert chat, 0.56-1.11 on insert message and 0.83-1.58 on append event over two runs, within the
noise for single rows: kept for bulk appends, where a chain of 1,000 events is one `executemany`
instead of 23 multi-row INSERTs on SQLite (`tests/benchmarks/README.md`, the hash chain's A/B), which
this mode does not measure.
Private Django names it touches: `QuerySet._known_related_objects`, `_fields`, `_iterable_class`,
`_prefetch_related_lookups`, `_fetch_mode` (Django 6.1), `Query.get_compiler()` and the compiler's
`as_sql`, `klass_info`, `select`, `annotation_col_map`, `results_iter`; `query.get_related_populators`;
`Model._prepare_related_fields_for_save`, `Model._state`; `_meta.local_concrete_fields`, `auto_field`.
"""

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from django.core.exceptions import ValidationError
from django.db import connections, models, router
from django.db.models import NOT_PROVIDED, signals
from django.db.models.query import get_related_populators, prefetch_related_objects

from ralphsite.core.db.fast_paths import fast_paths_on

M = TypeVar("M", bound=models.Model)

_TEXT_PROBE = "\x00RALPH-PROBE\x00"  # upper case: ULID fields upper-case lookup values
_INT_PROBE = -735_194_628  # inside every integer range: out-of-range values compile to no SQL


class NotPrecompilable(Exception):
    """The queryset has a shape this module does not reproduce; use the ORM instead."""


class PrecompiledLookup(Generic[M]):
    """`queryset.get(<field_name>=value, <bound lookups>=values)`, compiled once.

    `bound_lookups` are further equality conditions whose values vary per call (e.g. the session a
    request's scope limits it to): parameters of the compiled SQL, never frozen into it. Their values
    are bound as given (already in database form).
    """

    def __init__(self, queryset: models.QuerySet[M], field_name: str = "pk", bound_lookups: Sequence[str] = ()) -> None:
        model = queryset.model
        self.field = model._meta.pk if field_name == "pk" else model._meta.get_field(field_name)
        if queryset._known_related_objects or queryset._fields is not None or queryset._iterable_class \
                is not models.query.ModelIterable:
            raise NotPrecompilable("only plain model querysets are precompiled")
        # Django 6.1 added fetch modes: pass the queryset's mode on where it exists (5.2 has none).
        fetch_mode = getattr(queryset, "_fetch_mode", None)
        if getattr(fetch_mode, "track_peers", False):
            raise NotPrecompilable("peer-tracking fetch modes are left to the ORM")
        self.fetch_mode_args = () if fetch_mode is None else (fetch_mode,)
        self.fetch_mode_kwargs = {} if fetch_mode is None else {"fetch_mode": fetch_mode}
        probe = _INT_PROBE if self.field.get_internal_type().endswith(("IntegerField", "AutoField")) \
            else _TEXT_PROBE
        bound_probes = [f"{_TEXT_PROBE}{index}" for index in range(len(bound_lookups))]
        filtered = queryset.filter(**{field_name: probe}).filter(**dict(zip(bound_lookups, bound_probes, strict=True)))
        self.db = filtered.db
        self.compiler = filtered.query.get_compiler(using=self.db)
        self.sql, params = self.compiler.as_sql()
        self.params = list(params)
        self.position = _single_position(self.params, probe)
        self.bound_positions = [_single_position(self.params, bound) for bound in bound_probes]
        klass_info = self.compiler.klass_info
        select = self.compiler.select
        self.model_cls = klass_info["model"]
        select_fields = klass_info["select_fields"]
        self.start, self.end = select_fields[0], select_fields[-1] + 1
        self.init_list = [column[0].target.attname for column in select[self.start:self.end]]
        self.related_populators = get_related_populators(klass_info, select, self.db, *self.fetch_mode_args)
        self.annotation_col_map = self.compiler.annotation_col_map
        self.prefetch_lookups = queryset._prefetch_related_lookups

    def get(self, value: Any, *bound_values: Any) -> M | None:
        """The one row whose field equals `value` (and bound lookups their values), or None (also for
        a value of the wrong type)."""
        connection = connections[self.db]
        try:
            prepared = self.field.get_db_prep_value(self.field.to_python(value), connection)
        except (ValidationError, ValueError, TypeError):
            return None
        params = list(self.params)
        params[self.position] = prepared
        for position, bound in zip(self.bound_positions, bound_values, strict=True):
            params[position] = bound
        with connection.cursor() as cursor:
            try:
                cursor.execute(self.sql, params)
            except OverflowError:  # SQLite cannot bind an integer past 64 bits: no such row
                return None
            rows = cursor.fetchmany(2)
        if not rows:
            return None
        instances = [self._instance(row) for row in self.compiler.results_iter([rows])]
        if self.prefetch_lookups:
            prefetch_related_objects(instances, *self.prefetch_lookups)
        return instances[0]

    def _instance(self, row: tuple) -> M:
        instance = self.model_cls.from_db(self.db, self.init_list, row[self.start:self.end],
                                          **self.fetch_mode_kwargs)
        for populator in self.related_populators:
            populator.populate(row, instance)
        for name, position in (self.annotation_col_map or {}).items():
            setattr(instance, name, row[position])
        return instance


def precompiled_lookup(queryset: models.QuerySet[M], field_name: str = "pk",
                       bound_lookups: Sequence[str] = ()) -> PrecompiledLookup[M] | None:
    """A `PrecompiledLookup`, or None (the caller runs the queryset) when the fast paths are off or
    the queryset has a shape it does not reproduce."""
    if not fast_paths_on("lookups"):
        return None
    try:
        return PrecompiledLookup(queryset, field_name, bound_lookups)
    except NotPrecompilable:
        return None


def _single_position(params: list[Any], probe: Any) -> int:
    positions = [i for i, value in enumerate(params) if value == probe]
    if len(positions) != 1:
        raise NotPrecompilable("a lookup value is not a single SQL parameter")
    return positions[0]


class PrecompiledInsert(Generic[M]):
    """`INSERT INTO <table> (<columns>) VALUES (%s, …)` for one model, built once from `_meta`.

    `insert(objs)` does what `bulk_create(objs)` / `obj.save(force_insert=True)` do for new rows:
    each field's `pre_save` (auto_now_add stamps the instance) and `get_db_prep_save`, then one
    `executemany`, and the instances are marked saved. A model whose key the database assigns (an
    auto id) gets one row at a time with `RETURNING` its id, as the ORM does; more rows at once go
    to `bulk_create`, whose multi-row INSERT is as fast. Rows whose auto ids the caller assigned
    (the ledger's chain does) go in with the id column, all in one `executemany`, nothing returned.
    Anything else this does not reproduce goes
    to the ORM: a database default or generated column, multi-table inheritance, its own `save()`
    (checked at construction), save signals and expression values (checked per call).
    """

    def __init__(self, model: type[M]) -> None:
        meta = model._meta
        if meta.parents or model.save is not models.Model.save:
            raise NotPrecompilable(f"{model.__name__}: a parent model or its own save()")
        self.auto_field = meta.auto_field
        self.fields = [field for field in meta.local_concrete_fields if field is not self.auto_field]
        if any(field.db_default is not NOT_PROVIDED or getattr(field, "generated", False)
               or hasattr(field, "get_placeholder") for field in meta.local_concrete_fields):
            raise NotPrecompilable(f"{model.__name__}: a column the database computes or a custom placeholder")
        self.model = model
        self._sql: dict[tuple[str, bool], str] = {}

    def _sql_for(self, connection: Any, *, explicit_keys: bool) -> str:
        sql = self._sql.get((connection.vendor, explicit_keys))
        if sql is None:
            quote = connection.ops.quote_name
            fields = [self.auto_field, *self.fields] if explicit_keys else self.fields
            columns = ", ".join(quote(field.column) for field in fields)
            placeholders = ", ".join(["%s"] * len(fields))
            # Table and column names come from the model's _meta; values are always parameters.
            sql = f"INSERT INTO {quote(self.model._meta.db_table)} ({columns}) VALUES ({placeholders})"
            if self.auto_field is not None and not explicit_keys:
                sql += f" RETURNING {quote(self.auto_field.column)}"
            self._sql[(connection.vendor, explicit_keys)] = sql
        return sql

    def insert(self, objs: Sequence[M]) -> None:
        using = router.db_for_write(self.model)
        connection = connections[using]
        explicit_keys = self.auto_field is not None and all(obj.pk is not None for obj in objs)
        if self.auto_field is not None and not explicit_keys and (
                len(objs) != 1 or objs[0].pk is not None or not connection.features.can_return_columns_from_insert):
            orm_insert(objs)
            return
        if signals.pre_save.has_listeners(self.model) or signals.post_save.has_listeners(self.model):
            orm_insert(objs)
            return
        rows = []
        for obj in objs:
            obj._prepare_related_fields_for_save(operation_name="save")
            values = [field.pre_save(obj, True) for field in self.fields]
            if any(hasattr(value, "resolve_expression") for value in values):
                orm_insert(objs)
                return
            row = [field.get_db_prep_save(value, connection) for field, value in zip(self.fields, values, strict=True)]
            rows.append([obj.pk, *row] if explicit_keys else row)
        with connection.cursor() as cursor:
            if self.auto_field is None or explicit_keys:
                cursor.executemany(self._sql_for(connection, explicit_keys=explicit_keys), rows)
            else:
                cursor.execute(self._sql_for(connection, explicit_keys=False), rows[0])
                objs[0].pk = cursor.fetchone()[0]
        for obj in objs:
            obj._state.adding = False
            obj._state.db = using


def orm_insert(objs: Sequence[M]) -> None:
    """New rows through the ORM: `bulk_create`, or `save()` each when someone listens for saves."""
    model = type(objs[0])
    if signals.pre_save.has_listeners(model) or signals.post_save.has_listeners(model):
        for obj in objs:
            obj.save(force_insert=True)
    else:
        # The queryset's bulk_create: a manager may route its own (the ledger's chains events) here.
        model._default_manager.get_queryset().bulk_create(objs)


_inserts: dict[type[models.Model], PrecompiledInsert | None] = {}


def instances_insert(objs: Sequence[M]) -> None:
    """Insert new instances of one model: precompiled where `PrecompiledInsert` allows, else the ORM."""
    if not objs:
        return
    model = type(objs[0])
    if model not in _inserts:
        try:
            _inserts[model] = PrecompiledInsert(model) if fast_paths_on("inserts") else None
        except NotPrecompilable:
            _inserts[model] = None
    insert = _inserts[model]
    if insert is None:
        orm_insert(objs)
    else:
        insert.insert(objs)
