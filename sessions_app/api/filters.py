import django_filters

from sessions_app.models import (
    AgentInvocation,
    AgentRole,
    AttemptStatus,
    CommandType,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    FeedbackSeverity,
    FindingType,
    InvocationStatus,
    Iteration,
    OrchestratorState,
    Plan,
    PlanSnapshot,
    PlanStatus,
    Question,
    QuestionCategory,
    QuestionStatus,
    ReplanningDelta,
    ResearchFinding,
    ResearchSession,
    ResearchStatus,
    Session,
    SessionStatus,
    Signal,
    SignalType,
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
