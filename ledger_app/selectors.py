"""Read queries for the ledger app (the statistics live in `ledger_app.stats`)."""

from collections.abc import Collection
from decimal import Decimal
from typing import Any

from django.db.models import Count, DateField, Func, QuerySet, Sum

from ledger_app.chain import GENESIS_HASH, chain_head
from ledger_app.models import (
    Baseline,
    Checkpoint,
    CheckpointRestore,
    DeadLetter,
    ErrorLog,
    GateResult,
    Issue,
    LedgerEvent,
    ModelPrice,
    Rollback,
    TokenUsage,
    UsageDay,
)
from ralphsite.core.access import current_scope
from ralphsite.core.money import UsdUnits, units_to_usd, usd_shown
from ralphsite.core.usage_book import BookedUsage


def event_list() -> QuerySet[LedgerEvent]:
    return LedgerEvent.objects.all()


def event_head() -> tuple[int | None, str]:
    """The chain head (newest event's id and hash; None and the genesis hash before the first) as the
    caller's scope sees it: a session or project token gets the newest event of its own sessions, so
    it learns nothing of the others (still an anchor: `ledger_verify --anchor` proves nothing before
    any event it names changed)."""
    scope = current_scope()
    if scope.is_global:
        return chain_head()
    newest = scope.filter(LedgerEvent.objects.all()).order_by("-id").values_list("id", "hash").first()
    return newest if newest is not None else (None, GENESIS_HASH)


def issue_list() -> QuerySet[Issue]:
    return Issue.objects.all()


def checkpoint_list() -> QuerySet[Checkpoint]:
    return Checkpoint.objects.all()


def checkpoint_restore_list() -> QuerySet[CheckpointRestore]:
    return CheckpointRestore.objects.select_related("checkpoint")


def rollback_list() -> QuerySet[Rollback]:
    return Rollback.objects.all()


def baseline_list() -> QuerySet[Baseline]:
    return Baseline.objects.all()


def gate_result_list() -> QuerySet[GateResult]:
    return GateResult.objects.all()


def token_usage_list() -> QuerySet[TokenUsage]:
    return TokenUsage.objects.all()


def model_price_list() -> QuerySet[ModelPrice]:
    return ModelPrice.objects.all()


def error_list() -> QuerySet[ErrorLog]:
    return ErrorLog.objects.all()


def dead_letter_list() -> QuerySet[DeadLetter]:
    return DeadLetter.objects.all()


# -- token usage totals (the admin's "cost by model and day") ----------------------------------

_USAGE_TOTALS = {"calls": Count("id"), "input_tokens": Sum("input_tokens"), "output_tokens": Sum("output_tokens"),
                 "cost_usd": UsdUnits(Sum("cost_usd"))}  # whole 1e-10 USD, exact past 64 bits on SQLite


def usage_by_source(source: str, source_ids: Collection[str]) -> dict[str, BookedUsage]:
    """The calls booked against each record of `source` (a run's: its Claude Code calls), summed: one query
    on the (source, source_id) index."""
    rows = (TokenUsage.objects.filter(source=source, source_id__in=list(source_ids)).order_by()
            .values("source_id").annotate(**_USAGE_TOTALS))
    return {row["source_id"]: BookedUsage(calls=row["calls"], input_tokens=row["input_tokens"],
                                          output_tokens=row["output_tokens"], cost_usd=usd(row["cost_usd"]))
            for row in rows}



def usd(units: int | None) -> Decimal:
    """A money sum in whole 1e-10 USD (`UsdUnits`: exact on both backends) as the columns hand amounts back; 0
    for no rows."""
    return usd_shown(units_to_usd(units or 0))


def _with_usd(rows: QuerySet) -> list[dict[str, Any]]:
    return [{**row, "cost_usd": usd(row["cost_usd"])} for row in rows]


class UTCDate(Func):
    """The UTC day of a datetime column in plain SQL: Django's TruncDate calls a Python function for
    each row on SQLite (430 ms for one session's 20,000 calls, against 80 ms so)."""

    output_field = DateField()
    arity = 1

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        # SQLite holds datetimes as UTC text (USE_TZ), so its date() is the UTC day.
        return self.as_sql(compiler, connection, template="date(%(expressions)s)", **extra)

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, list[Any]]:
        return self.as_sql(compiler, connection, template="(%(expressions)s AT TIME ZONE 'UTC')::date", **extra)


# The same totals from the usage rollup, whose rows each count `calls` calls.
_USAGE_DAY_TOTALS = {**_USAGE_TOTALS, "calls": Sum("calls")}


def _totals(usage: QuerySet[TokenUsage] | QuerySet[UsageDay]) -> dict[str, Any]:
    return _USAGE_DAY_TOTALS if usage.model is UsageDay else _USAGE_TOTALS


def usage_day_list() -> QuerySet[UsageDay]:
    """The usage rollup: per session, UTC day, model and agent (`ledger_app.usage_days`)."""
    return UsageDay.objects.all()


def token_usage_by(*, usage: QuerySet[TokenUsage] | QuerySet[UsageDay], field: str) -> list[dict[str, Any]]:
    """Calls, tokens and cost per value of `field` (model, agent) of the selected rows (usage rows or
    the usage rollup), most expensive first."""
    return _with_usd(usage.order_by().values(field).annotate(**_totals(usage)).order_by("-cost_usd", field))


def token_usage_by_day(*, usage: QuerySet[TokenUsage] | QuerySet[UsageDay], days: int) -> list[dict[str, Any]]:
    """The same totals per UTC day of the selected rows, the latest `days` days first."""
    if usage.model is not UsageDay:
        usage = usage.annotate(day=UTCDate("recorded_at"))
    return _with_usd(usage.order_by().values("day").annotate(**_totals(usage)).order_by("-day")[:days])
