"""Queries compiled to SQL once and run many times.

Compiling a query (the ORM building SQL from a QuerySet) cost more than running it on the hot
paths (get by id: ~1 ms of compile for a ~0.05 ms SQLite lookup on the benchmark machine).
`PrecompiledLookup` holds both ways of one lookup: `CompiledLookup` compiles
`queryset.filter(<field>=?)` once and then only binds the value, runs the SQL through Django's cursor
(parameterised, query-logged) and builds instances the way Django's ModelIterable does, with the same
converters, select_related populators and prefetches; the ORM's `queryset.filter(...).get()` is the
reference, run when the fast path `lookups` (`ralphsite.core.db.fast_paths`, asked on every call) is off
or the queryset has a shape `CompiledLookup` does not reproduce.

Measured gain (`make bench BENCH_ARGS=--fast-paths`: interleaved A/B with `lookups` off, SQLite, 2-vCPU
Intel Xeon VM at load 0.8-2.4, 2026-11-28, 400 samples a side): p50 off/on 1.20 on get chat (2.34 → 2.80
ms) and 1.23 on insert message; at the 20 % threshold issue #25 sets, kept because get chat would be 20 %
slower without it (earlier runs, on loaded machines: 0.97-1.47 and 0.81-1.81; `tests/benchmarks/README.md`).
The precompiled INSERTs that lived here (`PrecompiledInsert`, fast path `inserts`) were deleted on
2026-11-28: 0.90-1.02 off/on on every insert, a 1,000-event bulk append included.
Private Django names it touches: `QuerySet._known_related_objects`, `_fields`, `_iterable_class`,
`_prefetch_related_lookups`, `_fetch_mode` (Django 6.1), `Query.get_compiler()` and the compiler's
`as_sql`, `klass_info`, `select`, `annotation_col_map`, `results_iter`; `query.get_related_populators`.
"""

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from django.core.exceptions import ValidationError
from django.db import connections, models
from django.db.models.query import get_related_populators, prefetch_related_objects

from ralphsite.core.db.fast_paths import fast_paths_on

M = TypeVar("M", bound=models.Model)

_TEXT_PROBE = "\x00RALPH-PROBE\x00"  # upper case: ULID fields upper-case lookup values
_INT_PROBE = -735_194_628  # inside every integer range: out-of-range values compile to no SQL


class NotPrecompilable(Exception):
    """The queryset has a shape this module does not reproduce; use the ORM instead."""


class CompiledLookup(Generic[M]):
    """`queryset.get(<field_name>=value, <bound lookups>=values)`, compiled once: the fast path.

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


class PrecompiledLookup(Generic[M]):
    """`queryset.filter(<field_name>=value).filter(<bound lookups>=values).get()`, or None when no row
    matches (or the value is malformed): by the `CompiledLookup` when the fast path `lookups` is on and
    the queryset's shape allows one, else by the ORM (`orm_get`, the reference it must agree with).

    Built once and kept by its caller; the switch is asked on every `get`. A queryset with
    `select_for_update` must be built inside a transaction (the compiler refuses it outside).
    """

    def __init__(self, queryset: models.QuerySet[M], field_name: str = "pk", bound_lookups: Sequence[str] = ()) -> None:
        self.queryset = queryset
        self.field_name = field_name
        self.bound_lookups = tuple(bound_lookups)
        self.compiled: CompiledLookup[M] | None
        try:
            self.compiled = CompiledLookup(queryset, field_name, bound_lookups)
        except NotPrecompilable:
            self.compiled = None

    def get(self, value: Any, *bound_values: Any) -> M | None:
        if self.compiled is not None and fast_paths_on("lookups"):
            return self.compiled.get(value, *bound_values)
        return self.orm_get(value, *bound_values)

    def orm_get(self, value: Any, *bound_values: Any) -> M | None:
        """The plain ORM's answer: the queryset filtered and `get()`."""
        model = self.queryset.model
        try:
            return (self.queryset.filter(**{self.field_name: value})
                    .filter(**dict(zip(self.bound_lookups, bound_values, strict=True))).get())
        except (model.DoesNotExist, ValidationError, ValueError, TypeError, OverflowError):
            return None


def _single_position(params: list[Any], probe: Any) -> int:
    positions = [i for i, value in enumerate(params) if value == probe]
    if len(positions) != 1:
        raise NotPrecompilable("a lookup value is not a single SQL parameter")
    return positions[0]
