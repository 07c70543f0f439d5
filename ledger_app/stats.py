"""Seed 003's views as ORM queries (same columns, same rounding), one function each.

Adding a view is one function decorated with `@stat(name, columns=...)`: it receives `StatFilters`,
narrows its queryset with `scoped(...)` and returns one dict per row. `GET /api/v1/stats/<name>/`
serves every registered stat, filtered by `session`, `since` (inclusive) and `until` (exclusive).

Rounding, as the seed's SQL: rates are `ROUND(AVG(CASE WHEN c THEN 1.0 ELSE 0.0 END) * 100, 1)`
(half away from zero on both backends) returned as numbers; USD sums are `ROUND(SUM(cost_usd), 4)`
returned as decimal strings with 4 places. Where a seed view reports cents, `cents()` computes
`ROUND(SUM(cost_usd) * 100)`: the rows are summed first, then rounded once to whole cents, half
away from zero, as an integer. Money is summed in whole micro-dollars so that both backends round
exactly the same way (SQLite stores decimals as floats).
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.db.models import (
    Avg,
    BigIntegerField,
    Case,
    Count,
    DecimalField,
    ExpressionWrapper,
    F,
    FloatField,
    IntegerField,
    Max,
    Min,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Cast, Round, TruncDate

from ledger_app.models import ErrorLog, GateResult, TokenUsage
from sessions_app.models import Session, SessionStatus

Row = dict[str, Any]


@dataclass(frozen=True)
class StatFilters:
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class Stat:
    name: str
    columns: tuple[str, ...]
    description: str
    compute: Callable[[StatFilters], list[Row]]

    def rows(self, filters: StatFilters) -> list[Row]:
        return [{column: row[column] for column in self.columns} for row in self.compute(filters)]


STATS: dict[str, Stat] = {}


def stat(name: str, *, columns: tuple[str, ...]) -> Callable[[Callable[[StatFilters], list[Row]]], Callable]:
    def register(compute: Callable[[StatFilters], list[Row]]) -> Callable[[StatFilters], list[Row]]:
        STATS[name] = Stat(name=name, columns=columns, description=(compute.__doc__ or "").strip(), compute=compute)
        return compute
    return register


# -- building blocks shared by the views -----------------------------------------------------

def scoped(queryset: QuerySet, filters: StatFilters, *, date_field: str, session_field: str = "session_id") -> QuerySet:
    if filters.session_id:
        queryset = queryset.filter(**{session_field: filters.session_id})
    if filters.since:
        queryset = queryset.filter(**{f"{date_field}__gte": filters.since})
    if filters.until:
        queryset = queryset.filter(**{f"{date_field}__lt": filters.until})
    return queryset


def count_if(condition: Q) -> Sum:
    """SUM(CASE WHEN condition THEN 1 ELSE 0 END)."""
    return Sum(Case(When(condition, then=Value(1)), default=Value(0), output_field=IntegerField()))


def rate(condition: Q) -> Round:
    """ROUND(AVG(CASE WHEN condition THEN 1.0 ELSE 0.0 END) * 100, 1)."""
    share = Avg(Case(When(condition, then=Value(1.0)), default=Value(0.0), output_field=FloatField()))
    return Round(share * Value(100.0), 1, output_field=FloatField())


def micro_usd_sum(field: str = "cost_usd") -> Sum:
    """SUM of the rows' USD in whole micro-dollars (each row has 6 places, so this is exact).

    SQLite keeps decimals as floating point: summing floats and rounding the sum could round a
    half differently from PostgreSQL's numeric. Whole micro-dollars are integers on both.
    """
    micros = ExpressionWrapper(F(field) * Value(Decimal(1_000_000)), output_field=DecimalField())
    return Sum(Cast(Round(micros), BigIntegerField()))


def usd_units(field: str = "cost_usd", *, places: int) -> ExpressionWrapper:
    """ROUND(SUM(field), places) as an integer number of 10^-places USD, half away from zero (costs
    are never negative): (micro-dollars + half a unit) integer-divided by the unit."""
    unit = 10 ** (6 - places)
    return ExpressionWrapper((micro_usd_sum(field) + Value(unit // 2)) / Value(unit), output_field=BigIntegerField())


def cents(field: str = "cost_usd") -> ExpressionWrapper:
    """Seed 003's `cost_cents` columns from USD: ROUND(SUM(cost_usd) * 100) as whole cents."""
    return usd_units(field, places=2)


def as_money(units: int | None, places: int = 4) -> str | None:
    """`usd_units(places=…)` as a decimal string with that many places."""
    return None if units is None else format(Decimal(units).scaleb(-places), "f")


def as_rate(value: Decimal | float | None) -> float | None:
    return None if value is None else float(value)


# -- the views -------------------------------------------------------------------------------

_SESSION_COLUMNS = (
    "id", "command", "command_type", "status", "exit_reason", "started_at", "ended_at", "current_phase",
    "current_task_key", "current_agent", "current_model", "current_iteration", "max_iterations",
    "consecutive_failures", "max_consecutive_failures", "circuit_breaker_state", "plan_key", "sprint_key",
    "execution_mode", "total_tokens_input", "total_tokens_output", "total_cost_usd", "total_cost_cents",
    "bug_council_activated", "bug_council_reason",
)


@stat("current-session", columns=_SESSION_COLUMNS)
def current_session(filters: StatFilters) -> list[Row]:
    """v_current_session: the running session started last (seed 003's sessions columns)."""
    sessions = scoped(Session.objects.filter(status=SessionStatus.RUNNING), filters, date_field="started_at",
                      session_field="pk")
    session = sessions.order_by("-started_at").first()
    if session is None:
        return []
    row = {column: getattr(session, column) for column in _SESSION_COLUMNS}
    row["total_cost_usd"] = format(session.total_cost_usd, "f")
    return [row]


@stat("gate-pass-rates", columns=("gate", "total_runs", "passes", "pass_rate"))
def gate_pass_rates(filters: StatFilters) -> list[Row]:
    """v_gate_pass_rates: runs, passes and pass rate (%) per quality gate."""
    rows = (scoped(GateResult.objects.all(), filters, date_field="timestamp")
            .values("gate").order_by("gate")
            .annotate(total_runs=Count("*"), passes=count_if(Q(passed=True)), pass_rate=rate(Q(passed=True))))
    return [{**row, "pass_rate": as_rate(row["pass_rate"])} for row in rows]


@stat("session-cost", columns=("session_id", "api_calls", "total_input_tokens", "total_output_tokens",
                               "total_tokens", "total_cost_usd", "first_call", "last_call"))
def session_cost(filters: StatFilters) -> list[Row]:
    """v_session_cost: token usage and cost (USD, 4 places) per session."""
    rows = (scoped(TokenUsage.objects.all(), filters, date_field="recorded_at")
            .values("session_id").order_by("session_id")
            .annotate(api_calls=Count("*"), total_input_tokens=Sum("input_tokens"),
                      total_output_tokens=Sum("output_tokens"),
                      total_tokens=Sum(F("input_tokens") + F("output_tokens")), total_cost_usd=usd_units(places=4),
                      first_call=Min("recorded_at"), last_call=Max("recorded_at")))
    return [{**row, "total_cost_usd": as_money(row["total_cost_usd"])} for row in rows]


@stat("daily-cost", columns=("date", "api_calls", "total_tokens", "total_cost_usd"))
def daily_cost(filters: StatFilters) -> list[Row]:
    """v_daily_cost: token usage and cost (USD, 4 places) per UTC day."""
    rows = (scoped(TokenUsage.objects.all(), filters, date_field="recorded_at")
            .annotate(day=TruncDate("recorded_at", tzinfo=UTC)).values("day").order_by("day")
            .annotate(api_calls=Count("*"), total_tokens=Sum(F("input_tokens") + F("output_tokens")),
                      total_cost_usd=usd_units(places=4)))
    return [{**row, "date": row["day"], "total_cost_usd": as_money(row["total_cost_usd"])} for row in rows]


@stat("error-summary", columns=("error_type", "occurrences", "recovered", "circuits_opened"))
def error_summary(filters: StatFilters) -> list[Row]:
    """v_error_summary: occurrences, recoveries and opened circuits per error type."""
    return list(scoped(ErrorLog.objects.all(), filters, date_field="logged_at")
                .values("error_type").order_by("error_type")
                .annotate(occurrences=Count("*"), recovered=count_if(Q(recovery_success=True)),
                          circuits_opened=count_if(Q(circuit_opened=True))))
