from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from ralphsite.errors import DomainError
from ralphsite.services import instance_create, instance_delete, instance_update
from sessions_app import services
from sessions_app.downloads import attachment_download_response
from sessions_app.models import (
    AgentInvocation,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Iteration,
    Plan,
    PlanSnapshot,
    Question,
    ReplanningDelta,
    ResearchFinding,
    ResearchSession,
    Session,
    Signal,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
)
from sessions_app.services import SESSION_TOTAL_FIELDS

# -- orchestration ----------------------------------------------------------------------------

class ServiceModelAdmin(admin.ModelAdmin):
    """Admin writes go through the services, as API writes do. Plain records use the generic ones;
    models with rules override service_create / service_update / service_delete."""

    def service_create(self, data: dict[str, Any]) -> models.Model:
        return instance_create(model=self.model, data=data)

    def service_update(self, instance: models.Model, data: dict[str, Any]) -> models.Model:
        return instance_update(instance=instance, data=data)

    def service_delete(self, instance: models.Model) -> None:
        instance_delete(instance=instance)

    def _model_data(self, form: forms.ModelForm, names: Iterable[str]) -> dict[str, Any]:
        concrete = {f.name for f in self.model._meta.concrete_fields}
        return {name: form.cleaned_data[name] for name in names if name in concrete}

    def save_model(self, request: HttpRequest, obj: models.Model, form: forms.ModelForm, change: bool) -> None:
        if change:
            self.service_update(self.model.objects.get(pk=obj.pk), self._model_data(form, form.changed_data))
        else:
            obj.pk = self.service_create(self._model_data(form, form.cleaned_data)).pk

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        self.service_delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for obj in queryset:
            self.service_delete(obj)


class ReadOnlyInline(admin.TabularInline):
    """Rows shown on their parent's page with a link to their own page (where writes go through
    the services)."""

    extra = 0
    can_delete = False
    show_change_link = True

    def get_readonly_fields(self, request: HttpRequest, obj: models.Model | None = None) -> list[str]:
        return list(self.fields)

    def has_add_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


class IterationInline(ReadOnlyInline):
    model = Iteration
    fields = ["number", "planning_complete", "tasks_defined", "started_at", "completed_at"]


class TaskInline(ReadOnlyInline):
    model = Task
    fk_name = "session"
    fields = ["key", "title", "status", "wave", "assigned_agent", "started_at", "completed_at"]


class QuestionInline(ReadOnlyInline):
    model = Question
    fields = ["key", "category", "priority", "status", "answered_at"]


class SignalInline(ReadOnlyInline):
    model = Signal
    fields = ["type", "message", "is_processed", "sent_at", "processed_at"]


SESSION_RELATED = [Plan, PlanSnapshot, ResearchSession, TaskAttempt, FeedbackBatch, AgentInvocation]


def session_related_links(session: Session) -> str:
    """Links to every other orchestration record of the session, each list filtered to it."""
    if not session.pk:
        return "-"
    links = [format_html('<a href="{}?session={}">{}</a>',
                         reverse(f"admin:{m._meta.app_label}_{m._meta.model_name}_changelist"), session.pk,
                         m._meta.verbose_name_plural) for m in SESSION_RELATED]
    return format_html_join(" · ", "{}", ((link,) for link in links))


@admin.register(Iteration)
class IterationAdmin(ServiceModelAdmin):
    list_display = ["id", "session", "number", "planning_complete", "tasks_defined", "started_at", "completed_at"]
    list_filter = ["planning_complete"]
    search_fields = ["id", "session__id", "session__key"]
    date_hierarchy = "started_at"
    list_select_related = ["session"]
    autocomplete_fields = ["session"]


@admin.register(PlanSnapshot)
class PlanSnapshotAdmin(ServiceModelAdmin):
    list_display = ["id", "session", "iteration_number", "created_at"]
    search_fields = ["session__id", "session__key", "content"]
    date_hierarchy = "created_at"
    list_select_related = ["session"]
    autocomplete_fields = ["session"]


@admin.register(Plan)
class PlanAdmin(ServiceModelAdmin):
    list_display = ["key", "name", "plan_type", "status", "completed_tasks", "total_tasks", "session", "started_at"]
    list_filter = ["status", "plan_type"]
    search_fields = ["key", "name", "description"]
    date_hierarchy = "created_at"
    list_select_related = ["session"]
    autocomplete_fields = ["session", "research_session"]


@admin.register(ReplanningDelta)
class ReplanningDeltaAdmin(ServiceModelAdmin):
    list_display = ["id", "iteration", "previous_plan_snapshot_ref", "created_at"]
    search_fields = ["summary", "rationale", "iteration__session__key"]
    date_hierarchy = "created_at"
    list_select_related = ["iteration__session"]
    raw_id_fields = ["iteration"]


class ResearchFindingInline(admin.TabularInline):
    model = ResearchFinding
    extra = 0
    fields = ["finding_type", "title", "source", "priority", "file_path"]
    show_change_link = True


@admin.register(ResearchSession)
class ResearchSessionAdmin(ServiceModelAdmin):
    list_display = ["id", "session", "status", "findings_count", "blockers_found", "started_at"]
    list_filter = ["status"]
    search_fields = ["id", "session__id", "session__key"]
    date_hierarchy = "started_at"
    list_select_related = ["session"]
    autocomplete_fields = ["session"]
    inlines = [ResearchFindingInline]


@admin.register(ResearchFinding)
class ResearchFindingAdmin(ServiceModelAdmin):
    list_display = ["title", "finding_type", "source", "priority", "research_session", "recorded_at"]
    list_filter = ["finding_type", "source", "priority"]
    search_fields = ["title", "description", "file_path"]
    date_hierarchy = "recorded_at"
    raw_id_fields = ["research_session"]


class TaskDependencyInline(admin.TabularInline):
    model = TaskDependency
    fk_name = "task"
    extra = 0
    raw_id_fields = ["depends_on"]
    verbose_name_plural = "depends on"


class TaskAttemptInline(ReadOnlyInline):
    model = TaskAttempt
    fields = ["attempt_number", "status", "review_verdict", "agent", "model", "tokens_input", "tokens_output",
              "cost_usd", "created_at"]


class TaskFileInline(admin.TabularInline):
    model = TaskFile
    extra = 0
    fields = ["path", "is_pattern", "file_type", "access_type"]


@admin.register(Task)
class TaskAdmin(ServiceModelAdmin):
    list_display = ["key", "title", "session", "status", "wave", "sequence", "priority", "assigned_agent",
                    "started_at", "completed_at"]
    list_filter = ["status", "task_type", "work_type", "priority"]
    search_fields = ["key", "title", "objective", "description", "session__key", "sprint_key"]
    date_hierarchy = "created_at"
    list_select_related = ["session"]
    autocomplete_fields = ["session", "plan", "parent"]
    readonly_fields = ["claimed_by", "lease_expires_at", "created_at", "updated_at"]
    inlines = [TaskDependencyInline, TaskAttemptInline, TaskFileInline]

    def service_create(self, data: dict[str, Any]) -> Task:
        return services.task_create(data=data)

    def save_formset(self, request: HttpRequest, form: forms.ModelForm, formset: Any, change: bool) -> None:
        """Dependencies and files are written by the task service (same session, no cycle)."""
        if formset.model not in (TaskDependency, TaskFile):
            super().save_formset(request, form, formset, change)
            return
        kept = [row for row in (f.cleaned_data for f in formset.forms) if row and not row.get("DELETE")]
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []  # for the change log
        if formset.model is TaskDependency:
            data = {"depends_on": [row["depends_on"].key for row in kept]}
        else:
            data = {"files": [{name: row[name] for name in ("path", "is_pattern", "file_type", "access_type")}
                              for row in kept]}
        try:
            services.task_update(task=Task.objects.get(pk=form.instance.pk), data=data)
        except DomainError as error:
            self.message_user(request, f"{formset.prefix} not saved: {error.message}",
                              messages.ERROR)

    def service_update(self, instance: Task, data: dict[str, Any]) -> Task:
        return services.task_update(task=instance, data=data)

    def service_delete(self, instance: Task) -> None:
        services.task_delete(task=instance)


@admin.register(TaskAttempt)
class TaskAttemptAdmin(ServiceModelAdmin):
    list_display = ["id", "task", "attempt_number", "status", "review_verdict", "agent", "model",
                    "tokens_input", "tokens_output", "cost_usd", "created_at"]
    list_filter = ["status", "review_verdict"]
    search_fields = ["task__key", "agent", "model", "implementation_report"]
    date_hierarchy = "created_at"
    list_select_related = ["task"]
    autocomplete_fields = ["task", "session"]

    def service_create(self, data: dict[str, Any]) -> TaskAttempt:
        return services.task_attempt_create(data=data)

    def service_update(self, instance: TaskAttempt, data: dict[str, Any]) -> TaskAttempt:
        return services.task_attempt_update(attempt=instance, data=data)

    def service_delete(self, instance: TaskAttempt) -> None:
        services.task_attempt_delete(attempt=instance)


@admin.register(TaskFile)
class TaskFileAdmin(ServiceModelAdmin):
    list_display = ["path", "task", "is_pattern", "file_type", "access_type"]
    list_filter = ["access_type", "file_type", "is_pattern"]
    search_fields = ["path", "task__key"]
    list_select_related = ["task"]
    autocomplete_fields = ["task"]


@admin.register(Question)
class QuestionAdmin(ServiceModelAdmin):
    list_display = ["key", "session", "category", "priority", "status", "iteration_number", "answered_at"]
    list_filter = ["category", "priority", "status", "answer_confidence"]
    search_fields = ["key", "text", "answer", "session__key"]
    date_hierarchy = "created_at"
    list_select_related = ["session"]
    autocomplete_fields = ["session"]


class FeedbackItemInline(admin.TabularInline):
    model = FeedbackItem
    extra = 0
    fields = ["issue_key", "severity", "description", "is_resolved", "resolved_at"]


class FeedbackAttachmentInline(ReadOnlyInline):
    model = FeedbackAttachment
    fields = ["file_name", "content_type", "size", "download"]

    @admin.display(description="download")
    def download(self, attachment: FeedbackAttachment) -> str:
        return attachment_download_link(attachment)


def attachment_download_link(attachment: FeedbackAttachment) -> str:
    if not attachment.pk:
        return "-"
    return format_html('<a href="{}">download</a>',
                       reverse("admin:sessions_app_feedbackattachment_download", args=[attachment.pk]))


@admin.register(FeedbackBatch)
class FeedbackBatchAdmin(ServiceModelAdmin):
    list_display = ["batch_timestamp", "session", "iteration", "created_at"]
    search_fields = ["batch_timestamp", "summary", "session__key"]
    date_hierarchy = "created_at"
    list_select_related = ["session", "iteration"]
    autocomplete_fields = ["iteration"]
    exclude = ["session"]
    inlines = [FeedbackItemInline, FeedbackAttachmentInline]

    def service_create(self, data: dict[str, Any]) -> FeedbackBatch:
        return services.feedback_batch_create(data=data)


@admin.register(FeedbackItem)
class FeedbackItemAdmin(ServiceModelAdmin):
    list_display = ["issue_key", "batch", "severity", "is_resolved", "resolved_at"]
    list_filter = ["severity", "is_resolved"]
    search_fields = ["issue_key", "description", "evidence"]
    date_hierarchy = "created_at"
    list_select_related = ["batch"]
    raw_id_fields = ["batch"]


class FeedbackAttachmentForm(forms.ModelForm):
    upload = forms.FileField(required=False, help_text="Replaces the stored content.")

    class Meta:
        model = FeedbackAttachment
        fields = ["batch", "file_name", "content_type", "description"]


@admin.register(FeedbackAttachment)
class FeedbackAttachmentAdmin(ServiceModelAdmin):
    form = FeedbackAttachmentForm
    list_display = ["file_name", "batch", "content_type", "size", "download", "created_at"]
    search_fields = ["file_name", "description"]
    date_hierarchy = "created_at"
    list_select_related = ["batch"]
    raw_id_fields = ["batch"]
    readonly_fields = ["size", "download"]

    @admin.display(description="download")
    def download(self, attachment: FeedbackAttachment) -> str:
        return attachment_download_link(attachment)

    def get_queryset(self, request: HttpRequest) -> QuerySet[FeedbackAttachment]:
        return super().get_queryset(request).defer("content")

    def _model_data(self, form: forms.ModelForm, names: Iterable[str]) -> dict[str, Any]:
        data = super()._model_data(form, names)
        if upload := form.cleaned_data.get("upload"):
            data["content"] = upload.read()
        return data

    def service_create(self, data: dict[str, Any]) -> FeedbackAttachment:
        return services.feedback_attachment_create(data=data)

    def service_update(self, instance: FeedbackAttachment, data: dict[str, Any]) -> FeedbackAttachment:
        return services.feedback_attachment_update(attachment=instance, data=data)

    def get_urls(self) -> list:
        download = self.admin_site.admin_view(self.download_view)
        return [path("<str:pk>/download/", download, name="sessions_app_feedbackattachment_download"),
                *super().get_urls()]

    def download_view(self, request: HttpRequest, pk: str) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return attachment_download_response(get_object_or_404(FeedbackAttachment, pk=pk))


@admin.register(Signal)
class SignalAdmin(ServiceModelAdmin):
    list_display = ["id", "session", "type", "message", "is_processed", "sent_at", "processed_at"]
    list_filter = ["type", "is_processed"]
    search_fields = ["message", "session__key", "session__id"]
    date_hierarchy = "sent_at"
    list_select_related = ["session"]
    autocomplete_fields = ["session"]

    def service_create(self, data: dict[str, Any]) -> Signal:
        return services.signal_create(data=data)


@admin.register(AgentInvocation)
class AgentInvocationAdmin(ServiceModelAdmin):
    list_display = ["id", "session", "role", "agent", "model", "status", "task_key", "duration_ms",
                    "tokens_input", "tokens_output", "cost_usd", "started_at"]
    list_filter = ["role", "status", "agent_type"]
    search_fields = ["agent", "model", "task_key", "prompt", "session__key"]
    date_hierarchy = "started_at"
    list_select_related = ["session"]
    autocomplete_fields = ["session", "task"]

    def service_create(self, data: dict[str, Any]) -> AgentInvocation:
        return services.agent_invocation_create(data=data)

    def service_update(self, instance: AgentInvocation, data: dict[str, Any]) -> AgentInvocation:
        return services.agent_invocation_update(invocation=instance, data=data)

    def service_delete(self, instance: AgentInvocation) -> None:
        services.agent_invocation_delete(invocation=instance)


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["id", "key", "status", "state", "command_type", "project_path", "current_iteration",
                    "total_cost_usd", "started_at", "ended_at"]
    list_filter = ["status", "state", "command_type", "execution_mode", "circuit_breaker_state"]
    search_fields = ["id", "key", "user_request", "command", "project_path", "summary"]
    date_hierarchy = "started_at"
    readonly_fields = ["id", *SESSION_TOTAL_FIELDS, "token_count", "last_activity_at", "created_at",
                       "updated_at", "related"]
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

    def save_model(self, request: HttpRequest, obj: Session, form: Any, change: bool) -> None:
        data = {name: form.cleaned_data[name] for name in form.changed_data}
        if change:
            services.session_update(session=Session.objects.get(pk=obj.pk), data=data)
        else:
            created = services.session_create(data=form.cleaned_data)
            obj.pk = created.pk

    def delete_model(self, request: HttpRequest, obj: Session) -> None:
        services.session_delete(session=obj)

