import django_filters
from django.db import models
from django_filters.filterset import FILTER_FOR_DBFIELD_DEFAULTS

from ralphsite.api.filters import IntegerFilter, NonBlankKeyFilter, RalphFilterSet
from sessions_app.models import (
    AcceptanceCriterion,
    AgentInvocation,
    AgentRole,
    AttemptStatus,
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
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    FeedbackSeverity,
    FindingType,
    Interview,
    InterviewQuestion,
    InterviewStatus,
    InterviewType,
    InvocationStatus,
    Iteration,
    LoopRun,
    LoopRunStatus,
    OrchestratorState,
    PhaseType,
    Plan,
    PlanSnapshot,
    PlanStatus,
    Priority,
    ProgressSummary,
    Question,
    QuestionCategory,
    QuestionStatus,
    ReplanningDelta,
    ResearchFinding,
    ResearchSession,
    ResearchStatus,
    Session,
    SessionPhase,
    SessionStateEntry,
    SessionStatus,
    Signal,
    SignalType,
    SnapshotType,
    Task,
    TaskAttempt,
    TaskFile,
    TaskStatus,
)


class IntegerValidatingFilterSet(RalphFilterSet):
    """Base of every FilterSet here: filters generated for integer model fields are IntegerFilters."""

    FILTER_DEFAULTS = {
        **FILTER_FOR_DBFIELD_DEFAULTS,
        **{field: {"filter_class": IntegerFilter}
           for field in (*FILTER_FOR_DBFIELD_DEFAULTS, models.BigIntegerField, models.PositiveBigIntegerField)
           if issubclass(field, models.IntegerField)},
    }


class SessionFilterSet(IntegerValidatingFilterSet):
    key = NonBlankKeyFilter()
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
# Each filter is backed by an index (one led by the session FK, or another in the model's Meta).


class SessionStateEntryFilterSet(IntegerValidatingFilterSet):
    class Meta:
        model = SessionStateEntry
        fields = ["session", "key"]


class SessionPhaseFilterSet(IntegerValidatingFilterSet):
    phase_type = django_filters.MultipleChoiceFilter(choices=PhaseType.choices)

    class Meta:
        model = SessionPhase
        fields = ["session", "phase_type"]


class ProgressSummaryFilterSet(IntegerValidatingFilterSet):
    class Meta:
        model = ProgressSummary
        fields = ["session"]


class BugFilterSet(IntegerValidatingFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=BugStatus.choices)
    severity = django_filters.MultipleChoiceFilter(choices=Priority.choices)
    complexity = django_filters.MultipleChoiceFilter(choices=BugComplexity.choices)

    class Meta:
        model = Bug
        fields = ["session", "status", "severity", "complexity"]


class EscalationFilterSet(IntegerValidatingFilterSet):
    class Meta:
        model = Escalation
        fields = ["session", "task_key", "agent", "to_model"]


class AcceptanceCriterionFilterSet(IntegerValidatingFilterSet):
    category = django_filters.MultipleChoiceFilter(choices=CriterionCategory.choices)

    class Meta:
        model = AcceptanceCriterion
        fields = ["key", "plan_key", "task_key", "sprint_key", "passes", "category"]


class FeatureFilterSet(IntegerValidatingFilterSet):
    class Meta:
        model = Feature
        fields = ["key", "plan_key", "sprint_key", "passes", "category"]


class ContextBudgetFilterSet(IntegerValidatingFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=ContextStatus.choices)

    class Meta:
        model = ContextBudget
        fields = ["session", "model", "status"]


class ContextSnapshotFilterSet(IntegerValidatingFilterSet):
    snapshot_type = django_filters.MultipleChoiceFilter(choices=SnapshotType.choices)

    class Meta:
        model = ContextSnapshot
        fields = ["session", "snapshot_type"]


class InterviewFilterSet(IntegerValidatingFilterSet):
    interview_type = django_filters.MultipleChoiceFilter(choices=InterviewType.choices)
    status = django_filters.MultipleChoiceFilter(choices=InterviewStatus.choices)

    class Meta:
        model = Interview
        fields = ["session", "interview_type", "status"]


class InterviewQuestionFilterSet(IntegerValidatingFilterSet):
    session = django_filters.CharFilter(field_name="interview__session", help_text="The interview's session.")

    class Meta:
        model = InterviewQuestion
        fields = ["interview", "session", "question_key"]


class LoopRunFilterSet(IntegerValidatingFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=LoopRunStatus.choices)

    class Meta:
        model = LoopRun
        fields = ["session", "status"]
# -- orchestration ----------------------------------------------------------------------------

class IterationFilterSet(IntegerValidatingFilterSet):
    class Meta:
        model = Iteration
        fields = ["session", "number", "planning_complete"]


class PlanFilterSet(IntegerValidatingFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=PlanStatus.choices)

    class Meta:
        model = Plan
        fields = ["session", "key", "status", "research_session"]


class PlanSnapshotFilterSet(IntegerValidatingFilterSet):
    class Meta:
        model = PlanSnapshot
        fields = ["session", "iteration_number"]


class ReplanningDeltaFilterSet(IntegerValidatingFilterSet):
    session = django_filters.CharFilter(field_name="iteration__session")

    class Meta:
        model = ReplanningDelta
        fields = ["session", "iteration"]


class ResearchSessionFilterSet(IntegerValidatingFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=ResearchStatus.choices)

    class Meta:
        model = ResearchSession
        fields = ["session", "status"]


class ResearchFindingFilterSet(IntegerValidatingFilterSet):
    session = django_filters.CharFilter(field_name="research_session__session")
    finding_type = django_filters.MultipleChoiceFilter(choices=FindingType.choices)

    class Meta:
        model = ResearchFinding
        fields = ["session", "research_session", "finding_type"]


class TaskFilterSet(IntegerValidatingFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=TaskStatus.choices)

    class Meta:
        model = Task
        fields = ["session", "key", "status", "wave", "plan", "sprint_key", "parent", "assigned_agent",
                  "claimed_by"]


class TaskAttemptFilterSet(IntegerValidatingFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=AttemptStatus.choices)
    task_key = django_filters.CharFilter(field_name="task__key")

    class Meta:
        model = TaskAttempt
        fields = ["session", "task", "task_key", "status", "review_verdict", "model"]


class TaskFileFilterSet(IntegerValidatingFilterSet):
    session = django_filters.CharFilter(field_name="task__session")

    class Meta:
        model = TaskFile
        fields = ["session", "task", "access_type"]


class QuestionFilterSet(IntegerValidatingFilterSet):
    category = django_filters.MultipleChoiceFilter(choices=QuestionCategory.choices)
    status = django_filters.MultipleChoiceFilter(choices=QuestionStatus.choices)

    class Meta:
        model = Question
        fields = ["session", "key", "category", "status"]


class FeedbackBatchFilterSet(IntegerValidatingFilterSet):
    iteration_number = IntegerFilter(field_name="iteration__number")

    class Meta:
        model = FeedbackBatch
        fields = ["session", "iteration", "iteration_number"]


class FeedbackItemFilterSet(IntegerValidatingFilterSet):
    session = django_filters.CharFilter(field_name="batch__session")
    severity = django_filters.MultipleChoiceFilter(choices=FeedbackSeverity.choices)

    class Meta:
        model = FeedbackItem
        fields = ["session", "batch", "issue_key", "severity", "is_resolved"]


class FeedbackAttachmentFilterSet(IntegerValidatingFilterSet):
    session = django_filters.CharFilter(field_name="batch__session")

    class Meta:
        model = FeedbackAttachment
        fields = ["session", "batch"]


class SignalFilterSet(IntegerValidatingFilterSet):
    type = django_filters.MultipleChoiceFilter(choices=SignalType.choices)

    class Meta:
        model = Signal
        fields = ["session", "type", "is_processed"]


class AgentInvocationFilterSet(IntegerValidatingFilterSet):
    role = django_filters.MultipleChoiceFilter(choices=AgentRole.choices)
    status = django_filters.MultipleChoiceFilter(choices=InvocationStatus.choices)

    class Meta:
        model = AgentInvocation
        fields = ["session", "task", "task_key", "role", "status", "agent", "model"]
