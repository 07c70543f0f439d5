"""Validate and shape conversations and memory; writes go through conversations_app.services."""

from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.utils import extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.fields import empty

from conversations_app import selectors
from conversations_app.models import (
    TOOL_CALLS,
    Chat,
    GlobalPattern,
    Message,
    MessageRole,
    Observation,
    ObservationType,
    PatternType,
    Run,
    SyncEntity,
    SyncMapping,
    ToolCallStatus,
)
from conversations_app.services import MAX_BULK_MESSAGES
from ralphsite.core.api.fields import (
    Base64BinaryField,
    ChoiceFieldNamingAllowed,
    FiniteFloatField,
    ReferenceFilterField,
    ReferenceIdField,
    StorableJSONField,
    StoredShapeListSerializer,
    ULIDSerializerField,
)
from ralphsite.core.api.serializers import RalphInputSerializer, RalphModelSerializer
from ralphsite.core.fields import BIGINT_MAX
from ralphsite.core.search.sources import search_kinds
from ralphsite.core.search.terms import MAX_QUERY_CHARS, QueryTooLong, SearchQuery, parse_query

MAX_EMBEDDING_BYTES = 1024 * 1024
MAX_TOOL_CALLS = 1000


class ParentIdField(ReferenceIdField):
    """A parent's ULID, declared with `source="<name>_id"` so that it is read from that column (no
    query per row); a missing parent is the service's ACODE-CONV-DATA-004, not a serializer lookup."""


class ToolCallSerializer(RalphInputSerializer):
    """FR-027…031: one tool invocation inside a message."""

    id = serializers.CharField(max_length=200)
    name = serializers.CharField(max_length=200)
    arguments = StorableJSONField()
    result = serializers.CharField(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    status = ChoiceFieldNamingAllowed(choices=ToolCallStatus.choices)


class ChatSerializer(RalphModelSerializer):
    tags = serializers.ListField(child=serializers.CharField(max_length=100), max_length=100, required=False)
    version = serializers.IntegerField(min_value=1, required=False,
                                       help_text="Current version; send it back on update (stale → 409).")

    class Meta:
        model = Chat
        fields = ["id", "title", "tags", "worktree_id", "session", "is_deleted", "deleted_at", "sync_status",
                  "remote_id", "version", "run_count", "created_at", "updated_at"]
        read_only_fields = ["is_deleted", "deleted_at", "run_count", "created_at", "updated_at"]


class RunUsageSerializer(serializers.Serializer):
    booked = serializers.BooleanField(help_text=(
        "True: the figures are the sums of the calls booked against this run in token usage (Claude Code's "
        "hooks book each call of their session's run). False: `tokens` is the run's own `tokens_used`, with no "
        "split and no cost."))
    tokens = serializers.IntegerField()
    input_tokens = serializers.IntegerField(allow_null=True)
    output_tokens = serializers.IntegerField(allow_null=True)
    cost_usd = serializers.DecimalField(max_digits=18, decimal_places=6, allow_null=True)
    calls = serializers.IntegerField(allow_null=True)


class RunSerializer(RalphModelSerializer):
    chat = ParentIdField(source="chat_id")
    tokens_used = serializers.IntegerField(min_value=0, max_value=BIGINT_MAX, required=False)
    usage = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = ["id", "chat", "status", "started_at", "completed_at", "tokens_used", "sequence_number",
                  "message_count", "sync_status", "remote_id", "created_at", "updated_at", "usage"]
        read_only_fields = ["sequence_number", "message_count", "created_at", "updated_at"]

    @extend_schema_field(RunUsageSerializer(allow_null=True, help_text=(
        "The run's tokens and cost as its conversation page shows them (read-only; selectors.runs_usage). In "
        "the answer about one run; null in lists (read the run for it).")))
    def get_usage(self, run: Run) -> dict[str, Any] | None:
        if isinstance(self.parent, serializers.ListSerializer):
            return None
        return RunUsageSerializer(selectors.runs_usage([run])[run.pk]).data


class MessageAppendSerializer(RalphModelSerializer):
    """One message appended to the run in the URL."""

    # The list may be null, its items may not: `many=True` would hand `allow_null` to each item too,
    # storing `[null]` that no read could then render.
    tool_calls = StoredShapeListSerializer(child=ToolCallSerializer(), required=False, allow_null=True,
                                           max_length=MAX_TOOL_CALLS, shape=TOOL_CALLS)

    class Meta:
        model = Message
        fields = ["id", "role", "content", "tool_calls", "sequence_number", "sync_status", "remote_id",
                  "created_at", "updated_at"]
        read_only_fields = ["sequence_number", "created_at", "updated_at"]


class MessageSerializer(MessageAppendSerializer):
    run = ParentIdField(source="run_id")

    class Meta(MessageAppendSerializer.Meta):
        fields = ["id", "run", *MessageAppendSerializer.Meta.fields[1:]]


class ObservationSerializer(RalphModelSerializer):
    embedding = Base64BinaryField(required=False, allow_null=True, max_bytes=MAX_EMBEDDING_BYTES)
    importance = FiniteFloatField(min_value=0, max_value=1, required=False)

    class Meta:
        model = Observation
        fields = ["id", "session", "loop_run", "iteration", "type", "tool_name", "content", "content_compressed",
                  "embedding", "importance", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """A loop run or iteration must belong to the observation's session, whichever of the three
        this request changes (a PATCH of the session alone is checked against the stored links)."""
        session_id = attrs["session"].pk if "session" in attrs else getattr(self.instance, "session_id", None)
        for name in ("loop_run", "iteration"):
            if name in attrs:
                linked_session_id = attrs[name].session_id if attrs[name] is not None else None
            elif "session" in attrs and getattr(self.instance, f"{name}_id", None) is not None:
                linked_session_id = getattr(self.instance, name).session_id
            else:
                continue
            if linked_session_id is not None and session_id is not None and linked_session_id != session_id:
                raise serializers.ValidationError({name: [f"Belongs to session {linked_session_id}, "
                                                          f"not {session_id}."]})
        return attrs


class PatternSerializer(RalphModelSerializer):
    embedding = Base64BinaryField(read_only=True)

    class Meta:
        model = GlobalPattern
        fields = ["id", "pattern_type", "description", "embedding", "source_projects", "frequency",
                  "created_at", "updated_at"]
        read_only_fields = fields


class PatternRecordSerializer(RalphInputSerializer):
    pattern_type = ChoiceFieldNamingAllowed(choices=PatternType.choices)
    description = serializers.CharField(trim_whitespace=False)
    project = serializers.CharField(max_length=1000, required=False, allow_blank=True, default="")
    embedding = Base64BinaryField(required=False, allow_null=True, max_bytes=MAX_EMBEDDING_BYTES)


class SyncItemSerializer(RalphInputSerializer):
    entity = ChoiceFieldNamingAllowed(choices=SyncEntity.choices)
    id = ULIDSerializerField()
    remote_id = serializers.CharField(max_length=100)
    version = serializers.IntegerField(min_value=0, help_text="The row's `version` as sync/pending/ gave it: "
                                       "a row edited since is refused (409 stale_version) and stays pending.")


class MarkSyncedSerializer(RalphInputSerializer):
    items = SyncItemSerializer(many=True, min_length=1, max_length=MAX_BULK_MESSAGES)


class MarkSyncedItemResultSerializer(serializers.Serializer):
    entity = serializers.CharField()
    id = serializers.CharField()
    status = serializers.ChoiceField(choices=[200, 409], help_text="200 marked; 409 edited since (stays pending).")
    version = serializers.IntegerField(help_text="The row's current version.")
    code = serializers.CharField(required=False, help_text="stale_version, with status 409.")
    message = serializers.CharField(required=False)


class MarkSyncedResultSerializer(serializers.Serializer):
    marked = serializers.DictField(child=serializers.IntegerField())
    results = MarkSyncedItemResultSerializer(many=True)


class SyncMappingSerializer(RalphModelSerializer):
    class Meta:
        model = SyncMapping
        fields = ["id", "entity", "local_id", "remote_id", "synced_at"]


class SyncPendingRowSerializer(serializers.Serializer):
    id = serializers.CharField()
    sync_status = serializers.CharField()
    remote_id = serializers.CharField()
    updated_at = serializers.DateTimeField()
    version = serializers.IntegerField(help_text="Send it back to sync/mark-synced/ (chats: their version; runs "
                                       "and messages: the microsecond of their last change).")
    is_deleted = serializers.BooleanField(required=False)


class SyncPendingEntitySerializer(serializers.Serializer):
    count = serializers.IntegerField()
    results = SyncPendingRowSerializer(many=True)


class SyncPendingParamsSerializer(RalphInputSerializer):
    entity = ChoiceFieldNamingAllowed(choices=SyncEntity.choices, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=100)


class IncludeDeletedQuerySerializer(RalphInputSerializer):
    include_deleted = serializers.BooleanField(default=False, help_text="Show tombstones too.")


class ReopenQuerySerializer(RalphInputSerializer):
    reopen = serializers.BooleanField(
        default=False, help_text="Reopen a completed/failed/cancelled run to append (else 409 run_not_running).")


class SearchQueryField(serializers.CharField):
    """Any text at all is a query (terms.py: quoted phrases, OR, prefix*; everything else literal),
    answered with results or an empty page; only its length is a 400."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_blank=True, trim_whitespace=False, max_length=MAX_QUERY_CHARS, **kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)]

    def run_validation(self, data: Any = empty) -> SearchQuery:
        text = super().run_validation(data)
        try:
            return parse_query(text)
        except QueryTooLong as error:
            raise serializers.ValidationError(str(error)) from None


class SearchParamsSerializer(RalphInputSerializer):
    q = SearchQueryField(required=False, help_text=(
        "Words (English stems, any case; all must match), \"quoted phrases\", prefix* and OR between "
        "alternatives; Korean, Chinese and Japanese text matches as a substring. Anything else is literal text."))
    kind = ChoiceFieldNamingAllowed(choices=[], required=False, help_text=(
        "One kind of row: message, observation (memory), event (the ledger's) or report (a task attempt's). "
        "Without it, every kind your permissions let you view."))
    session = ReferenceFilterField(model="sessions_app.Session", required=False, help_text="Its id or key.")
    chat = ULIDSerializerField(required=False)
    role = ChoiceFieldNamingAllowed(choices=MessageRole.choices, required=False)
    type = ChoiceFieldNamingAllowed(choices=ObservationType.choices, required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    page = serializers.IntegerField(min_value=1, default=1)
    page_size = serializers.IntegerField(min_value=1, max_value=100, default=20)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The kinds the apps registered when they loaded (ralphsite.core.search.sources).
        self.fields["kind"].choices = search_kinds()


class SearchHitSerializer(serializers.Serializer):
    kind = serializers.CharField()
    id = serializers.CharField()
    chat = serializers.CharField(allow_null=True)
    run = serializers.CharField(allow_null=True)
    session = serializers.CharField(allow_null=True)
    subtype = serializers.CharField(help_text=(
        "The message's role, the observation's type, the event's type or the report's attempt status."))
    created_at = serializers.DateTimeField()
    rank = serializers.FloatField(help_text="Lower is better.")
    snippet = serializers.CharField(help_text=(
        "HTML safe to insert into a page: the matched text escaped, <mark>…</mark> around the matches, "
        "no other markup."))


@extend_schema_serializer(many=False)  # one page, even as the answer of a `list`
class SearchPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = SearchHitSerializer(many=True)
