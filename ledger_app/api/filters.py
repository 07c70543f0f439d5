from typing import Any, ClassVar

import django_filters
from django import forms
from django.core.exceptions import ValidationError

from ledger_app.models import (
    Baseline,
    Checkpoint,
    CheckpointRestore,
    DeadLetter,
    DeadLetterStatus,
    ErrorLog,
    ErrorType,
    Gate,
    GateResult,
    Issue,
    LedgerEvent,
    ModelPrice,
    Rollback,
    RollbackType,
    TokenUsage,
)
from ralphsite.core.api.filters import IntegerFilter, MultipleChoiceFilter, RalphFilterSet
from ralphsite.core.ulid import ulid_normalize


class ULIDFormField(forms.CharField):
    """A ULID's syntax, checked without a query: a malformed id is a 400 naming the filter."""

    def clean(self, value: Any) -> str:
        value = super().clean(value)
        if value in self.empty_values:
            return value
        try:
            return ulid_normalize(value)
        except ValueError:
            raise ValidationError(f"{value!r} is not a valid ULID (26 Crockford base32 characters).",
                                  code="invalid_ulid") from None


class ULIDFilter(django_filters.CharFilter):
    """Filter on a foreign key's column by id. Unlike the ModelChoiceFilter a FilterSet builds for a
    foreign key, it runs no lookup query of the target row (the list query alone answers: an unknown
    id is an empty page), yet a value that is no ULID is refused with a 400 instead of an empty list."""

    field_class = ULIDFormField


def _range(field_name: str) -> tuple[django_filters.IsoDateTimeFilter, django_filters.IsoDateTimeFilter]:
    """`<field>_after` (inclusive) and `<field>_before` (exclusive) filters on one datetime field."""
    return (django_filters.IsoDateTimeFilter(field_name=field_name, lookup_expr="gte"),
            django_filters.IsoDateTimeFilter(field_name=field_name, lookup_expr="lt"))


class SessionScopedFilterSet(RalphFilterSet):
    session = ULIDFilter(field_name="session_id")


class LedgerEventFilterSet(SessionScopedFilterSet):
    seed_names: ClassVar = {"run_id": "session"}  # ralphy names the session its run
    after = IntegerFilter(field_name="id", lookup_expr="gt", min_value=0,
                          help_text="Only events with a greater id (tailing).")
    task = django_filters.CharFilter(field_name="task_key")
    since, until = _range("timestamp")

    class Meta:
        model = LedgerEvent
        fields = ["session", "type", "category", "task_key", "agent", "model", "phase"]


class IssueFilterSet(SessionScopedFilterSet):
    seed_names: ClassVar = {"run_id": "session"}
    class Meta:
        model = Issue
        fields = ["session", "task_key", "kind", "signature"]


class CheckpointFilterSet(SessionScopedFilterSet):
    class Meta:
        model = Checkpoint
        fields = ["key", "session", "task_key", "sprint_key"]


class CheckpointRestoreFilterSet(RalphFilterSet):
    checkpoint = ULIDFilter(field_name="checkpoint_id")

    class Meta:
        model = CheckpointRestore
        fields = ["checkpoint"]


class RollbackFilterSet(SessionScopedFilterSet):
    rollback_type = MultipleChoiceFilter(choices=RollbackType.choices)
    rolled_back_after, rolled_back_before = _range("rolled_back_at")

    class Meta:
        model = Rollback
        fields = ["session", "rollback_type"]


class BaselineFilterSet(RalphFilterSet):
    class Meta:
        model = Baseline
        fields = ["tag_name", "milestone", "branch"]


class GateResultFilterSet(SessionScopedFilterSet):
    gate = MultipleChoiceFilter(choices=Gate.choices)
    since, until = _range("timestamp")

    class Meta:
        model = GateResult
        fields = ["session", "gate", "passed"]


class TokenUsageFilterSet(SessionScopedFilterSet):
    since, until = _range("recorded_at")

    class Meta:
        model = TokenUsage
        fields = ["session", "model", "task_key", "sprint_key", "agent", "operation", "iteration"]


class ModelPriceFilterSet(RalphFilterSet):
    class Meta:
        model = ModelPrice
        fields = ["model"]


class ErrorLogFilterSet(SessionScopedFilterSet):
    error_type = MultipleChoiceFilter(choices=ErrorType.choices)
    since, until = _range("logged_at")

    class Meta:
        model = ErrorLog
        fields = ["session", "error_type", "task_key"]


class DeadLetterFilterSet(SessionScopedFilterSet):
    status = MultipleChoiceFilter(choices=DeadLetterStatus.choices)

    class Meta:
        model = DeadLetter
        fields = ["session", "status", "operation_type"]
