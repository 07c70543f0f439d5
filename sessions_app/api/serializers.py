from typing import Any, ClassVar

from django.db import models
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ralphsite.core.api.fields import (
    ActingAgentField,
    Base64BinaryField,
    ChoiceFieldNamingAllowed,
    ScopedPrimaryKeyRelatedField,
    StorableJSONField,
)
from ralphsite.core.api.serializers import RalphInputSerializer, RalphModelSerializer
from ralphsite.core.fields import BIGINT_MAX, INTEGER_MAX
from ralphsite.core.lifecycles import Lifecycle
from ralphsite.core.money import COST_SENT_OR_PRICED
from sessions_app import selectors
from sessions_app.models import (
    ATTACHMENT_MAX_BYTES,
    ATTEMPT_STATUS_LIFECYCLE,
    ATTEMPT_VERDICT_LIFECYCLE,
    FINISHED_SESSION_STATUSES,
    QUESTION_STATUS_LIFECYCLE,
    SESSION_STATE_LIFECYCLE,
    SESSION_STATUS_LIFECYCLE,
    SIGNAL_LIFECYCLE,
    TASK_STATUS_LIFECYCLE,
    AcceptanceCriterion,
    AgentInvocation,
    Bug,
    ContextAction,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    FileAccess,
    FileType,
    Interview,
    InterviewQuestion,
    Iteration,
    Level,
    LoopRun,
    LoopRunStatus,
    OrchestratorState,
    Plan,
    PlanSnapshot,
    ProgressSummary,
    Question,
    ReplanningDelta,
    ResearchFinding,
    ResearchSession,
    ReviewVerdict,
    Session,
    SessionPhase,
    SessionStateEntry,
    SessionStatus,
    Signal,
    Task,
    TaskAttempt,
    TaskFile,
    TaskStatus,
    VerificationMethod,
    path_is_pattern,
)
from sessions_app.models.quality import validate_feature_steps
from sessions_app.selectors import DEFAULT_IDLE_SECONDS
from sessions_app.services.devteam import (
    CONTEXT_BUDGET_DERIVED_FIELDS,
    CRITERION_VERIFICATION_FIELDS,
    FEATURE_STEP_COUNT_FIELDS,
    INTERVIEW_COUNTER_FIELDS,
    INTERVIEW_QUESTION_SERVER_FIELDS,
    LOOP_RUN_PROGRESS_FIELDS,
    RESEARCH_COUNTER_FIELDS,
)
from sessions_app.services.sessions import SESSION_COUNTERS
from sessions_app.services.usage import SESSION_TOTAL_FIELDS


def lifecycle_help(lifecycle: Lifecycle, what: str = "") -> dict[str, str]:
    """A status field's description: its lifecycle table (a change it does not allow is a 409 `invalid_transition`)."""
    return {"help_text": (f"{what} " if what else "") + f"The {lifecycle.name} lifecycle (from → allowed next): "
                         f"{lifecycle.describe()}. Any other change is a 409 `invalid_transition`."}

class RunningTaskSerializer(serializers.Serializer):
    id = serializers.CharField()
    key = serializers.CharField()
    title = serializers.CharField()
    agent = serializers.CharField(help_text="The agent holding its claim (else its assignee).")
    started_at = serializers.DateTimeField(allow_null=True)
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    wave = serializers.IntegerField(allow_null=True)


class CurrentWorkSerializer(serializers.Serializer):
    wave = serializers.IntegerField(allow_null=True, help_text=(
        "The current wave, derived from the tasks: the first wave of the dependency graph (Kahn layering, "
        "as waves/) that still holds an unfinished task; null when every task has ended. `current_wave` is "
        "what the loop last wrote."))
    waves_running = serializers.ListField(child=serializers.IntegerField(),
                                          help_text="The waves of the tasks in progress.")
    in_progress = RunningTaskSerializer(many=True, help_text="The tasks in progress, the longest running first.")


class SessionSerializer(RalphModelSerializer):
    summary_embedding = Base64BinaryField(required=False, allow_null=True, max_bytes=1024 * 1024)
    total_cost_cents = serializers.IntegerField(read_only=True)
    current_work = serializers.SerializerMethodField()

    class Meta:
        model = Session
        fields = [
            "id", "key", "user_request", "state", "status", "current_iteration", "current_wave",
            "current_plan_content", "default_model", "max_concurrency", "started_at", "ended_at",
            "last_activity_at", "config", "command", "command_type", "exit_reason", "current_phase",
            "current_task_key", "current_agent", "current_model", "max_iterations",
            "consecutive_failures", "max_consecutive_failures", "circuit_breaker_state", "plan_key",
            "sprint_key", "execution_mode", *SESSION_TOTAL_FIELDS, "total_cost_cents",
            "bug_council_activated", "bug_council_reason", "project_path", "summary",
            "summary_embedding", "token_count", "created_at", "updated_at", "current_work",
        ]
        # token_count is ralph-mem's own count (seed 004 writes it); usage rows add to it as well.
        read_only_fields = [*SESSION_TOTAL_FIELDS, "last_activity_at", "created_at", "updated_at"]
        validators = ()  # a key taken in its project: services (ralphsite.core.addressing.address_key_check)
        extra_kwargs = {"status": lifecycle_help(SESSION_STATUS_LIFECYCLE, "A final status finishes the session."),
                        "state": lifecycle_help(SESSION_STATE_LIFECYCLE, "complete and stopped end the session.")}

    @extend_schema_field(CurrentWorkSerializer(allow_null=True, help_text=(
        "What runs now, from the claims (read-only; selectors.session_current_work). In the answer about one "
        "session; null in lists (two queries per session: read the session for it).")))
    def get_current_work(self, session: Session) -> dict[str, Any] | None:
        if isinstance(self.parent, serializers.ListSerializer):
            return None
        return CurrentWorkSerializer(selectors.session_current_work(session_id=session.pk)).data


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------

_TIMES = ("created_at", "updated_at")


class SessionStateEntrySerializer(RalphModelSerializer):
    class Meta:
        model = SessionStateEntry
        fields = ["id", "session", "key", "value", *_TIMES]


class SessionPhaseSerializer(RalphModelSerializer):
    class Meta:
        model = SessionPhase
        fields = ["id", "session", "phase_type", "is_first_run", "init_script_created", "features_enumerated",
                  "progress_file_created", "baseline_commit_sha", "features_attempted", "features_completed",
                  "resumed_from_session", "resume_point", *_TIMES]


class ProgressSummarySerializer(RalphModelSerializer):
    class Meta:
        model = ProgressSummary
        fields = ["id", "session", "summary_text", "from_iteration", "to_iteration", "tasks_completed",
                  "tasks_remaining", "tests_passing", "tests_failing", "features_passing", "features_total",
                  "last_commit_sha", "files_changed", *_TIMES]


class BugSerializer(RalphModelSerializer):
    class Meta:
        model = Bug
        fields = ["id", "session", "description", "severity", "complexity", "root_cause", "diagnosis_method",
                  "fix_summary", "files_changed", "prevention_measures", "status", "resolved_at",
                  "council_activated", "council_votes", *_TIMES]


class EscalationSerializer(RalphModelSerializer):
    class Meta:
        model = Escalation
        fields = ["id", "session", "from_model", "to_model", "agent", "reason", "failure_count", "iteration",
                  "task_key", "timestamp", *_TIMES]


class AcceptanceCriterionSerializer(RalphModelSerializer):
    class Meta:
        model = AcceptanceCriterion
        fields = ["id", "key", "plan_key", "task_key", "sprint_key", "description", "category",
                  *CRITERION_VERIFICATION_FIELDS, "verification_method", "verification_evidence", "priority",
                  "sequence", *_TIMES]
        # DevTeam writes `passes` with the criterion (seed 003); `verify/` records a verification.
        read_only_fields = [*(name for name in CRITERION_VERIFICATION_FIELDS if name != "passes"), *_TIMES]


@extend_schema_field({"type": "array", "items": {
    "type": "object", "additionalProperties": False, "required": ["step", "passes"],
    "properties": {"step": {"type": "string", "pattern": r"\S", "description": "What to check: not blank."},
                   "passes": {"type": "boolean"}}}})
class FeatureStepsField(StorableJSONField):
    """A feature's `steps`: seed 003's list of `{"step": text, "passes": bool}` (`validate_feature_steps`),
    which the schema states item by item instead of as any JSON."""


class FeatureSerializer(RalphModelSerializer):
    steps = FeatureStepsField(required=False, validators=[validate_feature_steps])

    class Meta:
        model = Feature
        fields = ["id", "key", "plan_key", "sprint_key", "name", "description", "category", "steps", "passes",
                  *FEATURE_STEP_COUNT_FIELDS, "verified_at", "verified_by", "priority", "sequence", *_TIMES]
        read_only_fields = [*FEATURE_STEP_COUNT_FIELDS, *_TIMES]


class ContextBudgetSerializer(RalphModelSerializer):
    class Meta:
        model = ContextBudget
        fields = ["id", "session", "model", "context_limit", "current_usage", *CONTEXT_BUDGET_DERIVED_FIELDS,
                  "warn_threshold", "summarize_threshold", "last_action", *_TIMES]
        read_only_fields = [*CONTEXT_BUDGET_DERIVED_FIELDS, *_TIMES]


class ContextSnapshotSerializer(RalphModelSerializer):
    class Meta:
        model = ContextSnapshot
        fields = ["id", "session", "snapshot_type", "tokens_before", "tokens_after", "tokens_saved",
                  "preserved_items", "summarized_items", "summary_text", "trigger_reason", *_TIMES]


class InterviewSerializer(RalphModelSerializer):
    class Meta:
        model = Interview
        fields = ["id", "session", "interview_type", "started_at", "completed_at", "status",
                  *INTERVIEW_COUNTER_FIELDS, *_TIMES]
        read_only_fields = [*INTERVIEW_COUNTER_FIELDS, *_TIMES]


class InterviewQuestionSerializer(RalphModelSerializer):
    class Meta:
        model = InterviewQuestion
        fields = ["id", "interview", "question_key", "question_text", "question_type", "response",
                  *INTERVIEW_QUESTION_SERVER_FIELDS, "required", *_TIMES]
        read_only_fields = [*INTERVIEW_QUESTION_SERVER_FIELDS, *_TIMES]
        validators: list[Any] = []  # the sequence is the server's; its unique constraint guards it


class LoopRunSerializer(RalphModelSerializer):
    class Meta:
        model = LoopRun
        fields = ["id", "session", "task", "criteria", *LOOP_RUN_PROGRESS_FIELDS, "max_iterations", "started_at",
                  "snapshot_path", "completion_promise", "pause_timeout_seconds", *_TIMES]
        read_only_fields = [*LOOP_RUN_PROGRESS_FIELDS, *_TIMES]



class SessionStateSetSerializer(RalphInputSerializer):
    session = ScopedPrimaryKeyRelatedField(queryset=Session.objects.all())
    key = serializers.CharField(max_length=SessionStateEntry._meta.get_field("key").max_length)
    value = StorableJSONField()


class CriterionVerifySerializer(RalphInputSerializer):
    passes = serializers.BooleanField()
    verified_by = serializers.CharField(max_length=200, required=False, default="")
    verification_method = ChoiceFieldNamingAllowed(choices=VerificationMethod.choices, required=False, default="")
    verification_evidence = serializers.CharField(required=False, default="")
    failure_reason = serializers.CharField(required=False, default="",
                                           help_text="Why it failed: required when passes is false.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs["passes"] and not attrs["failure_reason"]:
            raise serializers.ValidationError({"failure_reason": ["Required when passes is false."]})
        return attrs


class ContextUsageSerializer(RalphInputSerializer):
    current_usage = serializers.IntegerField(min_value=0, max_value=BIGINT_MAX, required=False,
                                             help_text="The usage now, in tokens (replaces the stored usage).")
    tokens_added = serializers.IntegerField(min_value=0, max_value=BIGINT_MAX, required=False,
                                            help_text="Tokens to add to the stored usage.")
    last_action = ChoiceFieldNamingAllowed(choices=ContextAction.choices, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("current_usage" in attrs) == ("tokens_added" in attrs):
            raise serializers.ValidationError({"non_field_errors": ["Give exactly one of current_usage and "
                                                                    "tokens_added."]})
        return attrs


class InterviewAnswerSerializer(RalphInputSerializer):
    response = serializers.CharField()


class LoopRunFinishSerializer(RalphInputSerializer):
    status = ChoiceFieldNamingAllowed(choices=[c for c in LoopRunStatus.choices if c[0] != LoopRunStatus.RUNNING])
    snapshot_path = serializers.CharField(max_length=1000, required=False, allow_blank=True)
# -- orchestration ----------------------------------------------------------------------------




def _model_fields(model: type[models.Model], *extra: str) -> list[str]:
    return [f.name for f in model._meta.concrete_fields] + list(extra)


class IterationSerializer(RalphModelSerializer):
    class Meta:
        model = Iteration
        fields = _model_fields(Iteration)


class PlanSerializer(RalphModelSerializer):
    class Meta:
        model = Plan
        fields = _model_fields(Plan)
        validators = ()  # a key taken in its session: services (ralphsite.core.addressing.address_key_check)


class PlanSnapshotSerializer(RalphModelSerializer):
    class Meta:
        model = PlanSnapshot
        fields = _model_fields(PlanSnapshot)


class ReplanningDeltaSerializer(RalphModelSerializer):
    class Meta:
        model = ReplanningDelta
        fields = _model_fields(ReplanningDelta)


class ResearchSessionSerializer(RalphModelSerializer):
    class Meta:
        model = ResearchSession
        fields = _model_fields(ResearchSession)
        read_only_fields = RESEARCH_COUNTER_FIELDS


class ResearchFindingSerializer(RalphModelSerializer):
    class Meta:
        model = ResearchFinding
        fields = _model_fields(ResearchFinding)


class TaskAttemptSerializer(RalphModelSerializer):
    class Meta:
        model = TaskAttempt
        fields = _model_fields(TaskAttempt)
        read_only_fields = ["session", "is_estimated"]
        extra_kwargs = {"attempt_number": {"required": False}, "cost_usd": COST_SENT_OR_PRICED,
                        "status": lifecycle_help(ATTEMPT_STATUS_LIFECYCLE),
                        "review_verdict": lifecycle_help(ATTEMPT_VERDICT_LIFECYCLE)}
        # attempt_number is server-assigned when omitted; a duplicate given one is the constraint's 409.
        validators: list = []


class TaskFileSerializer(RalphModelSerializer):
    class Meta:
        model = TaskFile
        fields = _model_fields(TaskFile)


class TaskFileSpecSerializer(RalphInputSerializer):
    path = serializers.CharField(max_length=1000)
    is_pattern = serializers.BooleanField(required=False)
    file_type = ChoiceFieldNamingAllowed(choices=FileType.choices, required=False, allow_blank=True)
    access_type = ChoiceFieldNamingAllowed(choices=FileAccess.choices, required=False)


@extend_schema_field({"type": "array", "items": {"type": "string"}})
class DependencyKeysField(serializers.Field):
    """`depends_on`: the keys of the tasks this one depends on (same session)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", required=False, **kwargs)

    def to_representation(self, task: Task) -> list[str]:
        return [dependency.depends_on.key for dependency in task.dependencies.all()]

    def to_internal_value(self, data: Any) -> dict[str, list[str]]:
        keys = serializers.ListField(child=serializers.CharField(max_length=100)).run_validation(data)
        return {"depends_on": list(dict.fromkeys(keys))}


@extend_schema_field(TaskFileSpecSerializer(many=True))
class TaskFilesField(serializers.Field):
    """`files`: paths or glob patterns (strings), or objects with path/is_pattern/file_type/access_type."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(source="*", required=False, **kwargs)

    def to_representation(self, task: Task) -> list[dict[str, Any]]:
        # The shape a create takes, complete and sorted by path: a retried create compares equal.
        return [{"path": f.path, "is_pattern": f.is_pattern, "file_type": f.file_type, "access_type": f.access_type}
                for f in task.files.all()]

    def to_internal_value(self, data: Any) -> dict[str, list[dict[str, Any]]]:
        if not isinstance(data, list):
            raise serializers.ValidationError("Expected a list of paths or file objects.")
        specs = [TaskFileSpecSerializer().run_validation({"path": item} if isinstance(item, str) else item)
                 for item in data]
        paths = [spec["path"] for spec in specs]
        duplicates = sorted({path for path in paths if paths.count(path) > 1})
        if duplicates:
            raise serializers.ValidationError(f"Duplicate paths: {', '.join(duplicates)}.")
        for spec in specs:
            spec.setdefault("is_pattern", path_is_pattern(spec["path"]))
            spec.setdefault("file_type", "")
            spec.setdefault("access_type", FileAccess.ALLOWED)
        return {"files": sorted(specs, key=lambda spec: spec["path"])}


class TaskSerializer(RalphModelSerializer):
    seed_names: ClassVar = {"run_id": "session", "iter_count": "iteration_count"}  # ralphy's tasks
    depends_on = DependencyKeysField()
    files = TaskFilesField()
    latest_attempt = serializers.SerializerMethodField()

    class Meta:
        model = Task
        # The claim value proves holding the claim: it is in the claim answer only (ClaimedTaskSerializer).
        fields = [name for name in _model_fields(Task, "depends_on", "files", "latest_attempt") if name != "claim"]
        read_only_fields = ["claimed_by", "lease_expires_at"]
        extra_kwargs = {"status": lifecycle_help(TASK_STATUS_LIFECYCLE)}

    @extend_schema_field(TaskAttemptSerializer(allow_null=True))
    def get_latest_attempt(self, task: Task) -> dict[str, Any] | None:
        attempts = task.attempts.all()  # prefetched, latest first
        return TaskAttemptSerializer(attempts[0]).data if attempts else None

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        if self.instance is None:  # a new task belongs to a session (the column is nullable for imports)
            fields["session"].required, fields["session"].allow_null = True, False
        return fields

    def validate_success_criteria(self, value: Any) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise serializers.ValidationError("Expected a list of strings.")
        return value


class ClaimedTaskSerializer(TaskSerializer):
    """claim-task's answer, to the claimer only: the task with its `claim` value."""

    claim = serializers.IntegerField(
        read_only=True, help_text="Your claim: send it with heartbeat/, report/, status/, release/ and a delete of "
                                  "this task. It is shown here only, to you.")

    class Meta(TaskSerializer.Meta):
        fields = [*TaskSerializer.Meta.fields, "claim"]


class QuestionSerializer(RalphModelSerializer):
    class Meta:
        model = Question
        fields = _model_fields(Question)
        read_only_fields = ["answered_by"]  # who answered: answer/ records it from the token
        extra_kwargs = {"status": lifecycle_help(QUESTION_STATUS_LIFECYCLE, "answer/ answers a question.")}


class FeedbackItemSerializer(RalphModelSerializer):
    class Meta:
        model = FeedbackItem
        fields = _model_fields(FeedbackItem)


class FeedbackAttachmentSerializer(RalphModelSerializer):
    """An attachment with its content as base64 (detail, create, update)."""

    content = Base64BinaryField(max_bytes=ATTACHMENT_MAX_BYTES)

    class Meta:
        model = FeedbackAttachment
        fields = _model_fields(FeedbackAttachment)
        read_only_fields = ["size"]


class FeedbackAttachmentMetadataSerializer(RalphModelSerializer):
    """An attachment without its bytes (lists, batches)."""

    class Meta:
        model = FeedbackAttachment
        fields = [name for name in _model_fields(FeedbackAttachment) if name != "content"]
        read_only_fields = fields


class FeedbackItemInBatchSerializer(RalphModelSerializer):
    class Meta:
        model = FeedbackItem
        fields = [name for name in _model_fields(FeedbackItem) if name != "batch"]


class FeedbackAttachmentInBatchSerializer(RalphModelSerializer):
    """An attachment in a batch create: the model's own field rules (name, media type), no batch."""

    content = Base64BinaryField(max_bytes=ATTACHMENT_MAX_BYTES)

    class Meta:
        model = FeedbackAttachment
        fields = ["file_name", "content", "content_type", "description"]


class FeedbackBatchSerializer(RalphModelSerializer):
    """A batch with its items; created together with items and attachments in one request."""

    items = FeedbackItemInBatchSerializer(many=True, required=False)
    attachments = FeedbackAttachmentInBatchSerializer(many=True, required=False, write_only=True)
    attachment_files = FeedbackAttachmentMetadataSerializer(many=True, read_only=True, source="attachments")

    class Meta:
        model = FeedbackBatch
        fields = _model_fields(FeedbackBatch, "items", "attachments", "attachment_files")
        read_only_fields = ["session"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is not None and ({"items", "attachments"} & set(attrs)):
            raise serializers.ValidationError("Change items and attachments through feedback-items and "
                                              "feedback-attachments.")
        keys = [item["issue_key"] for item in attrs.get("items", [])]
        duplicates = sorted({key for key in keys if keys.count(key) > 1})
        if duplicates:
            raise serializers.ValidationError({"items": [f"Duplicate issue keys: {', '.join(duplicates)}."]})
        return attrs


class SignalSerializer(RalphModelSerializer):
    class Meta:
        model = Signal
        fields = _model_fields(Signal)
        # Ralph V2 writes IsProcessed and ProcessedAt (seed 000); poll-signal sets them and processed_by; the
        # sender is the token's, and a signal expires only with its session's end.
        read_only_fields = ["processed_by", "sent_by", "expired_at", "expired_reason"]
        extra_kwargs = {"is_processed": lifecycle_help(
            SIGNAL_LIFECYCLE, "Stages: unprocessed, processed (is_processed), expired (expired_at, expired_reason: "
                              "its session ended before a poll took it).")}


class AgentInvocationSerializer(RalphModelSerializer):
    class Meta:
        model = AgentInvocation
        fields = _model_fields(AgentInvocation)
        read_only_fields = ["is_estimated"]
        extra_kwargs = {"cost_usd": COST_SENT_OR_PRICED}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        session = attrs.get("session", getattr(self.instance, "session", None))
        task = attrs.get("task", getattr(self.instance, "task", None))
        if task is not None and session is not None and task.session_id != session.pk:
            raise serializers.ValidationError({"task": ["The task belongs to another session."]})
        return attrs


# Bodies of the orchestration actions.

class AgentInputSerializer(RalphInputSerializer):
    agent = ActingAgentField(max_length=200, required=False, allow_blank=True, default="")


class PlanInputSerializer(AgentInputSerializer):
    content = serializers.CharField(allow_blank=True, trim_whitespace=False)


class PlanOutputSerializer(serializers.Serializer):
    session = serializers.CharField()
    content = serializers.CharField()
    iteration = serializers.IntegerField(allow_null=True)
    snapshots = serializers.ListField(child=serializers.IntegerField())


CLAIM_HELP = "The `claim` value claim-task returned: needed on a claimed task unless the token is the holder's agent's."


def claim_field() -> serializers.IntegerField:
    return serializers.IntegerField(min_value=0, max_value=BIGINT_MAX, required=False, allow_null=True,
                                    default=None, help_text=CLAIM_HELP)


class TaskStatusInputSerializer(AgentInputSerializer):
    claim = claim_field()
    status = ChoiceFieldNamingAllowed(choices=TaskStatus.choices, **lifecycle_help(
        TASK_STATUS_LIFECYCLE, "in_progress comes from claim-task only; completed waits for the dependencies."))
    annotation = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class TaskReportInputSerializer(RalphModelSerializer):
    claim = claim_field()

    class Meta:
        model = TaskAttempt
        # attempt_number: Ralph V2's SubmitReport(taskId, report, attemptNumber); omitted, the task's next one.
        fields = ["claim", "implementation_report", "attempt_number", "iteration_number", "model", "agent", "status",
                  "error_type", "error_message", "tokens_input", "tokens_output", "cost_usd", "request_id",
                  "duration_seconds", "started_at", "ended_at"]
        extra_kwargs = {"implementation_report": {"required": True, "allow_blank": False},
                        "attempt_number": {"required": False, "min_value": 1}, "cost_usd": COST_SENT_OR_PRICED}


class TaskReviewInputSerializer(AgentInputSerializer):
    review_report = serializers.CharField()
    verdict = ChoiceFieldNamingAllowed(choices=ReviewVerdict.choices)
    complete = serializers.BooleanField(required=False, default=False,
                                        help_text="A qualified verdict also completes the task.")
    send_back = serializers.BooleanField(required=False, default=False,
                                         help_text="A failed verdict also sends the task back to not_started.")


class LeaseInputSerializer(RalphInputSerializer):
    agent = ActingAgentField(max_length=200)
    lease_seconds = serializers.IntegerField(min_value=1, max_value=7 * 24 * 3600, default=600)


class HeartbeatInputSerializer(LeaseInputSerializer):
    claim = claim_field()


class ReleaseInputSerializer(RalphInputSerializer):
    agent = ActingAgentField(max_length=200)
    claim = claim_field()
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class QuestionAnswerInputSerializer(AgentInputSerializer):
    answer = serializers.CharField()
    answer_source = serializers.CharField(max_length=500, required=False, allow_blank=True)
    answer_confidence = ChoiceFieldNamingAllowed(choices=Level.choices, required=False)
    answer_implication = serializers.CharField(required=False, allow_blank=True)
    replace = serializers.BooleanField(
        required=False, default=False,
        help_text="Replace an earlier answer (kept in the ledger's event); without it a second answer is a 409 "
                  "`already_answered`.")


class TransitionInputSerializer(AgentInputSerializer):
    state = ChoiceFieldNamingAllowed(choices=OrchestratorState.choices, **lifecycle_help(
        SESSION_STATE_LIFECYCLE, "complete and stopped end the session (completed, stopped; `message` is the exit "
                                 "reason)."))
    current_iteration = serializers.IntegerField(min_value=1, max_value=INTEGER_MAX, required=False)
    current_wave = serializers.IntegerField(min_value=0, max_value=INTEGER_MAX, required=False, allow_null=True)
    current_phase = serializers.CharField(max_length=100, required=False, allow_blank=True)
    message = serializers.CharField(required=False, allow_blank=True, default="")


class CounterIncrementInputSerializer(AgentInputSerializer):
    counter = ChoiceFieldNamingAllowed(choices=SESSION_COUNTERS, help_text="The session's count to raise by one.")


class ResumeInputSerializer(AgentInputSerializer):
    force = serializers.BooleanField(required=False, default=False,
                                     help_text="Resume a running session even if it was active within idle_seconds.")
    idle_seconds = serializers.IntegerField(
        required=False, min_value=0, max_value=100 * 365 * 24 * 3600, default=DEFAULT_IDLE_SECONDS,
        help_text="A running session written to this recently is active, not interrupted.")


class FinishInputSerializer(AgentInputSerializer):
    status = ChoiceFieldNamingAllowed(choices=[(value, label) for value, label in SessionStatus.choices
                                               if value in FINISHED_SESSION_STATUSES])
    exit_reason = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    summary = serializers.CharField(required=False, allow_blank=True)


class InvocationCompleteInputSerializer(RalphModelSerializer):
    class Meta:
        model = AgentInvocation
        fields = ["response", "status", "error_message", "error_type", "tokens_input", "tokens_output",
                  "cost_usd", "request_id", "duration_ms", "completed_at", "files_changed", "output_summary"]
        extra_kwargs = {"status": {"required": True}, "cost_usd": COST_SENT_OR_PRICED}


class BlockedTaskSerializer(serializers.Serializer):
    task = serializers.CharField()
    because = serializers.ListField(child=serializers.CharField(),
                                    help_text="The failed, cancelled or blocked tasks upstream of it.")


# Query parameters of the session actions.

class TaskDeleteQuerySerializer(RalphInputSerializer):
    claim = claim_field()


class FeedbackQuerySerializer(RalphInputSerializer):
    iteration = serializers.IntegerField(min_value=1, max_value=INTEGER_MAX, required=False,
                                         help_text="Only this iteration number's batches.")


# A century: any larger threshold would put the cutoff before the first representable date.
MAX_IDLE_SECONDS = 100 * 365 * 24 * 3600


class InterruptedQuerySerializer(RalphInputSerializer):
    project_path = serializers.CharField(required=False, allow_blank=True, help_text="Only sessions of this project.")
    idle_seconds = serializers.IntegerField(
        min_value=0, max_value=MAX_IDLE_SECONDS, default=DEFAULT_IDLE_SECONDS,
        help_text="How long without activity makes a running session interrupted.")


class ProgressSerializer(serializers.Serializer):
    session = serializers.CharField()
    total = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField())
    by_wave = serializers.ListField(child=serializers.DictField())
    tasks = serializers.ListField(child=serializers.DictField())
    blocked = BlockedTaskSerializer(many=True)


class WaveSerializer(serializers.Serializer):
    wave = serializers.IntegerField()
    tasks = serializers.ListField(child=serializers.CharField())


class ResumePointSerializer(serializers.Serializer):
    session = serializers.CharField()
    iteration = serializers.IntegerField()
    state = serializers.CharField()
    wave = serializers.IntegerField(allow_null=True)
    current_task = serializers.CharField(allow_null=True)
    next_task = serializers.CharField(allow_null=True)
