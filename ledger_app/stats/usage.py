"""Usage figures for the statistics, from the usage rollup (`UsageDay`: per session, UTC day, model
and agent), never from every call: whole UTC days come from the rollup; only the part-days that a
`since` or `until` other than a UTC midnight cuts are summed from their calls. So a statistic costs
the same at 200,000 calls as at 200, under any token scope (the rollup has the session, so
`scoped` narrows it as it narrows the calls), and gives the same figures as the calls would.

Money is summed in whole 1e-10 USD (exact on both backends) and rounded once per group, half
away from zero, as `framework.usd_units` does in SQL."""

import operator
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from functools import reduce
from typing import Any

from django.db import connection
from django.db.models import Count, Max, Min, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from ledger_app.models import TokenUsage, UsageDay
from ledger_app.selectors import UTCDate
from ledger_app.stats.framework import Row, StatFilters, scoped, usd_units_sum
from ralphsite.core.money import USD_PLACES

FIGURES = ("calls", "input_tokens", "output_tokens", "usd_units")


@dataclass(frozen=True)
class _Split:
    """Which part of [since, until) the rollup answers (whole days) and which the calls (part-days)."""

    first_day: Any = None  # the first whole day, or None: from the beginning
    end_day: Any = None    # the day after the last whole day, or None: to the end
    part_days: Q | None = None  # the calls' condition for the part-days, or None: there are none


def _midnight(moment: datetime) -> datetime:
    return datetime.combine(moment.astimezone(UTC).date(), time.min, tzinfo=UTC)


def _split(since: datetime | None, until: datetime | None) -> _Split:
    whole_from = whole_to = None
    if since is not None:
        whole_from = _midnight(since) if since == _midnight(since) else _midnight(since) + timedelta(days=1)
    if until is not None:
        whole_to = _midnight(until)
    if whole_from is not None and whole_to is not None and whole_from >= whole_to:  # no whole day
        return _Split(first_day=whole_from.date(), end_day=whole_from.date(),
                      part_days=Q(recorded_at__gte=since, recorded_at__lt=until))
    parts = []
    if since is not None and since < whole_from:
        parts.append(Q(recorded_at__gte=since, recorded_at__lt=whole_from))
    if until is not None and whole_to < until:
        parts.append(Q(recorded_at__gte=whole_to, recorded_at__lt=until))
    return _Split(first_day=whole_from and whole_from.date(), end_day=whole_to and whole_to.date(),
                  part_days=reduce(operator.or_, parts) if parts else None)


def _session_filter(filters: StatFilters) -> StatFilters:
    return StatFilters(session_id=filters.session_id)


def first_and_last_call(filters: StatFilters) -> dict[str, tuple[Any, Any]]:
    """`usage_by` extras giving a session group's first and last call in the filters' range: over the
    rollup, each an index seek on the calls (session, recorded_at) per rollup row, not an aggregate
    over the calls; over the part-days' calls, their Min and Max."""
    in_range = scoped(TokenUsage.objects.all(), filters, date_field="recorded_at")

    def seek(order: str) -> Coalesce:
        # session_id = NULL is never true: the group of no session (deleted ones) seeks IS NULL.
        return Coalesce(*(Subquery(rows.order_by(order).values("recorded_at")[:1]) for rows in (
            in_range.filter(session_id=OuterRef("session_id")), in_range.filter(session__isnull=True))))

    return {"first_call": (Min(seek("recorded_at")), Min("recorded_at")),
            "last_call": (Max(seek("-recorded_at")), Max("recorded_at"))}


def usage_by(filters: StatFilters, *, by: tuple[str, ...],
             extra: dict[str, tuple[Any, Any]] | None = None) -> list[Row]:
    """Per value of `by` (fields of both the rollup and the calls; `day` is the UTC day), the calls,
    input and output tokens and whole 1e-10 USD of the usage the filters select, ordered by `by` as the
    database orders (NULL first on SQLite, last on PostgreSQL). `extra` adds aggregates: name →
    (over the rollup, over the calls), merged as min for Min and max for Max."""
    extra = extra or {}
    split = _split(filters.since, filters.until)
    rollup = scoped(UsageDay.objects.all(), _session_filter(filters), date_field="day")
    if split.first_day is not None:
        rollup = rollup.filter(day__gte=split.first_day)
    if split.end_day is not None:
        rollup = rollup.filter(day__lt=split.end_day)
    groups = {tuple(row[k] for k in by): row for row in rollup.order_by().values(*by).annotate(
        calls=Sum("calls"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"),
        usd_units=usd_units_sum(), **{name: over_rollup for name, (over_rollup, _) in extra.items()})}
    if split.part_days is not None:
        calls = scoped(TokenUsage.objects.all(), _session_filter(filters), date_field="recorded_at")
        calls = calls.filter(split.part_days)
        if "day" in by:
            calls = calls.annotate(day=UTCDate("recorded_at"))
        for row in calls.order_by().values(*by).annotate(
                calls=Count("*"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"),
                usd_units=usd_units_sum(), **{name: over_calls for name, (_, over_calls) in extra.items()}):
            group = groups.setdefault(tuple(row[k] for k in by), dict.fromkeys((*FIGURES, *extra), None) | {
                k: row[k] for k in by})
            for name in FIGURES:
                group[name] = (group[name] or 0) + (row[name] or 0)
            for name, (aggregate, _) in extra.items():
                merge: Callable[..., Any] = min if isinstance(aggregate, Min) else max
                group[name] = merge((value for value in (group[name], row[name]) if value is not None), default=None)
    nulls_last = connection.features.nulls_order_largest
    return [groups[key] for key in sorted(groups, key=lambda key: tuple(
        ((value is None) == nulls_last, value if value is not None else "") for value in key))]


def sessionless_calls(filters: StatFilters) -> list[Row]:
    """The figures of the calls that have no session here, per `session_key` (the seed's id of a session an
    imported call names but its file did not hold; None for the calls of deleted sessions), as `usage_by`
    gives them with `first_and_last_call`: the rollup sums all of them under one key. Read from the calls
    (few: the index on session and recorded_at finds them), ordered by key with None where the database
    puts NULL."""
    calls = scoped(TokenUsage.objects.filter(session__isnull=True), filters, date_field="recorded_at")
    rows = list(calls.order_by().values("session_key").annotate(
        calls=Count("*"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"),
        usd_units=usd_units_sum(), first_call=Min("recorded_at"), last_call=Max("recorded_at")))
    nulls_last = connection.features.nulls_order_largest
    return sorted(rows, key=lambda row: ((row["session_key"] is None) == nulls_last, row["session_key"] or ""))


def units(usd_units: int | Decimal | None, *, places: int) -> int:
    """Whole 1e-10 USD (an int, or PostgreSQL's numeric) as whole 10^-places USD, half away from zero
    (`framework.usd_units` in Python)."""
    unit = 10 ** (USD_PLACES - places)
    total = int(usd_units or 0) + unit // 2
    return total // unit if total >= 0 else -(-total // unit)  # SQL's integer division truncates
