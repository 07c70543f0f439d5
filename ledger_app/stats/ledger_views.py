"""Seed 003's views over the ledger's tables (gate results, token usage, error log) and the
current session."""

from typing import Any

from django.db import connection
from django.db.models import Count, Max, Min, Q, QuerySet, Sum

from ledger_app.models import ErrorLog, GateResult, TokenUsage, UsageSource
from ledger_app.selectors import UTCDate
from ledger_app.stats.framework import (
    Row,
    StatFilters,
    all_sources_of,
    as_money,
    as_rate,
    count_if,
    rate,
    scoped,
    seed_id,
    stat,
    usd_units_sum,
)
from ledger_app.stats.usage import first_and_last_call, sessionless_calls, units, usage_by
from ralphsite.core.money import usd_to_cents
from sessions_app.models import Session, SessionStatus

# Seed 003's `sessions` columns, in its order (SELECT * FROM sessions), and the field of ours each
# one is read from where the name differs; total_cost_cents is computed from total_cost_usd.
_SESSION_COLUMNS = (
    "id", "started_at", "ended_at", "command", "command_type", "status", "exit_reason", "current_phase",
    "current_task_id", "current_agent", "current_model", "current_iteration", "max_iterations",
    "consecutive_failures", "max_consecutive_failures", "circuit_breaker_state", "plan_id", "sprint_id",
    "execution_mode", "total_tokens_input", "total_tokens_output", "total_cost_cents", "bug_council_activated",
    "bug_council_reason",
)
_SESSION_FIELDS = {"current_task_id": "current_task_key", "plan_id": "plan_key", "sprint_id": "sprint_key",
                   "total_cost_cents": "total_cost_usd"}


@stat("current-session", columns=_SESSION_COLUMNS)
def current_session(filters: StatFilters) -> list[Row]:
    """v_current_session: the running session started last, with seed 003's sessions columns
    (id is the seed's id of an imported session, else ours; current_task_id, plan_id and sprint_id hold
    our keys; total_cost_cents is the session's USD total in whole cents, half away from zero)."""
    sessions = scoped(Session.objects.filter(status=SessionStatus.RUNNING), filters, date_field="started_at",
                      session_field="pk")
    session = sessions.annotate(seed_id=seed_id(Session)).order_by("-started_at").first()
    if session is None:
        return []
    row = {column: getattr(session, _SESSION_FIELDS.get(column, column)) for column in _SESSION_COLUMNS}
    return [{**row, "id": session.seed_id, "total_cost_cents": usd_to_cents(session.total_cost_usd)}]


@stat("gate-pass-rates", columns=("gate", "total_runs", "passes", "pass_rate"))
def gate_pass_rates(filters: StatFilters) -> list[Row]:
    """v_gate_pass_rates: runs, passes and pass rate (%) per quality gate."""
    rows = (scoped(GateResult.objects.all(), filters, date_field="timestamp")
            .values("gate").order_by("gate")
            .annotate(total_runs=Count("*"), passes=count_if(Q(passed=True)), pass_rate=rate(Q(passed=True))))
    return [{**row, "pass_rate": as_rate(row["pass_rate"])} for row in rows]


_SESSION_COST = ("session_id", "api_calls", "total_input_tokens", "total_output_tokens", "total_tokens",
                 "total_cost_usd", "first_call", "last_call")
_DAILY_COST = ("date", "api_calls", "total_tokens", "total_cost_usd")


def _seed_calls(filters: StatFilters) -> QuerySet:
    """The calls DevTeam's `token_usage` table holds: those booked as token usage (`token-usage`, its list form,
    MCP's add_token_usage, a DevTeam import; a call another path reported first is one of them once token usage
    reports it too), in the filters' range. The calls only other paths report (events, attempts, agent
    invocations, Claude Code's hooks) are Ralph Site's own, in `all_sources`."""
    return scoped(TokenUsage.objects.filter(source=UsageSource.TOKEN_USAGE), filters, date_field="recorded_at")


def _call_figures(calls: QuerySet, *by: str, **by_expression: Any) -> QuerySet:
    return calls.order_by().values(*by, **by_expression).annotate(
        calls=Count("*"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"),
        usd_units=usd_units_sum(), first_call=Min("recorded_at"), last_call=Max("recorded_at"))


def _null_placed(value: Any) -> tuple[bool, Any]:
    """A sort key putting None where the database puts NULL (first on SQLite, last on PostgreSQL)."""
    return (value is None) == connection.features.nulls_order_largest, "" if value is None else value


def _session_cost_row(row: Row) -> Row:
    return {"session_id": row["session_id"], "api_calls": row["calls"], "total_input_tokens": row["input_tokens"],
            "total_output_tokens": row["output_tokens"], "total_tokens": row["input_tokens"] + row["output_tokens"],
            "total_cost_usd": as_money(units(row["usd_units"], places=4)), "first_call": row["first_call"],
            "last_call": row["last_call"]}


@stat("session-cost", columns=_SESSION_COST)
def session_cost(filters: StatFilters) -> list[Row]:
    """v_session_cost: the calls of DevTeam's token_usage (those booked as token usage) and their cost (USD, 4
    places) per session (the seed's id of an imported session, else ours), exactly as its SQL answers;
    `all_sources` gives every path's calls apart. A call without
    a session here is grouped as the seed groups it: an imported call naming a session its file did not hold under
    that session's id (the seed's), the calls of deleted sessions under null."""
    rows = [{**row, "session_id": row["seed_session_id"] or row["session_key"]}
            for row in _call_figures(_seed_calls(filters), "session_id", "session_key",
                                     seed_session_id=seed_id(Session, "session_id"))]
    return [_session_cost_row(row) for row in sorted(rows, key=lambda row: _null_placed(row["session_id"]))]


@all_sources_of("session-cost", columns=_SESSION_COST)
def session_cost_all_sources(filters: StatFilters) -> list[Row]:
    """Per session, every provider call whichever path reported it (token usage, events, attempts, agent
    invocations, Claude Code's hooks): the sessions' totals, the dashboard's and the console's figures."""
    sessionless = [{**row, "session_id": row["session_key"]} for row in sessionless_calls(filters)]
    rows: list[Row] = []
    for row in usage_by(filters, by=("session_id",), extra=first_and_last_call(filters)):
        rows += sessionless if row["session_id"] is None else [row]
    return [_session_cost_row(row) for row in rows]


def _daily_cost_row(row: Row) -> Row:
    return {"date": row["day"], "api_calls": row["calls"], "total_tokens": row["input_tokens"] + row["output_tokens"],
            "total_cost_usd": as_money(units(row["usd_units"], places=4))}


@stat("daily-cost", columns=_DAILY_COST)
def daily_cost(filters: StatFilters) -> list[Row]:
    """v_daily_cost: the calls of DevTeam's token_usage (those booked as token usage) and their cost (USD, 4
    places) per UTC day, exactly as its SQL answers; `all_sources` gives every path's calls apart."""
    rows = _call_figures(_seed_calls(filters), day=UTCDate("recorded_at"))
    return [_daily_cost_row(row) for row in sorted(rows, key=lambda row: row["day"])]


@all_sources_of("daily-cost", columns=_DAILY_COST)
def daily_cost_all_sources(filters: StatFilters) -> list[Row]:
    """Per UTC day, every provider call whichever path reported it (token usage, events, attempts, agent
    invocations, Claude Code's hooks): the cost view's and the dashboard's figures."""
    return [_daily_cost_row(row) for row in usage_by(filters, by=("day",))]


@stat("error-summary", columns=("error_type", "occurrences", "recovered", "circuits_opened"))
def error_summary(filters: StatFilters) -> list[Row]:
    """v_error_summary: occurrences, recoveries and opened circuits per error type."""
    return list(scoped(ErrorLog.objects.all(), filters, date_field="logged_at")
                .values("error_type").order_by("error_type")
                .annotate(occurrences=Count("*"), recovered=count_if(Q(recovery_success=True)),
                          circuits_opened=count_if(Q(circuit_opened=True))))
