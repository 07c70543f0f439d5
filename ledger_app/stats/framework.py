"""The statistics framework: a registry of named views and the building blocks they share.

A view is one function decorated with `@stat(name, columns=...)`: it receives `StatFilters`,
narrows its queryset with `scoped(...)` and returns one dict per row; `Stat.rows` keeps exactly the
declared columns, in order. The views live in `ledger_views` and `session_views`.

Rounding, as the seed's SQL: rates are `ROUND(AVG(CASE WHEN c THEN 1.0 ELSE 0.0 END) * 100, 1)`
(half away from zero on both backends) returned as numbers; USD sums are `ROUND(SUM(cost_usd), 4)`
returned as decimal strings with 4 places. Where a seed view reports cents, `cents()` computes
`ROUND(SUM(cost_usd) * 100)`: the rows are summed first, then rounded once to whole cents, half
away from zero, as an integer. Money is summed exactly (whole 1e-10 USD on SQLite, numeric on
PostgreSQL) so that both backends round exactly the same way. A single stored USD amount becomes cents
with `ralphsite.core.money.usd_to_cents`, also half away from zero.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import (
    Avg,
    Case,
    CharField,
    Count,
    F,
    FloatField,
    IntegerField,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Round

from ralphsite.core.access import current_scope
from ralphsite.core.models import SeedRow
from ralphsite.core.money import UsdRounded, UsdUnits
from ralphsite.core.shapes import QUARANTINE

Row = dict[str, Any]


@dataclass(frozen=True)
class StatFilters:
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class Figures:
    """Rows of named columns, computed under the filters, described in prose."""

    columns: tuple[str, ...]
    description: str
    compute: Callable[[StatFilters], list[Row]]

    def rows(self, filters: StatFilters) -> list[Row]:
        return [{column: row[column] for column in self.columns} for row in self.compute(filters)]


@dataclass(frozen=True)
class AllSources(Figures):
    """Ralph Site's own figures beside a seed view's: over every path that reports a provider call (token
    usage, events, attempts, agent invocations, Claude Code's hooks), where the seed's SQL reads one table.
    Answered apart from the seed's columns (`all_sources`), never mixed into them."""


@dataclass(frozen=True)
class Stat(Figures):
    name: str
    all_sources: AllSources | None = None


STATS: dict[str, Stat] = {}


def _prose(function: Callable) -> str:
    return " ".join((function.__doc__ or "").split())  # the docstring as one line of prose


def stat(name: str, *, columns: tuple[str, ...]) -> Callable[[Callable[[StatFilters], list[Row]]], Callable]:
    def register(compute: Callable[[StatFilters], list[Row]]) -> Callable[[StatFilters], list[Row]]:
        STATS[name] = Stat(name=name, columns=columns, description=_prose(compute), compute=compute)
        return compute
    return register


def all_sources_of(name: str, *, columns: tuple[str, ...]) -> Callable[[Callable[[StatFilters], list[Row]]], Callable]:
    """Register a statistic's `AllSources` figures (after the statistic itself)."""
    def register(compute: Callable[[StatFilters], list[Row]]) -> Callable[[StatFilters], list[Row]]:
        STATS[name] = replace(STATS[name], all_sources=AllSources(columns=columns, description=_prose(compute),
                                                                  compute=compute))
        return compute
    return register


# -- building blocks shared by the views -----------------------------------------------------

SessionFilter = str | Callable[[str], Q]


def scoped(queryset: QuerySet, filters: StatFilters, *, date_field: str,
           session_field: SessionFilter = "session_id") -> QuerySet:
    """Narrow to the request's scope (every statistic reads its rows through here, so a token's
    statistics aggregate its sessions only), the filters' session (`session_field` names the column
    holding the session id, or builds the condition from it for rows tied to a session indirectly)
    and date range."""
    queryset = current_scope().filter(queryset)
    if filters.session_id:
        in_session = (session_field(filters.session_id) if callable(session_field)
                      else Q(**{session_field: filters.session_id}))
        queryset = queryset.filter(in_session)
    if filters.since:
        queryset = queryset.filter(**{f"{date_field}__gte": filters.since})
    if filters.until:
        queryset = queryset.filter(**{f"{date_field}__lt": filters.until})
    return queryset


def related_count(rows: QuerySet, *, field: str = "session_id", outer: str = "pk") -> Coalesce:
    """`(SELECT COUNT(*) FROM rows WHERE rows.field = outer.outer)` as a correlated subquery, so
    counting two relations of one row multiplies nothing and costs no query per row."""
    counts = rows.filter(**{field: OuterRef(outer)}).order_by().values(field).annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))


def seed_id(model: type[Model], outer: str = "pk") -> Coalesce:
    """The id of the `model` row `outer` names as the seed's views answer it: the id a seed tool's file gave the
    row (`SeedRow.source_key` of its first import), else ours; null for no row. A correlated subquery on
    SeedRow's (object_model, object_id) index, so it costs no query of its own."""
    imported = (SeedRow.objects.filter(object_model=model._meta.label_lower, object_id=OuterRef(outer))
                .exclude(kind=QUARANTINE).order_by("pk").values("source_key")[:1])
    return Coalesce(Subquery(imported), F(outer), output_field=CharField())


def count_if(condition: Q) -> Sum:
    """SUM(CASE WHEN condition THEN 1 ELSE 0 END)."""
    return Sum(Case(When(condition, then=Value(1)), default=Value(0), output_field=IntegerField()))


def rate(condition: Q) -> Round:
    """ROUND(AVG(CASE WHEN condition THEN 1.0 ELSE 0.0 END) * 100, 1)."""
    share = Avg(Case(When(condition, then=Value(1.0)), default=Value(0.0), output_field=FloatField()))
    return Round(share * Value(100.0), 1, output_field=FloatField())


def usd_units_sum(field: str = "cost_usd") -> UsdUnits:
    """SUM of the rows' USD in whole 1e-10 USD, exact on both backends, so both round a sum the same
    way (`ralphsite.core.money.UsdUnits`)."""
    return UsdUnits(Sum(field))


def usd_units(field: str = "cost_usd", *, places: int) -> UsdRounded:
    """ROUND(SUM(field), places) as an integer number of 10^-places USD, half away from zero (costs
    are never negative; `ralphsite.core.money.UsdRounded`)."""
    return UsdRounded(Sum(field), places=places)


def cents(field: str = "cost_usd") -> UsdRounded:
    """Seed 003's `cost_cents` columns from USD: ROUND(SUM(cost_usd) * 100) as whole cents."""
    return usd_units(field, places=2)


def as_money(units: int | None, places: int = 4) -> str | None:
    """`usd_units(places=…)` as a decimal string with that many places."""
    return None if units is None else format(Decimal(units).scaleb(-places), "f")


def as_rate(value: Decimal | float | None) -> float | None:
    return None if value is None else float(value)


