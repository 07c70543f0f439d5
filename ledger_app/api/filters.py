import django_filters

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


def _range(field_name: str) -> tuple[django_filters.IsoDateTimeFilter, django_filters.IsoDateTimeFilter]:
    """`<field>_after` (inclusive) and `<field>_before` (exclusive) filters on one datetime field."""
    return (django_filters.IsoDateTimeFilter(field_name=field_name, lookup_expr="gte"),
            django_filters.IsoDateTimeFilter(field_name=field_name, lookup_expr="lt"))


class SessionScopedFilterSet(django_filters.FilterSet):
    # By id, without the ModelChoiceFilter's lookup query of the session.
    session = django_filters.CharFilter(field_name="session_id")


class LedgerEventFilterSet(SessionScopedFilterSet):
    after = django_filters.NumberFilter(field_name="id", lookup_expr="gt",
                                        help_text="Only events with a greater id (tailing).")
    task = django_filters.CharFilter(field_name="task_key")
    since, until = _range("timestamp")

    class Meta:
        model = LedgerEvent
        fields = ["session", "type", "category", "task_key", "agent", "model", "phase"]


class IssueFilterSet(SessionScopedFilterSet):
    class Meta:
        model = Issue
        fields = ["session", "task_key", "kind", "signature"]


class CheckpointFilterSet(SessionScopedFilterSet):
    class Meta:
        model = Checkpoint
        fields = ["key", "session", "task_key", "sprint_key"]


class CheckpointRestoreFilterSet(django_filters.FilterSet):
    checkpoint = django_filters.CharFilter(field_name="checkpoint_id")

    class Meta:
        model = CheckpointRestore
        fields = ["checkpoint"]


class RollbackFilterSet(SessionScopedFilterSet):
    rollback_type = django_filters.MultipleChoiceFilter(choices=RollbackType.choices)
    rolled_back_after, rolled_back_before = _range("rolled_back_at")

    class Meta:
        model = Rollback
        fields = ["session", "rollback_type"]


class BaselineFilterSet(django_filters.FilterSet):
    class Meta:
        model = Baseline
        fields = ["tag_name", "milestone", "branch"]


class GateResultFilterSet(SessionScopedFilterSet):
    gate = django_filters.MultipleChoiceFilter(choices=Gate.choices)
    since, until = _range("timestamp")

    class Meta:
        model = GateResult
        fields = ["session", "gate"]


class TokenUsageFilterSet(SessionScopedFilterSet):
    since, until = _range("recorded_at")

    class Meta:
        model = TokenUsage
        fields = ["session", "model", "task_key", "sprint_key", "agent", "operation"]


class ModelPriceFilterSet(django_filters.FilterSet):
    class Meta:
        model = ModelPrice
        fields = ["model"]


class ErrorLogFilterSet(SessionScopedFilterSet):
    error_type = django_filters.MultipleChoiceFilter(choices=ErrorType.choices)
    since, until = _range("logged_at")

    class Meta:
        model = ErrorLog
        fields = ["session", "error_type", "task_key"]


class DeadLetterFilterSet(SessionScopedFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=DeadLetterStatus.choices)

    class Meta:
        model = DeadLetter
        fields = ["session", "status", "operation_type"]
