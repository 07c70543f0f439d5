import django_filters
from django.db.models import QuerySet

from conversations_app.models import (
    Chat,
    GlobalPattern,
    Message,
    MessageRole,
    Observation,
    ObservationType,
    PatternType,
    Run,
    RunStatus,
    SyncEntity,
    SyncMapping,
    SyncStatus,
)
from ralphsite.core.api.filters import (
    BooleanFilter,
    FloatFilter,
    IntegerFilter,
    MultipleChoiceFilter,
    NonBlankKeyFilter,
    RalphFilterSet,
)


def parent_filter(name: str) -> django_filters.CharFilter:
    """Filter on a parent's id column: no query to validate it (an unknown id lists nothing)."""
    return django_filters.CharFilter(field_name=f"{name}_id")


class ConversationFilterSet(RalphFilterSet):
    """Chats, runs, messages: sync status, and what a tombstoned chat contains hidden unless
    `?include_deleted=true`."""

    include_deleted = BooleanFilter(method="filter_include_deleted")
    sync_status = MultipleChoiceFilter(choices=SyncStatus.choices)
    remote_id = NonBlankKeyFilter(help_text="The remote store's id of the row (the sync mapping).")
    deleted_lookup: str

    def filter_include_deleted(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        return queryset  # applied in filter_queryset, which also covers the parameter's absence

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        queryset = super().filter_queryset(queryset)
        if not self.form.cleaned_data.get("include_deleted"):
            queryset = queryset.filter(**{self.deleted_lookup: False})
        # Detail lookups join the parents to tell tombstones apart; list rows only need their ids.
        return queryset.select_related(None)


class ChatFilterSet(ConversationFilterSet):
    deleted_lookup = "is_deleted"
    worktree = django_filters.CharFilter(field_name="worktree_id")
    tag = django_filters.CharFilter(field_name="tag_rows__tag", method="filter_tag")
    session = parent_filter("session")
    updated_after = django_filters.IsoDateTimeFilter(field_name="updated_at", lookup_expr="gte")
    updated_before = django_filters.IsoDateTimeFilter(field_name="updated_at", lookup_expr="lt")

    class Meta:
        model = Chat
        fields = ["worktree", "tag", "session", "sync_status", "remote_id"]

    def filter_tag(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(**{name: value})  # one ChatTag row per (chat, tag): no duplicate chats


class RunFilterSet(ConversationFilterSet):
    deleted_lookup = "chat__is_deleted"
    chat = parent_filter("chat")
    status = MultipleChoiceFilter(choices=RunStatus.choices)

    class Meta:
        model = Run
        fields = ["chat", "status", "sync_status", "remote_id"]


class MessageFilterSet(ConversationFilterSet):
    deleted_lookup = "run__chat__is_deleted"
    run = parent_filter("run")
    role = MultipleChoiceFilter(choices=MessageRole.choices)

    class Meta:
        model = Message
        fields = ["run", "role", "sync_status", "remote_id"]


class ObservationFilterSet(RalphFilterSet):
    session = parent_filter("session")
    loop_run = parent_filter("loop_run")
    iteration = parent_filter("iteration")
    type = MultipleChoiceFilter(choices=ObservationType.choices)
    tool = django_filters.CharFilter(field_name="tool_name")
    importance_min = FloatFilter(field_name="importance", lookup_expr="gte")
    importance_max = FloatFilter(field_name="importance", lookup_expr="lte")
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = Observation
        fields = ["session", "type", "tool", "loop_run", "iteration"]


class PatternFilterSet(RalphFilterSet):
    pattern_type = MultipleChoiceFilter(choices=PatternType.choices)
    frequency_min = IntegerFilter(field_name="frequency", lookup_expr="gte")

    class Meta:
        model = GlobalPattern
        fields = ["pattern_type"]


class SyncMappingFilterSet(RalphFilterSet):
    """The local ↔ remote id mapping (seed 002), by entity and either id."""

    entity = MultipleChoiceFilter(choices=SyncEntity.choices)
    local_id = NonBlankKeyFilter()
    remote_id = NonBlankKeyFilter()

    class Meta:
        model = SyncMapping
        fields = ["entity", "local_id", "remote_id"]
