"""Validate and shape the ledger's rows; writes go through ledger_app.services."""

from typing import ClassVar

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ledger_app.models import (
    CUSTOM_EVENT_TYPE,
    EVENT_NON_NEGATIVE,
    EVENT_TYPES,
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
    event_type_canonical,
    event_type_is_valid,
    event_type_message,
)
from ralphsite.core.api.fields import ActingAgentField, ClientIdField, ReferenceFilterField, ReferenceIdField
from ralphsite.core.api.serializers import RalphInputSerializer, RalphModelSerializer
from ralphsite.core.fields import INTEGER_MAX
from ralphsite.core.money import COST_SENT_OR_PRICED

_NON_NEGATIVE = {"min_value": 0}


@extend_schema_field({"anyOf": [{"type": "string", "enum": list(EVENT_TYPES)},
                                {"type": "string", "pattern": CUSTOM_EVENT_TYPE.pattern}],
                      "description": "One of the ledger's event types, or a custom type in the `x-` namespace "
                                     "(`x-my_event`)."})
class EventTypeField(serializers.CharField):
    """An event's `type`; the schema lists the allowed values (`validate_type` checks them)."""


class EventRequestIdField(serializers.CharField):
    """The provider's request id of the call an event reports: kept in the event's `meta` (which the
    chain hashes); its usage is counted once per request id in the session (token usage)."""

    def get_attribute(self, instance: LedgerEvent) -> str:
        meta = instance.meta
        return meta.get("request_id", "") if isinstance(meta, dict) else ""  # a row older than meta's shape


class LedgerEventSerializer(RalphModelSerializer):
    seed_names: ClassVar = {"run_id": "session", "ts": "timestamp"}  # ralphy's ledger columns
    session = ReferenceIdField(source="session_id")
    type = EventTypeField(max_length=64)
    request_id = EventRequestIdField(max_length=200, required=False, allow_blank=True)

    class Meta:
        model = LedgerEvent
        fields = ["id", "session", "timestamp", "type", "category", "task_key", "agent", "model", "iteration",
                  "phase", "duration_ms", "tokens_in", "tokens_out", "tokens_total", "cost_usd", "is_estimated",
                  "request_id", "message", "data", "meta", "idempotency_key", "prev_hash", "hash"]
        read_only_fields = ["id", "prev_hash", "hash"]
        extra_kwargs = {**{name: _NON_NEGATIVE for name in EVENT_NON_NEGATIVE},
                        "cost_usd": COST_SENT_OR_PRICED}
        # A repeated idempotency key is a duplicate the service answers with the existing id, not an error.
        validators: list = []

    def validate_type(self, value: str) -> str:
        # The domain's rule (`event_rule_problems`), checked here too so the field's error stands with the others.
        value = event_type_canonical(value)
        if not event_type_is_valid(value):
            raise serializers.ValidationError(event_type_message(value))
        return value


class ChainHeadSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="The newest event's id; null before the first.")
    hash = serializers.CharField(help_text="Its hash (SHA-256, hex); 64 zeros before the first event.")


class AppendResultSerializer(serializers.Serializer):
    """One item of a bulk append's answer."""

    index = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["created", "duplicate", "invalid", "conflict"])
    id = serializers.IntegerField(allow_null=True)
    code = serializers.CharField(required=False, help_text="Why it failed: validation_error, no_model_price (a "
                                                           "call without cost_usd whose model has no price in "
                                                           "force) or idempotency_key_reused.")
    errors = serializers.JSONField(required=False, help_text="Why an invalid item was refused: its messages by "
                                                             "field, or a list when the item is no object.")


class IssueSerializer(RalphModelSerializer):
    seed_names: ClassVar = {"run_id": "session"}  # ralphy's issues

    class Meta:
        model = Issue
        fields = ["id", "session", "task_key", "kind", "signature", "message", "file", "line", "first_seen_at",
                  "last_seen_at", "count", "created_at", "updated_at"]
        read_only_fields = ["count", "created_at", "updated_at"]


class IssueRecordSerializer(RalphInputSerializer):
    """One occurrence of an issue (`POST issues/` and `POST issues/record/` alike)."""

    seed_names: ClassVar = {"run_id": "session", "ts": "seen_at"}  # ralphy's recordIssue

    id = ClientIdField(required=False,
                       help_text="Global tokens only: the id to give the issue if its signature is new (ignored on a "
                                 "repeat: the answer carries the existing issue's id). A session or project token "
                                 "sends none (400 `id_chosen_by_server`).")
    session = ReferenceIdField(model="sessions_app.Session")
    task_key = serializers.CharField(max_length=100)
    kind = serializers.CharField(max_length=64)
    signature = serializers.CharField(max_length=500)
    message = serializers.CharField()
    file = serializers.CharField(max_length=1000, required=False, allow_blank=True, default="")
    line = serializers.IntegerField(min_value=0, max_value=INTEGER_MAX, required=False, allow_null=True, default=None)
    seen_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class CheckpointSerializer(RalphModelSerializer):
    class Meta:
        model = Checkpoint
        fields = ["id", "key", "session", "task_key", "sprint_key", "git_ref", "git_commit", "path", "summary",
                  "description", "can_restore", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]
        # A key taken in its session is a retry (the same content) or a 409 naming it:
        # services.checkpoint_create decides.
        validators = ()


class CheckpointRestoreSerializer(RalphModelSerializer):
    checkpoint_key = serializers.CharField(source="checkpoint.key", read_only=True)

    class Meta:
        model = CheckpointRestore
        fields = ["id", "checkpoint", "checkpoint_key", "restored_at", "agent", "note", "created_at"]
        read_only_fields = ["created_at"]


class CheckpointRestoreRequestSerializer(RalphInputSerializer):
    agent = ActingAgentField(max_length=200, required=False, allow_blank=True, default="")
    note = serializers.CharField(required=False, allow_blank=True, default="")


class RollbackSerializer(RalphModelSerializer):
    class Meta:
        model = Rollback
        fields = ["id", "session", "rollback_type", "target_commit", "target_tag", "reason", "from_commit",
                  "trigger_type", "check_type", "backup_branch", "rolled_back_at", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]


class BaselineSerializer(RalphModelSerializer):
    class Meta:
        model = Baseline
        fields = ["id", "tag_name", "commit_hash", "milestone", "description", "branch", "files_changed",
                  "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]


class GateResultSerializer(RalphModelSerializer):
    class Meta:
        model = GateResult
        fields = ["id", "session", "gate", "iteration", "passed", "details", "error_count", "warning_count",
                  "coverage_percent", "timestamp", "duration_seconds", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]


class TokenUsageSerializer(RalphModelSerializer):
    # By id: the service checks a whole list's sessions in one query (a related field would run one per row).
    session = ReferenceIdField(source="session_id", required=False, allow_null=True)
    class Meta:
        model = TokenUsage
        fields = ["id", "session", "task_key", "sprint_key", "model", "input_tokens", "output_tokens",
                  "cached_read_tokens", "cached_write_tokens", "reasoning_tokens", "cost_usd", "is_estimated",
                  "operation", "agent", "recorded_at", "request_id", "source", "source_id", "iteration"]
        read_only_fields = ["id", "is_estimated", "source", "source_id", "iteration"]
        # No uniqueness validator: a repeated (session, request_id) is answered by the service with the
        # row that counts the call. (DRF 3.16.0 also replaced the declared `session` by a HiddenField
        # for that unique constraint, dropping every row's session.)
        validators: list = []
        extra_kwargs = {**{name: _NON_NEGATIVE for name in ("input_tokens", "output_tokens", "cached_read_tokens",
                                                            "cached_write_tokens", "reasoning_tokens")},
                        "cost_usd": COST_SENT_OR_PRICED}


class ModelPriceSerializer(RalphModelSerializer):
    class Meta:
        model = ModelPrice
        fields = ["id", "model", "valid_from", "input_per_mtok", "output_per_mtok", "cached_read_per_mtok",
                  "cached_write_per_mtok", "reasoning_per_mtok", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]
        extra_kwargs = {name: _NON_NEGATIVE for name in ("input_per_mtok", "output_per_mtok", "cached_read_per_mtok",
                                                         "cached_write_per_mtok", "reasoning_per_mtok")}


class ErrorLogSerializer(RalphModelSerializer):
    class Meta:
        model = ErrorLog
        fields = ["id", "session", "task_key", "operation", "error_type", "error_message", "error_pattern",
                  "recovery_action", "recovery_success", "retry_count", "circuit_opened", "logged_at"]
        read_only_fields = ["id"]


class DeadLetterSerializer(RalphModelSerializer):
    class Meta:
        model = DeadLetter
        fields = ["id", "operation_type", "operation_params", "error_message", "stack_trace", "attempt_count",
                  "session", "task_key", "status", "retry_after", "expires_at", "retried_at", "created_at"]
        read_only_fields = ["id", "retried_at"]


class DeadLetterClaimSerializer(RalphInputSerializer):
    operation_type = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class StatsQuerySerializer(RalphInputSerializer):
    session = ReferenceFilterField(model="sessions_app.Session", required=False, help_text="Its id or key.")
    since = serializers.DateTimeField(required=False, help_text="Inclusive start of the date range.")
    until = serializers.DateTimeField(required=False, help_text="Exclusive end of the date range.")


class StatsAllSourcesSerializer(serializers.Serializer):
    description = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.DictField())


class StatsResultSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.DictField(), help_text="What the seed's view answers.")
    all_sources = StatsAllSourcesSerializer(
        allow_null=True, help_text="Ralph Site's own figures beside the seed's, over every path that reports a "
                                   "provider call (token usage, events, attempts, agent invocations, Claude Code's "
                                   "hooks), where the seed's SQL reads one table; null where a statistic has none.")
