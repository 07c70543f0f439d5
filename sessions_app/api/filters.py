import django_filters

from sessions_app.models import (
    AcceptanceCriterion,
    Bug,
    BugComplexity,
    BugStatus,
    CommandType,
    ContextBudget,
    ContextSnapshot,
    ContextStatus,
    CriterionCategory,
    Escalation,
    Feature,
    Interview,
    InterviewQuestion,
    InterviewStatus,
    InterviewType,
    LoopRun,
    LoopRunStatus,
    OrchestratorState,
    PhaseType,
    ProgressSummary,
    Session,
    SessionPhase,
    SessionStateEntry,
    SessionStatus,
    SnapshotType,
    Urgency,
)


class SessionFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=SessionStatus.choices)
    state = django_filters.MultipleChoiceFilter(choices=OrchestratorState.choices)
    command_type = django_filters.MultipleChoiceFilter(choices=CommandType.choices)
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    started_after = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="gte")
    started_before = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="lt")

    class Meta:
        model = Session
        fields = ["key", "status", "state", "project_path", "command_type"]


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------
# Each filter is backed by an index (the session FK's own, or one in the model's Meta).


class SessionStateEntryFilterSet(django_filters.FilterSet):
    class Meta:
        model = SessionStateEntry
        fields = ["session", "key"]


class SessionPhaseFilterSet(django_filters.FilterSet):
    phase_type = django_filters.MultipleChoiceFilter(choices=PhaseType.choices)

    class Meta:
        model = SessionPhase
        fields = ["session", "phase_type"]


class ProgressSummaryFilterSet(django_filters.FilterSet):
    class Meta:
        model = ProgressSummary
        fields = ["session"]


class BugFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=BugStatus.choices)
    severity = django_filters.MultipleChoiceFilter(choices=Urgency.choices)
    complexity = django_filters.MultipleChoiceFilter(choices=BugComplexity.choices)

    class Meta:
        model = Bug
        fields = ["session", "status", "severity", "complexity"]


class EscalationFilterSet(django_filters.FilterSet):
    class Meta:
        model = Escalation
        fields = ["session", "task_key", "agent", "to_model"]


class AcceptanceCriterionFilterSet(django_filters.FilterSet):
    category = django_filters.MultipleChoiceFilter(choices=CriterionCategory.choices)

    class Meta:
        model = AcceptanceCriterion
        fields = ["key", "plan_key", "task_key", "sprint_key", "passes", "category"]


class FeatureFilterSet(django_filters.FilterSet):
    class Meta:
        model = Feature
        fields = ["key", "plan_key", "sprint_key", "passes", "category"]


class ContextBudgetFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=ContextStatus.choices)

    class Meta:
        model = ContextBudget
        fields = ["session", "model", "status"]


class ContextSnapshotFilterSet(django_filters.FilterSet):
    snapshot_type = django_filters.MultipleChoiceFilter(choices=SnapshotType.choices)

    class Meta:
        model = ContextSnapshot
        fields = ["session", "snapshot_type"]


class InterviewFilterSet(django_filters.FilterSet):
    interview_type = django_filters.MultipleChoiceFilter(choices=InterviewType.choices)
    status = django_filters.MultipleChoiceFilter(choices=InterviewStatus.choices)

    class Meta:
        model = Interview
        fields = ["session", "interview_type", "status"]


class InterviewQuestionFilterSet(django_filters.FilterSet):
    session = django_filters.CharFilter(field_name="interview__session", help_text="The interview's session.")

    class Meta:
        model = InterviewQuestion
        fields = ["interview", "session", "question_key"]


class LoopRunFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=LoopRunStatus.choices)

    class Meta:
        model = LoopRun
        fields = ["session", "status"]
