"""The session's pages: its console, the raw edit form, its task graph and its history."""

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from ralphsite.core.service_admin import ReadOnlyPageAdmin, column_ago, column_status, column_text, session_label
from sessions_app import selectors
from sessions_app.admin.base import LedgerHistoryMixin
from sessions_app.admin.console import (
    SESSION_ACTIONS,
    console_etag,
    console_regions,
    console_search,
    questions_page,
)
from sessions_app.admin.orchestration import IterationInline, QuestionInline, SignalInline, TaskInline
from sessions_app.admin.task_graph import status_legend, task_graph_layout
from sessions_app.models import (
    Session,
)
from sessions_app.services.usage import SESSION_TOTAL_FIELDS


def session_related_links(session: Session) -> str:
    """Links to every record of the session that has an admin list, each list filtered to it. They come
    from the session's reverse relations, so a new session-scoped model is linked without a change here."""
    if not session.pk:
        return "-"
    relations = sorted((relation for relation in Session._meta.related_objects
                        if admin.site.is_registered(relation.related_model)),
                       key=lambda relation: str(relation.related_model._meta.verbose_name_plural))
    links = [format_html('<a href="{}?{}={}">{}</a>',
                         reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"), relation.field.name,
                         session.pk, meta.verbose_name_plural)
             for relation in relations for meta in (relation.related_model._meta,)]
    return format_html_join(" · ", "{}", ((link,) for link in links))


@admin.register(Session)
class SessionAdmin(LedgerHistoryMixin, ReadOnlyPageAdmin):
    """The session's page is its console (GET); the raw record is edited at `<id>/edit/`, where
    status and state are read-only: they change through the console's buttons (transitions)."""

    read_only_label = "Console"

    list_display = ["name", column_status(), column_status("state"),
                    column_text("exit_reason", length=50, description="exit reason"), "current_agent",
                    "total_cost_usd", column_ago("last_activity_at", description="last activity"),
                    column_text("project_path", length=40, description="project"), "current_iteration", "tokens",
                    column_ago("started_at", description="started"), "id"]
    list_filter = ["status", "state", "command_type", "execution_mode", "circuit_breaker_state"]
    search_fields = ["id", "key", "user_request", "command", "project_path", "summary"]
    date_hierarchy = "started_at"
    readonly_fields = ["id", "status", "state", *SESSION_TOTAL_FIELDS, "token_count", "last_activity_at",
                       "ended_at", "exit_reason", "created_at", "updated_at", "related"]
    operator_actions = SESSION_ACTIONS
    exclude = ["summary_embedding"]
    inlines = [IterationInline, TaskInline, QuestionInline, SignalInline]
    fieldsets = [
        (None, {"fields": ["id", "key", "user_request", "status", "state", "project_path", "related"]}),
        ("Progress", {"fields": ["current_iteration", "current_wave", "current_phase", "current_task_key",
                                 "current_agent", "current_model", "max_iterations",
                                 "consecutive_failures", "max_consecutive_failures",
                                 "circuit_breaker_state", "execution_mode"]}),
        ("Plan", {"fields": ["current_plan_content", "plan_key", "sprint_key", "default_model",
                             "max_concurrency", "config"]}),
        ("Command", {"fields": ["command", "command_type", "exit_reason", "bug_council_activated",
                                "bug_council_reason", "summary"]}),
        ("Usage", {"fields": [*SESSION_TOTAL_FIELDS, "token_count"]}),
        ("Time", {"fields": ["started_at", "ended_at", "last_activity_at", "created_at", "updated_at"]}),
    ]

    @admin.display(description="related records")
    def related(self, session: Session) -> str:
        return session_related_links(session)

    @admin.display(description="session", ordering="key")
    def name(self, session: Session) -> str:
        return session_label(session.pk, session.key)

    @admin.display(description="tokens")
    def tokens(self, session: Session) -> str:
        return f"{session.total_tokens_input + session.total_tokens_output:,}"

    def get_urls(self) -> list:
        task_graph, live = self.record_view(self.task_graph_view), self.record_view(self.live_view)
        return [path("<path:object_id>/task-graph/", task_graph, name="sessions_app_session_task_graph"),
                path("<path:object_id>/live/", live, name="sessions_app_session_live"),
                *super().get_urls()]

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if request.method != "GET":
            return super().change_view(request, object_id, form_url, extra_context)
        self.model_permission_check(request)  # before the lookup: a missing session and a hidden one alike
        etag = console_etag(session_id=unquote(object_id), user_id=request.user.pk,
                            questions_page=questions_page(request))
        session = self.get_object(request, unquote(object_id))
        if session is None or etag is None:
            return self._get_obj_does_not_exist_redirect(request, self.model._meta, object_id)
        if not self.has_view_or_change_permission(request, session):
            raise PermissionDenied
        regions, columns = self._console_regions(request, session)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Session {session_label(session.pk, session.key)}",
            "subtitle": None,
            "opts": self.model._meta,
            "original": session,
            "session": session,
            "regions": regions,
            "panels": columns,
            "search": console_search(request, session),
            "etag": etag,
            # The live view draws the page of questions this page shows.
            "live_url": reverse("admin:sessions_app_session_live", args=[session.pk])
            + (f"?questions={questions_page(request)}" if questions_page(request) > 1 else ""),
            "related": session_related_links(session),
            "is_nav_sidebar_enabled": False,  # the console needs the width
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/sessions_app/session/console.html", context)

    def _console_regions(self, request: HttpRequest, session: Session) -> tuple[dict[str, str], dict[str, Any]]:
        page = questions_page(request)
        console = reverse("admin:sessions_app_session_change", args=[session.pk]) + (
            f"?questions={page}" if page > 1 else "")
        links = {"next_url": console,  # where each form comes back to, also when a poll drew it
                 "edit_url": reverse("admin:sessions_app_session_edit", args=[session.pk]),
                 "history_url": reverse("admin:sessions_app_session_history", args=[session.pk]),
                 "graph_url": reverse("admin:sessions_app_session_task_graph", args=[session.pk])}
        return console_regions(request, session, operator_actions=self.operator_actions_for(request, session),
                               links=links)

    def live_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The console's one poll: every region as the page would draw it now (JSON), or 304 when
        nothing changed since the ETag the page holds (one query on the session's row)."""
        etag = console_etag(session_id=unquote(object_id), user_id=request.user.pk,
                            questions_page=questions_page(request))
        if etag is None:
            return JsonResponse({"code": "not_found", "message": f"No session {object_id}.", "details": {}},
                                status=404)
        if etag in request.headers.get("If-None-Match", ""):
            response: HttpResponse = HttpResponseNotModified()
        else:
            session = self.get_object(request, unquote(object_id))
            if session is None or not self.has_view_or_change_permission(request, session):
                raise PermissionDenied
            regions, _columns = self._console_regions(request, session)
            response = JsonResponse({"regions": regions})
        response["ETag"] = etag  # admin_view adds Cache-Control: no-store (no cache but the page's own)
        return response

    def task_graph_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The session's tasks by wave with their statuses, agents and dependencies (linked from the
        session page's "Task graph" button), filtered by `?status=` and `?agent=`; a dependency cycle is
        named, not an error."""
        session = self.get_object(request, unquote(object_id))
        if session is None:
            raise Http404(f"No session {object_id}.")
        if not self.has_view_permission(request, session):
            raise PermissionDenied
        graph = selectors.session_task_graph(session=session)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Task graph of session {session.key or session.pk}",
            "opts": self.model._meta,
            "original": session,
            "is_nav_sidebar_enabled": False,  # the graph needs the width
            "layout": task_graph_layout(graph, status=request.GET.get("status", ""),
                                        agent=request.GET.get("agent", "")),
            "statuses": status_legend(),
            "graph_url": reverse("admin:sessions_app_session_task_graph", args=[session.pk]),
        }
        return TemplateResponse(request, "admin/sessions_app/session/task_graph.html", context)


