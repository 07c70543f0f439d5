"""Read queries for the ledger app (the statistics live in `ledger_app.stats`)."""

from django.db.models import QuerySet

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
)


def event_list() -> QuerySet[LedgerEvent]:
    return LedgerEvent.objects.all()


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
