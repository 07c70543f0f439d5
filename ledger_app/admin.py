import contextlib
import re
from datetime import date, datetime
from datetime import time as dt_time
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from ledger_app import selectors, services
from ledger_app.models import (
    Baseline,
    Checkpoint,
    CheckpointRestore,
    DeadLetter,
    DeadLetterStatus,
    ErrorLog,
    GateResult,
    Issue,
    LedgerEvent,
    ModelPrice,
    RetentionRun,
    Rollback,
    TokenUsage,
    UsageDay,
)
from ralphsite.core.errors import Conflict
from ralphsite.core.fields import BIGINT_MAX
from ralphsite.core.service_admin import (
    DateRangeFilter,
    LongTextInline,
    OperatorAction,
    RalphModelAdmin,
    ServiceModelAdmin,
    SessionFilter,
    column_ago,
    column_session,
    column_status,
    column_text,
    session_label,
    text_shown,
)
from ralphsite.core.ulid import ulid_normalize
from sessions_app.admin.base import HISTORY_URLS
from sessions_app.admin.console import ConsolePanel, register_console_panel
from sessions_app.models import Session, Task


class ReadOnlyAdmin(RalphModelAdmin):
    """Facts nobody edits by hand: browse and filter only."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RecentEventValuesFilter(admin.SimpleListFilter):
    """The non-blank values of one column among the latest events. A DISTINCT over the whole ledger
    would read all of it, and Django's default filter offered blank values as invisible links (the
    audit trail's events carry no model, so "By model" looked empty). Any value still works when
    typed as `?<column>=<value>`; the selected one is always offered."""

    columns = ("type", "category", "model")
    latest = 2000

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        values = self.recent_values(request)[self.parameter_name] | ({self.value()} if self.value() else set())
        return [(value, value) for value in sorted(values)]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(**{self.parameter_name: self.value()}) if self.value() else queryset

    @classmethod
    def recent_values(cls, request: HttpRequest) -> dict[str, set[str]]:
        """One query per page for all three filters (cached on the request)."""
        cached = getattr(request, "_ledger_recent_values", None)
        if cached is None:
            rows = LedgerEvent.objects.order_by("-id").values_list(*cls.columns)[:cls.latest]
            cached = {column: set() for column in cls.columns}
            for row in rows:
                for column, value in zip(cls.columns, row, strict=True):
                    if value:
                        cached[column].add(value)
            request._ledger_recent_values = cached
        return cached

    @classmethod
    def on(cls, column: str) -> type["RecentEventValuesFilter"]:
        return type(f"Recent{column.title()}Filter", (cls,), {"title": column, "parameter_name": column})


_SEARCHABLE_ID = re.compile(r"[0-9]{1,19}")


@admin.register(LedgerEvent)
class LedgerEventAdmin(ReadOnlyAdmin):
    list_display = [column_ago("timestamp", description="when"), "type", column_text("message", length=90),
                    column_session(), "task_key", "agent", "cost_usd", "model", "tokens_total", "id"]
    list_display_links = ["type"]
    list_filter = [SessionFilter, RecentEventValuesFilter.on("type"), RecentEventValuesFilter.on("category"),
                   RecentEventValuesFilter.on("model"), ("timestamp", admin.DateFieldListFilter)]
    list_select_related = ["session"]
    ordering = ["-id"]
    search_fields = ["=id"]  # shows the search box; get_search_results below does the (index-backed) search
    search_help_text = "An event id, a session id or key, a task key or an agent name (exact)."
    fields = ["id", "session", "timestamp", "type", "category", "task_key", "agent", "model", "iteration", "phase",
              "duration_ms", "tokens_in", "tokens_out", "tokens_total", "cost_usd", "is_estimated", "message",
              "data", "meta", "idempotency_key", "prev_hash", "hash"]
    readonly_fields = fields

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """Filtered to one session (its History), the page says whose events these are."""
        session = Session.objects.filter(pk=request.GET.get("session", "")).values("pk", "key").first()
        if session:
            task = request.GET.get("task_key")
            whose = f"session {session_label(session['pk'], session['key'])}" + (f", task {task}" if task else "")
            extra_context = {"title": f"History of {whose}: its ledger events, newest first", **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def get_search_results(self, request: HttpRequest, queryset: QuerySet,
                           search_term: str) -> tuple[QuerySet, bool]:
        """Exact matches on indexed columns only (a `LIKE '%…%'` over the ledger would read all of it);
        a session key is resolved to its id first so every branch of the OR can use an index."""
        term = search_term.strip()
        if not term:
            return queryset, False
        match = Q(task_key=term) | Q(agent=term)
        if _SEARCHABLE_ID.fullmatch(term) and int(term) <= BIGINT_MAX:
            match |= Q(pk=int(term))
        session_ids = list(Session.objects.filter(key=term).values_list("pk", flat=True)[:1])
        with contextlib.suppress(ValueError):
            session_ids.append(ulid_normalize(term))
        if session_ids:
            match |= Q(session_id__in=session_ids)
        return queryset.filter(match), False


@admin.register(Issue)
class IssueAdmin(ServiceModelAdmin):
    list_display = ["signature", "kind", "count", "task_key", "session", "file", "line",
                    column_ago("last_seen_at", description="last seen")]
    list_filter = ["kind", SessionFilter]
    list_select_related = ["session"]
    search_fields = ["signature", "message", "file", "task_key"]
    date_hierarchy = "last_seen_at"
    ordering = ["-count", "-last_seen_at"]
    raw_id_fields = ["session"]
    readonly_fields = ["id", "count", "first_seen_at", "last_seen_at", "created_at", "updated_at"]


class CheckpointRestoreInline(LongTextInline):
    model = CheckpointRestore
    extra = 0
    fields = ["restored_at", "agent", "note"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Checkpoint)
class CheckpointAdmin(ServiceModelAdmin):
    list_display = ["key", "session", "task_key", "sprint_key", "git_ref", "git_commit", "can_restore", "created_at"]
    list_filter = ["can_restore", SessionFilter]
    list_select_related = ["session"]
    search_fields = ["key", "task_key", "sprint_key", "git_ref", "git_commit", "summary", "description"]
    date_hierarchy = "created_at"
    raw_id_fields = ["session"]
    readonly_fields = ["id", "created_at", "updated_at"]
    inlines = [CheckpointRestoreInline]


@admin.register(CheckpointRestore)
class CheckpointRestoreAdmin(ReadOnlyAdmin):
    list_display = ["checkpoint", "restored_at", "agent", "note"]
    list_select_related = ["checkpoint"]
    search_fields = ["checkpoint__key", "agent", "note"]
    date_hierarchy = "restored_at"


@admin.register(Rollback)
class RollbackAdmin(ServiceModelAdmin):
    list_display = ["rolled_back_at", "rollback_type", "target_commit", "target_tag", "trigger_type", "check_type",
                    "session"]
    list_filter = ["rollback_type", "trigger_type", "check_type"]
    list_select_related = ["session"]
    search_fields = ["target_commit", "target_tag", "from_commit", "reason", "backup_branch"]
    date_hierarchy = "rolled_back_at"
    raw_id_fields = ["session"]
    readonly_fields = ["id", "created_at", "updated_at"]


@admin.register(Baseline)
class BaselineAdmin(ServiceModelAdmin):
    list_display = ["tag_name", "milestone", "commit_hash", "branch", "files_changed", "created_at"]
    list_filter = ["milestone"]
    search_fields = ["tag_name", "commit_hash", "branch", "description"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", "created_at", "updated_at"]


@admin.register(GateResult)
class GateResultAdmin(ServiceModelAdmin):
    list_display = ["timestamp", "gate", "passed", "iteration", "error_count", "warning_count", "coverage_percent",
                    "session"]
    list_filter = ["gate", "passed", SessionFilter]
    list_select_related = ["session"]
    search_fields = ["=session__id"]
    date_hierarchy = "timestamp"
    raw_id_fields = ["session"]
    readonly_fields = ["id", "created_at", "updated_at"]


class UsageModelFilter(admin.SimpleListFilter):
    """The models that have calls, listed from the usage rollup: Django's own field filter would read
    every usage row's model (SELECT DISTINCT over all calls) on each page."""

    title = "model"
    parameter_name = "model"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        models = selectors.usage_day_list().order_by("model").values_list("model", flat=True).distinct()
        return [(model, model) for model in models]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(model=self.value()) if self.value() else queryset


# The cost view's filters that the usage rollup can answer: the session, the model, and days (the date
# range filter's and the date filter's bounds, which fall on UTC midnights).
_ROLLUP_DAY_BOUNDS = {"recorded_at__since": "day__gte", "recorded_at__until": "day__lte",
                      "recorded_at__gte": "day__gte", "recorded_at__lt": "day__lt"}


def _daily_rollup(changelist: Any) -> QuerySet[UsageDay] | None:
    """The rollup rows selecting what the changelist's filters select, or None when a filter or a
    search needs the usage rows themselves."""
    if changelist.query:
        return None
    rows = selectors.usage_day_list()
    for name, values in changelist.get_filters_params().items():
        value = values[-1] if isinstance(values, list) else values
        if name == UsageModelFilter.parameter_name:
            rows = rows.filter(model=value)
            continue
        if name == SessionFilter.parameter_name:
            rows = rows.filter(session=value)
            continue
        day = _midnight_day(value) if name in _ROLLUP_DAY_BOUNDS else None
        if day is None:
            return None
        rows = rows.filter(**{_ROLLUP_DAY_BOUNDS[name]: day})
    return rows


def _midnight_day(value: str) -> date | None:
    with contextlib.suppress(ValueError):
        moment = datetime.fromisoformat(value)
        if moment.time() == dt_time.min:
            return moment.date()
    return None


@admin.register(TokenUsage)
class TokenUsageAdmin(ReadOnlyAdmin):
    """Usage rows feed the session totals, so they are recorded through the API only. The list
    page is the cost view: totals by model, by agent and by day for whatever the filters select
    (a session, a date range, a model…), from the same rows and rounding as the API's cost stats."""

    list_display = [column_ago("recorded_at", description="when"), "model", "agent", "cost_usd", "session",
                    "input_tokens", "output_tokens", "cached_read_tokens", "cached_write_tokens", "reasoning_tokens",
                    "is_estimated", "operation", "task_key", "id"]
    list_display_links = ["recorded_at_ago"]
    # No filter lists every call's values (the operation is searched for instead): the page reads
    # the usage rollup for its totals and never scans the calls.
    list_filter = [SessionFilter, ("recorded_at", DateRangeFilter), ("recorded_at", admin.DateFieldListFilter),
                   UsageModelFilter, "is_estimated"]
    list_select_related = ["session"]
    search_fields = ["model", "agent", "operation", "task_key", "sprint_key"]
    days_shown = 31

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        response = super().changelist_view(request, extra_context)
        context = getattr(response, "context_data", None)
        if context and "cl" in context:
            selected = _daily_rollup(context["cl"])
            if selected is None:  # a filter or search the rollup has no column for (is_estimated, an operation…)
                selected = context["cl"].queryset
            context["usage_by_model"] = selectors.token_usage_by(usage=selected, field="model")
            context["usage_by_agent"] = selectors.token_usage_by(usage=selected, field="agent")
            context["usage_by_day"] = selectors.token_usage_by_day(usage=selected, days=self.days_shown)
        return response


@admin.register(ModelPrice)
class ModelPriceAdmin(ServiceModelAdmin):
    list_display = ["model", "valid_from", "input_per_mtok", "output_per_mtok", "cached_read_per_mtok",
                    "cached_write_per_mtok", "reasoning_per_mtok"]
    list_filter = ["model"]
    search_fields = ["model"]
    date_hierarchy = "valid_from"
    readonly_fields = ["id", "created_at", "updated_at"]


@admin.register(ErrorLog)
class ErrorLogAdmin(ServiceModelAdmin):
    list_display = [column_ago("logged_at", description="when"), "error_type", column_text("error_message", length=90),
                    "operation", "recovery_success", "circuit_opened", "retry_count", "session", "id"]
    list_display_links = ["logged_at_ago"]
    list_filter = [SessionFilter, "error_type", "recovery_success", "circuit_opened",
                   ("logged_at", admin.DateFieldListFilter)]
    list_select_related = ["session"]
    search_fields = ["error_message", "error_pattern", "operation", "task_key"]
    raw_id_fields = ["session"]
    readonly_fields = ["id"]


def _dead_letter_retry(request: HttpRequest, item: DeadLetter, inputs: dict[str, str]) -> str:
    services.dead_letter_retry(dead_letter_id=item.pk)
    return f"Dead letter {item.pk} taken for a retry."


def _dead_letter_discard(request: HttpRequest, item: DeadLetter, inputs: dict[str, str]) -> str:
    services.dead_letter_discard(dead_letter_id=item.pk)
    return f"Dead letter {item.pk} discarded: it will not be retried."


def _is_pending(item: DeadLetter) -> bool:
    return item.status == DeadLetterStatus.PENDING


@admin.register(DeadLetter)
class DeadLetterAdmin(ServiceModelAdmin):
    list_display = ["operation_type", column_status(), column_text("error_message", length=90, description="error"),
                    "task_key", "session", column_ago("created_at", description="failed"),
                    column_ago("retry_after", description="due"), "attempt_count", "id"]
    list_display_links = ["operation_type"]
    list_filter = [SessionFilter, "status", "operation_type"]
    list_select_related = ["session"]
    search_fields = ["operation_type", "error_message", "task_key"]
    date_hierarchy = "created_at"
    raw_id_fields = ["session"]
    readonly_fields = ["id", "status", "attempt_count", "retried_at", "params_pretty"]
    actions = ["retry_selected", "discard_selected"]
    operator_actions = (
        OperatorAction("retry", "Retry now", _dead_letter_retry, style="primary", shown=_is_pending,
                       help="Take it for a retry (pending and due → retried), as dead-letters/{id}/retry/ does."),
        OperatorAction("discard", "Discard", _dead_letter_discard, style="danger", shown=_is_pending,
                       help="Give up on it (pending → failed), as dead-letters/{id}/discard/ does."),
    )

    def _each(self, request: HttpRequest, queryset: QuerySet[DeadLetter], verb: Any, done: str) -> None:
        taken = 0
        ids = list(queryset.values_list("id", flat=True))
        for item_id in ids:
            try:
                verb(dead_letter_id=item_id)
                taken += 1
            except Conflict:
                pass  # not pending (or not due): left as it is
        self.message_user(request, f"{taken} of {len(ids)} selected items {done}.")

    @admin.action(description="Take the selected due items for a retry")
    def retry_selected(self, request: HttpRequest, queryset: QuerySet[DeadLetter]) -> None:
        self._each(request, queryset, services.dead_letter_retry, "taken for a retry")

    @admin.action(description="Discard the selected pending items")
    def discard_selected(self, request: HttpRequest, queryset: QuerySet[DeadLetter]) -> None:
        self._each(request, queryset, services.dead_letter_discard, "discarded")

    @admin.display(description="operation params")
    def params_pretty(self, obj: DeadLetter) -> str:
        return text_shown(obj, DeadLetter._meta.get_field("operation_params"), self.get_empty_value_display())


@admin.register(RetentionRun)
class RetentionRunAdmin(ReadOnlyAdmin):
    list_display = ["ran_at", "older_than_days", "cutoff", "sessions_removed"]
    date_hierarchy = "ran_at"
    fields = ["ran_at", "older_than_days", "cutoff", "sessions_removed", "rows_removed", "session_ids"]
    readonly_fields = fields


# -- the session console: the live activity feed, costs, History -------------------------------

FEED_INITIAL = 40
# Event types drawn as failures in the feed.
FAILURE_TYPES = frozenset({"task_failed", "agent_failed", "gate_failed", "error_occurred", "abandonment_detected"})


def feed_row(event: LedgerEvent) -> dict[str, Any]:
    failed = event.type in FAILURE_TYPES or (event.type == "task_status_changed" and event.data.get("to") == "failed")
    return {"id": event.id, "at": event.timestamp.isoformat(), "type": event.type, "category": event.category,
            "task_key": event.task_key, "agent": event.agent, "model": event.model, "message": event.message[:500],
            "tokens": event.tokens_total, "cost_usd": str(event.cost_usd) if event.cost_usd else "",
            "failed": failed, "url": reverse("admin:ledger_app_ledgerevent_change", args=[event.id])}


def _feed_panel(request: HttpRequest, session: Session) -> dict[str, Any] | None:
    if not request.user.has_perm("ledger_app.view_ledgerevent"):
        return None
    events = list(LedgerEvent.objects.filter(session=session).order_by("-id")[:FEED_INITIAL])
    return {"events": [feed_row(event) for event in events],
            "all_url": reverse("admin:ledger_app_ledgerevent_changelist") + f"?session={session.pk}"}


def _cost_panel(request: HttpRequest, session: Session) -> dict[str, Any] | None:
    if not request.user.has_perm("ledger_app.view_tokenusage"):
        return None
    usage = selectors.usage_day_list().filter(session=session)
    return {"by_model": selectors.token_usage_by(usage=usage, field="model"),
            "usage_url": reverse("admin:ledger_app_tokenusage_changelist") + f"?session={session.pk}"}


register_console_panel(ConsolePanel("feed", "admin/ledger_app/console_feed.html", _feed_panel, column="main",
                                    order=10))
register_console_panel(ConsolePanel("cost", "admin/ledger_app/console_cost.html", _cost_panel, column="side",
                                    order=40))


def _events_url(**filters: str) -> str:
    return f"{reverse('admin:ledger_app_ledgerevent_changelist')}?{urlencode(filters)}"


HISTORY_URLS[Session] = lambda session: _events_url(session=session.pk)
HISTORY_URLS[Task] = lambda task: _events_url(session=task.session_id or "", task_key=task.key)
