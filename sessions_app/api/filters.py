import django_filters

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
    severity = django_filters.MultipleChoiceFilter(choices=Priority.choices)
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
# -- orchestration ----------------------------------------------------------------------------

class IterationFilterSet(django_filters.FilterSet):
    class Meta:
        model = Iteration
        fields = ["session", "number", "planning_complete"]


class PlanFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=PlanStatus.choices)

    class Meta:
        model = Plan
        fields = ["session", "key", "status", "research_session"]


class PlanSnapshotFilterSet(django_filters.FilterSet):
    class Meta:
        model = PlanSnapshot
        fields = ["session", "iteration_number"]


class ReplanningDeltaFilterSet(django_filters.FilterSet):
    session = django_filters.CharFilter(field_name="iteration__session")

    class Meta:
        model = ReplanningDelta
        fields = ["session", "iteration"]


class ResearchSessionFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=ResearchStatus.choices)

    class Meta:
        model = ResearchSession
        fields = ["session", "status"]


class ResearchFindingFilterSet(django_filters.FilterSet):
    session = django_filters.CharFilter(field_name="research_session__session")
    finding_type = django_filters.MultipleChoiceFilter(choices=FindingType.choices)

    class Meta:
        model = ResearchFinding
        fields = ["session", "research_session", "finding_type"]


class TaskFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=TaskStatus.choices)

    class Meta:
        model = Task
        fields = ["session", "key", "status", "wave", "plan", "sprint_key", "parent", "assigned_agent",
                  "claimed_by"]


class TaskAttemptFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=AttemptStatus.choices)
    task_key = django_filters.CharFilter(field_name="task__key")

    class Meta:
        model = TaskAttempt
        fields = ["session", "task", "task_key", "status", "review_verdict", "model"]


class TaskFileFilterSet(django_filters.FilterSet):
    session = django_filters.CharFilter(field_name="task__session")

    class Meta:
        model = TaskFile
        fields = ["session", "task", "access_type"]


class QuestionFilterSet(django_filters.FilterSet):
    category = django_filters.MultipleChoiceFilter(choices=QuestionCategory.choices)
    status = django_filters.MultipleChoiceFilter(choices=QuestionStatus.choices)

    class Meta:
        model = Question
        fields = ["session", "key", "category", "status"]


class FeedbackBatchFilterSet(django_filters.FilterSet):
    iteration_number = django_filters.NumberFilter(field_name="iteration__number")

    class Meta:
        model = FeedbackBatch
        fields = ["session", "iteration", "iteration_number"]


class FeedbackItemFilterSet(django_filters.FilterSet):
    session = django_filters.CharFilter(field_name="batch__session")
    severity = django_filters.MultipleChoiceFilter(choices=FeedbackSeverity.choices)

    class Meta:
        model = FeedbackItem
        fields = ["session", "batch", "issue_key", "severity", "is_resolved"]


class FeedbackAttachmentFilterSet(django_filters.FilterSet):
    session = django_filters.CharFilter(field_name="batch__session")

    class Meta:
        model = FeedbackAttachment
        fields = ["session", "batch"]


class SignalFilterSet(django_filters.FilterSet):
    type = django_filters.MultipleChoiceFilter(choices=SignalType.choices)

    class Meta:
        model = Signal
        fields = ["session", "type", "is_processed"]


class AgentInvocationFilterSet(django_filters.FilterSet):
    role = django_filters.MultipleChoiceFilter(choices=AgentRole.choices)
    status = django_filters.MultipleChoiceFilter(choices=InvocationStatus.choices)

    class Meta:
        model = AgentInvocation
        fields = ["session", "task", "task_key", "role", "status", "agent", "model"]
