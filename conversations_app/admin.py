import json
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from conversations_app import selectors, services
from conversations_app.models import Chat, ChatTag, GlobalPattern, Message, Observation, Run, SyncMapping
from ralphsite.core.errors import Conflict
from ralphsite.core.service_admin import (
    LongTextInline,
    RalphModelAdmin,
    ServiceModelAdmin,
    SessionFilter,
    column_ago,
    column_session,
    column_status,
    column_text,
)
from ralphsite.core.writes import writes_for
from sessions_app.admin.console import ConsolePanel, register_console_panel
from sessions_app.models import Session


class TagListFilter(admin.SimpleListFilter):
    title = "tag"
    parameter_name = "tag"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        tags = ChatTag.objects.values_list("tag", flat=True).distinct().order_by("tag")[:50]
        return [(tag, tag) for tag in tags]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Chat]) -> QuerySet[Chat]:
        return queryset.filter(tag_rows__tag=self.value()) if self.value() else queryset


class RunInline(LongTextInline):
    model = Run
    extra = 0
    can_delete = False
    show_change_link = True
    fields = ["sequence_number", "status", "started_at", "completed_at", "tokens_used", "message_count",
              "sync_status"]
    readonly_fields = fields
    ordering = ["sequence_number"]

    def has_add_permission(self, request: HttpRequest, obj: Chat | None = None) -> bool:
        return False


TRANSCRIPT_PAGE_SIZE = 200


@dataclass(frozen=True)
class ToolCallView:
    name: str
    status: str
    arguments: str
    result: str


def tool_call_views(tool_calls: Any) -> list[ToolCallView]:
    """Seed 002's ToolCall (Id, Name, Arguments, Result, Status) for reading; agents send the keys in
    either case, and anything that is not a list of objects is shown as it is."""
    if not isinstance(tool_calls, list):
        tool_calls = [] if tool_calls is None else [{"arguments": tool_calls}]
    views = []
    for call in tool_calls:
        fields = {str(key).lower(): value for key, value in call.items()} if isinstance(call, dict) else {
            "arguments": call}
        arguments = fields.get("arguments")
        views.append(ToolCallView(
            name=str(fields.get("name") or "tool call"), status=str(fields.get("status") or ""),
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments, indent=2, ensure_ascii=False),
            result="" if fields.get("result") is None else str(fields["result"])))
    return views


def transcript_link(chat_id: str, run_number: int | None = None) -> str:
    url = reverse("admin:conversations_app_chat_transcript", args=[chat_id])
    return f"{url}?run={run_number}" if run_number is not None else url


def _soft_delete(queryset: QuerySet[Chat]) -> int:
    chats = [chat for chat in queryset if not chat.is_deleted]
    for chat in chats:
        writes_for(Chat).delete(chat)  # a tombstone
    return len(chats)


class ChatAdminForm(forms.ModelForm):
    """Carries the version the person opened, so a save over someone else's change (an agent's, through
    the API) is refused instead of silently overwriting it, as the API's If-Match does."""

    opened_version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Chat
        fields = ["title", "tags", "worktree_id", "session", "sync_status", "remote_id"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["opened_version"].initial = self.instance.version

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        opened = cleaned.get("opened_version")
        if self.instance.pk and opened is not None:
            current = Chat.objects.filter(pk=self.instance.pk).values_list("version", flat=True).first()
            if current is not None and current != opened:
                raise forms.ValidationError(
                    f"This chat changed while you edited it (version {opened} → {current}). "
                    "Reload the page to see the change, then edit again.", code="stale_version")
        return cleaned


@admin.register(Chat)
class ChatAdmin(ServiceModelAdmin):
    form = ChatAdminForm
    list_display = ["title", "session", "run_count", column_ago("updated_at", description="changed"), "tag_list",
                    "worktree_id", column_status("sync_status"), "version", "is_deleted", "id"]
    list_filter = [SessionFilter, "is_deleted", "sync_status", TagListFilter]
    search_fields = ["id", "title", "worktree_id", "remote_id", "session__id", "session__key"]
    date_hierarchy = "created_at"
    list_select_related = ["session"]
    raw_id_fields = ["session"]
    readonly_fields = ["id", "version", "run_count", "is_deleted", "deleted_at", "created_at", "updated_at",
                       "transcript"]
    fields = ["id", "title", "tags", "worktree_id", "session", "sync_status", "remote_id", "version", "run_count",
              "is_deleted", "deleted_at", "created_at", "updated_at", "transcript", "opened_version"]
    inlines = [RunInline]
    actions = ["soft_delete_chats", "restore_chats", "mark_synced"]

    @admin.display(description="tags")
    def tag_list(self, chat: Chat) -> str:
        return ", ".join(chat.tags or []) or "—"

    @admin.display(description="Transcript")
    def transcript(self, chat: Chat) -> str:
        if not chat.pk:
            return "—"
        return format_html('<a href="{}">Read the conversation</a> ({} run{})', transcript_link(chat.pk),
                           chat.run_count, "" if chat.run_count == 1 else "s")

    def get_urls(self) -> list:
        transcript = self.record_view(self.transcript_view)
        return [path("<path:object_id>/transcript/", transcript, name="conversations_app_chat_transcript"),
                *super().get_urls()]

    def transcript_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """A chat read as a conversation, one run per page (`?run=<sequence number>`, the latest by default)
        and, in a long run, `TRANSCRIPT_PAGE_SIZE` messages at a time (`&after=<message sequence number>`)."""
        chat = self.get_object(request, unquote(object_id))
        if chat is None:
            raise Http404(f"No chat {object_id}.")
        if not self.has_view_or_change_permission(request, chat):
            raise PermissionDenied
        runs = selectors.chat_runs(chat_id=chat.pk)
        wanted, after = request.GET.get("run", ""), request.GET.get("after", "0")
        if not (wanted.isdigit() or wanted == "") or not after.isdigit():
            raise Http404("run and after are sequence numbers.")
        run = next((run for run in runs if str(run.sequence_number) == wanted), None) if wanted else (
            runs[-1] if runs else None)
        if wanted and run is None:
            raise Http404(f"Chat {chat.pk} has no run {wanted}.")
        usage = selectors.runs_usage(runs)  # tokens and cost per run, from the one book of usage
        messages_shown, more = (selectors.run_messages_page(run_id=run.pk, after_sequence=int(after),
                                                            limit=TRANSCRIPT_PAGE_SIZE) if run else ([], False))
        context = {
            **self.admin_site.each_context(request),
            "title": chat.title,
            "opts": self.model._meta,
            "original": chat,
            "is_nav_sidebar_enabled": False,  # a conversation reads better at full width
            "runs": [{"run": each, "url": transcript_link(chat.pk, each.sequence_number), "usage": usage[each.pk]}
                     for each in runs],
            "run": run,
            "usage": usage[run.pk] if run else None,
            "run_url": reverse("admin:conversations_app_run_change", args=[run.pk]) if run else "",
            "messages_shown": [{"message": message, "tool_calls": tool_call_views(message.tool_calls)}
                               for message in messages_shown],
            "continued": int(after) > 0,
            "run_start_url": transcript_link(chat.pk, run.sequence_number) if run else "",
            "next_url": (f"{transcript_link(chat.pk, run.sequence_number)}&after={messages_shown[-1].sequence_number}"
                         if more else ""),
        }
        return TemplateResponse(request, "admin/conversations_app/transcript.html", context)

    @admin.action(description="Soft-delete selected chats")
    def soft_delete_chats(self, request: HttpRequest, queryset: QuerySet[Chat]) -> None:
        self.message_user(request, f"Soft-deleted {_soft_delete(queryset)} chat(s).", messages.SUCCESS)

    @admin.action(description="Restore selected chats")
    def restore_chats(self, request: HttpRequest, queryset: QuerySet[Chat]) -> None:
        ids = list(queryset.filter(is_deleted=True).values_list("id", flat=True))
        for chat_id in ids:
            services.chat_restore(chat_id=chat_id)
        self.message_user(request, f"Restored {len(ids)} chat(s).", messages.SUCCESS)

    @admin.action(description="Mark selected chats synced (keeps their remote id)")
    def mark_synced(self, request: HttpRequest, queryset: QuerySet[Chat]) -> None:
        items = [{"entity": "chat", "id": chat_id, "remote_id": remote_id or chat_id, "version": version}
                 for chat_id, remote_id, version in queryset.values_list("id", "remote_id", "version")]
        marked = services.sync_mark_synced(items=items)["marked"].get("chat", 0) if items else 0
        self.message_user(request, f"Marked {marked} chat(s) synced.", messages.SUCCESS)

    def save_model(self, request: HttpRequest, obj: Chat, form: Any, change: bool) -> None:
        """A change is made to the version the form was opened on (a chat changed since is refused)."""
        if not change:
            super().save_model(request, obj, form, change)
            return
        data = {**self._model_data(form, form.changed_data), "version": form.cleaned_data.get("opened_version")}
        try:
            self.writes.update(Chat.objects.get(pk=obj.pk), data)
        except Conflict as error:  # changed between the form's check and this save
            self.message_user(request, f"Not saved: {error.message}", messages.ERROR)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[list[str], dict[str, int], set,
                                                                             list]:
        """Deleting here tombstones the chats (restorable; runs and messages stay until retention), so
        the confirmation lists only them and needs no delete permission on runs or messages."""
        chats = list(objs)
        return ([f"{chat} (soft delete: restorable)" for chat in chats],
                {str(Chat._meta.verbose_name_plural): len(chats)}, set(), [])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Chat]) -> None:
        _soft_delete(queryset)


@admin.register(Run)
class RunAdmin(ServiceModelAdmin):
    list_display = ["chat", column_status(), column_session("chat__session"),
                    column_ago("started_at", description="started"), "sequence_number", "message_count",
                    "tokens_used", column_status("sync_status"), "id"]
    list_filter = [SessionFilter.on("chat__session_id"), "status", "sync_status"]
    search_fields = ["id", "chat__id", "chat__title", "remote_id"]
    list_select_related = ["chat__session"]
    raw_id_fields = ["chat"]
    readonly_fields = ["id", "chat", "sequence_number", "message_count", "created_at", "updated_at", "transcript"]

    @admin.display(description="Transcript")
    def transcript(self, run: Run) -> str:
        return format_html('<a href="{}">Read this run</a> ({} messages)',
                           transcript_link(run.chat_id, run.sequence_number), run.message_count) if run.pk else "—"

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """Titled by the chat's title, which is what a person knows a conversation by."""
        run = self.get_object(request, unquote(object_id))
        title = {"title": f"{run.chat.title} · run {run.sequence_number}"} if run else {}
        return super().change_view(request, object_id, form_url, {**title, **(extra_context or {})})

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs get their sequence number from the API's run_create

    def has_delete_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        return False  # runs go with their chat (soft delete, then retention)


@admin.register(Message)
class MessageAdmin(ServiceModelAdmin):
    list_display = [column_status("role"), column_text("content", length=110), "chat_title", "sequence_number",
                    column_session("run__chat__session"), column_ago("created_at", description="sent"), "id"]
    list_display_links = ["role_badge"]
    list_filter = [SessionFilter.on("run__chat__session_id"), "role", "sync_status"]
    search_fields = ["=id", "=run__id", "content"]
    ordering = ["-id"]  # ULIDs sort by time: newest first on the primary key's index
    list_select_related = ["run__chat__session"]
    raw_id_fields = ["run"]
    readonly_fields = ["id", "run", "sequence_number", "created_at", "updated_at"]

    @admin.display(description="chat · run")
    def chat_title(self, message: Message) -> str:
        return f"{message.run.chat.title[:40]} · run {message.run.sequence_number}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # messages are appended through the API (sequence numbers)

    def has_delete_permission(self, request: HttpRequest, obj: Message | None = None) -> bool:
        return False


@admin.register(Observation)
class ObservationAdmin(ServiceModelAdmin):
    list_display = ["type", column_text("content", length=90), "tool_name", "importance", "session",
                    column_ago("created_at", description="observed"), "id"]
    list_filter = ["type", "tool_name"]
    search_fields = ["id", "content", "tool_name", "session__id"]
    date_hierarchy = "created_at"
    list_select_related = ["session"]
    raw_id_fields = ["session", "loop_run", "iteration"]
    readonly_fields = ["id", "created_at", "updated_at"]
    exclude = ["embedding"]


@admin.register(GlobalPattern)
class GlobalPatternAdmin(RalphModelAdmin):
    list_display = ["description_short", "pattern_type", "frequency", "projects", "updated_at"]
    list_filter = ["pattern_type"]
    search_fields = ["description"]
    ordering = ["-frequency", "-updated_at"]
    date_hierarchy = "updated_at"
    readonly_fields = ["id", "pattern_type", "description", "source_projects", "frequency", "created_at",
                       "updated_at"]
    exclude = ["embedding", "fingerprint"]

    @admin.display(description="Description")
    def description_short(self, pattern: GlobalPattern) -> str:
        return pattern.description[:100]

    @admin.display(description="Projects")
    def projects(self, pattern: GlobalPattern) -> str:
        return ", ".join(pattern.source_projects)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # recorded through the API's `record` (frequency, projects)


@admin.register(SyncMapping)
class SyncMappingAdmin(RalphModelAdmin):
    """Seed 002's local ↔ remote id mapping, for people correlating identities; written only by sync."""

    list_display = ["entity", "local_id", "remote_id", "synced_at"]
    list_filter = ["entity"]
    search_fields = ["local_id", "remote_id"]
    readonly_fields = ["entity", "local_id", "remote_id", "synced_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: SyncMapping | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: SyncMapping | None = None) -> bool:
        return False


# -- the session console: the session's conversations ------------------------------------------

CHATS_SHOWN = 10


def _chats_panel(request: HttpRequest, session: Session) -> dict[str, Any] | None:
    if not request.user.has_perm("conversations_app.view_chat"):
        return None
    chats = list(Chat.objects.filter(session=session, is_deleted=False).order_by("-updated_at")[:CHATS_SHOWN])
    return {"chats": [{"chat": chat, "url": transcript_link(chat.pk)} for chat in chats],
            "all_url": reverse("admin:conversations_app_chat_changelist") + f"?session={session.pk}"}


# The latest messages, so a loop's conversation is followed as it grows (a Claude Code loop's transcript).
TRANSCRIPT_SHOWN = 12


def _transcript_panel(request: HttpRequest, session: Session) -> dict[str, Any] | None:
    if not request.user.has_perm("conversations_app.view_message"):
        return None
    run, latest = selectors.session_latest_messages(session_id=session.pk, limit=TRANSCRIPT_SHOWN)
    return {"shown": TRANSCRIPT_SHOWN, "run": run,
            "messages": [{"message": message, "tool_calls": tool_call_views(message.tool_calls)} for message in latest],
            "url": transcript_link(run.chat_id, run.sequence_number) if run else ""}


register_console_panel(ConsolePanel("conversations", "admin/conversations_app/console_chats.html", _chats_panel,
                                    column="side", order=50))
register_console_panel(ConsolePanel("transcript", "admin/conversations_app/console_transcript.html",
                                    _transcript_panel, column="main", order=20))
