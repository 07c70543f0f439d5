from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from ralphsite.api.fields import Base64BinaryField, ChoiceFieldNamingAllowed
from ralphsite.api.serializers import RalphModelSerializer
from sessions_app.models import (
    AcceptanceCriterion,
    Bug,
    ContextAction,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    Interview,
    InterviewQuestion,
    LoopRun,
    LoopRunStatus,
    ProgressSummary,
    Session,
    SessionPhase,
    SessionStateEntry,
    VerificationMethod,
)
from sessions_app.services import (
    CONTEXT_BUDGET_DERIVED_FIELDS,
    CRITERION_VERIFICATION_FIELDS,
    FEATURE_STEP_COUNT_FIELDS,
    INTERVIEW_COUNTER_FIELDS,
    INTERVIEW_QUESTION_SERVER_FIELDS,
    LOOP_RUN_PROGRESS_FIELDS,
    SESSION_TOTAL_FIELDS,
)


class SessionSerializer(RalphModelSerializer):
    summary_embedding = Base64BinaryField(required=False, allow_null=True, max_bytes=1024 * 1024)
    total_cost_cents = serializers.IntegerField(read_only=True)

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
            "summary_embedding", "token_count", "created_at", "updated_at",
        ]
        read_only_fields = [*SESSION_TOTAL_FIELDS, "token_count", "last_activity_at", "created_at",
                            "updated_at"]


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
        read_only_fields = [*CRITERION_VERIFICATION_FIELDS, *_TIMES]


class FeatureSerializer(RalphModelSerializer):
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
                  "snapshot_path", *_TIMES]
        read_only_fields = [*LOOP_RUN_PROGRESS_FIELDS, *_TIMES]


class ActionInputSerializer(serializers.Serializer):
    """The body of a domain action: a key the action does not know is a 400, not silently ignored."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping) and (unknown := sorted(set(data) - set(self.fields))):
            raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class SessionStateSetSerializer(ActionInputSerializer):
    session = serializers.PrimaryKeyRelatedField(queryset=Session.objects.all())
    key = serializers.CharField(max_length=SessionStateEntry._meta.get_field("key").max_length)
    value = serializers.JSONField()


class CriterionVerifySerializer(ActionInputSerializer):
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


class ContextUsageSerializer(ActionInputSerializer):
    current_usage = serializers.IntegerField(min_value=0, required=False,
                                             help_text="The usage now, in tokens (replaces the stored usage).")
    tokens_added = serializers.IntegerField(min_value=0, required=False,
                                            help_text="Tokens to add to the stored usage.")
    last_action = ChoiceFieldNamingAllowed(choices=ContextAction.choices, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("current_usage" in attrs) == ("tokens_added" in attrs):
            raise serializers.ValidationError({"non_field_errors": ["Give exactly one of current_usage and "
                                                                    "tokens_added."]})
        return attrs


class InterviewAnswerSerializer(ActionInputSerializer):
    response = serializers.CharField()


class LoopRunFinishSerializer(ActionInputSerializer):
    status = ChoiceFieldNamingAllowed(choices=[c for c in LoopRunStatus.choices if c[0] != LoopRunStatus.RUNNING])
    snapshot_path = serializers.CharField(max_length=1000, required=False, allow_blank=True)
