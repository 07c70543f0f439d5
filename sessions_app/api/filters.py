from typing import ClassVar

import django_filters

from ralphsite.core.api.filters import IntegerFilter, MultipleChoiceFilter, NonBlankKeyFilter, RalphFilterSet
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


class SessionFilterSet(RalphFilterSet):
    key = NonBlankKeyFilter()
    status = MultipleChoiceFilter(choices=SessionStatus.choices)
    state = MultipleChoiceFilter(choices=OrchestratorState.choices)
    command_type = MultipleChoiceFilter(choices=CommandType.choices)
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    started_after = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="gte")
    started_before = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="lt")

    class Meta:
        model = Session
        fields = ["key", "status", "state", "project_path", "command_type"]


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------
# Each filter is backed by an index (one led by the session FK, or another in the model's Meta).


class SessionStateEntryFilterSet(RalphFilterSet):
    class Meta:
        model = SessionStateEntry
        fields = ["session", "key"]


class SessionPhaseFilterSet(RalphFilterSet):
    phase_type = MultipleChoiceFilter(choices=PhaseType.choices)

    class Meta:
        model = SessionPhase
        fields = ["session", "phase_type"]


class ProgressSummaryFilterSet(RalphFilterSet):
    class Meta:
        model = ProgressSummary
        fields = ["session"]


class BugFilterSet(RalphFilterSet):
    status = MultipleChoiceFilter(choices=BugStatus.choices)
    severity = MultipleChoiceFilter(choices=Priority.choices)
    complexity = MultipleChoiceFilter(choices=BugComplexity.choices)

    class Meta:
        model = Bug
        fields = ["session", "status", "severity", "complexity"]


class EscalationFilterSet(RalphFilterSet):
    class Meta:
        model = Escalation
        fields = ["session", "task_key", "agent", "to_model"]


class AcceptanceCriterionFilterSet(RalphFilterSet):
    category = MultipleChoiceFilter(choices=CriterionCategory.choices)

    class Meta:
        model = AcceptanceCriterion
        fields = ["key", "plan_key", "task_key", "sprint_key", "passes", "category"]


class FeatureFilterSet(RalphFilterSet):
    class Meta:
        model = Feature
        fields = ["key", "plan_key", "sprint_key", "passes", "category"]


class ContextBudgetFilterSet(RalphFilterSet):
    status = MultipleChoiceFilter(choices=ContextStatus.choices)

    class Meta:
        model = ContextBudget
        fields = ["session", "model", "status"]


class ContextSnapshotFilterSet(RalphFilterSet):
    snapshot_type = MultipleChoiceFilter(choices=SnapshotType.choices)

    class Meta:
        model = ContextSnapshot
        fields = ["session", "snapshot_type"]


class InterviewFilterSet(RalphFilterSet):
    interview_type = MultipleChoiceFilter(choices=InterviewType.choices)
    status = MultipleChoiceFilter(choices=InterviewStatus.choices)

    class Meta:
        model = Interview
        fields = ["session", "interview_type", "status"]


class InterviewQuestionFilterSet(RalphFilterSet):
    session = django_filters.CharFilter(field_name="interview__session", help_text="The interview's session.")

    class Meta:
        model = InterviewQuestion
        fields = ["interview", "session", "question_key"]


class LoopRunFilterSet(RalphFilterSet):
    status = MultipleChoiceFilter(choices=LoopRunStatus.choices)

    class Meta:
        model = LoopRun
        fields = ["session", "status"]
# -- orchestration ----------------------------------------------------------------------------

class IterationFilterSet(RalphFilterSet):
    class Meta:
        model = Iteration
        fields = ["session", "number", "planning_complete"]


class PlanFilterSet(RalphFilterSet):
    status = MultipleChoiceFilter(choices=PlanStatus.choices)

    class Meta:
        model = Plan
        fields = ["session", "key", "status", "research_session"]


class PlanSnapshotFilterSet(RalphFilterSet):
    class Meta:
        model = PlanSnapshot
        fields = ["session", "iteration_number"]


class ReplanningDeltaFilterSet(RalphFilterSet):
    session = django_filters.CharFilter(field_name="iteration__session")

    class Meta:
        model = ReplanningDelta
        fields = ["session", "iteration"]


class ResearchSessionFilterSet(RalphFilterSet):
    status = MultipleChoiceFilter(choices=ResearchStatus.choices)

    class Meta:
        model = ResearchSession
        fields = ["session", "status"]


class ResearchFindingFilterSet(RalphFilterSet):
    session = django_filters.CharFilter(field_name="research_session__session")
    finding_type = MultipleChoiceFilter(choices=FindingType.choices)

    class Meta:
        model = ResearchFinding
        fields = ["session", "research_session", "finding_type"]


class TaskFilterSet(RalphFilterSet):
    seed_names: ClassVar = {"run_id": "session"}  # ralphy names the session its run
    status = MultipleChoiceFilter(choices=TaskStatus.choices)

    class Meta:
        model = Task
        fields = ["session", "key", "status", "wave", "plan", "sprint_key", "parent", "assigned_agent",
                  "claimed_by"]


class TaskAttemptFilterSet(RalphFilterSet):
    status = MultipleChoiceFilter(choices=AttemptStatus.choices)
    task_key = django_filters.CharFilter(field_name="task__key")

    class Meta:
        model = TaskAttempt
        fields = ["session", "task", "task_key", "status", "review_verdict", "model"]


class TaskFileFilterSet(RalphFilterSet):
    session = django_filters.CharFilter(field_name="task__session")

    class Meta:
        model = TaskFile
        fields = ["session", "task", "access_type"]


class QuestionFilterSet(RalphFilterSet):
    category = MultipleChoiceFilter(choices=QuestionCategory.choices)
    status = MultipleChoiceFilter(choices=QuestionStatus.choices)

    class Meta:
        model = Question
        fields = ["session", "key", "category", "status"]


class FeedbackBatchFilterSet(RalphFilterSet):
    iteration_number = IntegerFilter(field_name="iteration__number")

    class Meta:
        model = FeedbackBatch
        fields = ["session", "iteration", "iteration_number"]


class FeedbackItemFilterSet(RalphFilterSet):
    session = django_filters.CharFilter(field_name="batch__session")
    severity = MultipleChoiceFilter(choices=FeedbackSeverity.choices)

    class Meta:
        model = FeedbackItem
        fields = ["session", "batch", "issue_key", "severity", "is_resolved"]


class FeedbackAttachmentFilterSet(RalphFilterSet):
    session = django_filters.CharFilter(field_name="batch__session")

    class Meta:
        model = FeedbackAttachment
        fields = ["session", "batch"]


class SignalFilterSet(RalphFilterSet):
    type = MultipleChoiceFilter(choices=SignalType.choices)

    class Meta:
        model = Signal
        fields = ["session", "type", "is_processed"]


class AgentInvocationFilterSet(RalphFilterSet):
    role = MultipleChoiceFilter(choices=AgentRole.choices)
    status = MultipleChoiceFilter(choices=InvocationStatus.choices)

    class Meta:
        model = AgentInvocation
        fields = ["session", "task", "task_key", "role", "status", "agent", "model"]
