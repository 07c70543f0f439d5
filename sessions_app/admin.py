from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from ralphsite.errors import DomainError
from ralphsite.service_admin import ServiceModelAdmin
from sessions_app import selectors, services
from sessions_app.admin_task_graph import status_legend, task_graph_layout
from sessions_app.downloads import attachment_download_response
from sessions_app.models import (
    AcceptanceCriterion,
    AgentInvocation,
    Bug,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Interview,
    InterviewQuestion,
    Iteration,
    LoopRun,
    LoopRunStatus,
    Plan,
    PlanSnapshot,
    ProgressSummary,
    Question,
    ReplanningDelta,
    ResearchFinding,
    ResearchSession,
    Session,
    SessionPhase,
    SessionStateEntry,
    Signal,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
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


class SessionScopedAdmin(ServiceModelAdmin):
    """Rows that belong to one session: pick the session by search, show it without a query per row."""

    autocomplete_fields = ["session"]
    list_select_related = ["session"]


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


@admin.register(Iteration)
class IterationAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "number", "planning_complete", "tasks_defined", "started_at", "completed_at"]
    list_filter = ["planning_complete"]
    search_fields = ["id", "session__id", "session__key"]
    date_hierarchy = "started_at"


@admin.register(PlanSnapshot)
class PlanSnapshotAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "iteration_number", "created_at"]
    search_fields = ["session__id", "session__key", "content"]
    date_hierarchy = "created_at"


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
class ResearchSessionAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "status", "findings_count", "blockers_found", "started_at"]
    list_filter = ["status"]
    search_fields = ["id", "session__id", "session__key"]
    date_hierarchy = "started_at"
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
class QuestionAdmin(SessionScopedAdmin):
    list_display = ["key", "session", "category", "priority", "status", "iteration_number", "answered_at"]
    list_filter = ["category", "priority", "status", "answer_confidence"]
    search_fields = ["key", "text", "answer", "session__key"]
    date_hierarchy = "created_at"


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

    def service_update(self, instance: FeedbackBatch, data: dict[str, Any]) -> FeedbackBatch:
        return services.feedback_batch_update(batch=instance, data=data)


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
class SignalAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "type", "message", "is_processed", "sent_at", "processed_at"]
    list_filter = ["type", "is_processed"]
    search_fields = ["message", "session__key", "session__id"]
    date_hierarchy = "sent_at"

    def service_create(self, data: dict[str, Any]) -> Signal:
        return services.signal_create(data=data)


class AgentInvocationForm(forms.ModelForm):
    """The admin's form (its model and fields come from AgentInvocationAdmin)."""

    def clean(self) -> dict[str, Any]:
        """Both task and task_key edited: they must name the same task (either alone updates the other,
        in services.agent_invocation_update)."""
        cleaned = super().clean()
        task, key = cleaned.get("task"), cleaned.get("task_key")
        if {"task", "task_key"} <= set(self.changed_data) and task is not None and key and key != task.key:
            self.add_error("task_key", f"{key!r} is not the key of the chosen task ({task.key!r}).")
        return cleaned


@admin.register(AgentInvocation)
class AgentInvocationAdmin(ServiceModelAdmin):
    form = AgentInvocationForm
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

    def get_urls(self) -> list:
        task_graph = self.admin_site.admin_view(self.task_graph_view)
        return [path("<path:object_id>/task-graph/", task_graph, name="sessions_app_session_task_graph"),
                *super().get_urls()]

    def task_graph_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The session's tasks by wave with their statuses, agents and dependencies (linked from the
        session page's "Task graph" button); a dependency cycle is named, not an error."""
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
            "layout": task_graph_layout(graph),
            "statuses": status_legend(),
        }
        return TemplateResponse(request, "admin/sessions_app/session/task_graph.html", context)


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------

_TIMES = ("created_at", "updated_at")


@admin.register(SessionStateEntry)
class SessionStateEntryAdmin(SessionScopedAdmin):
    list_display = ["key", "session", "value", "updated_at"]
    search_fields = ["key", "session__id", "session__key"]
    date_hierarchy = "updated_at"
    readonly_fields = ["id", *_TIMES]


@admin.register(SessionPhase)
class SessionPhaseAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "phase_type", "is_first_run", "features_attempted", "features_completed",
                    "created_at"]
    list_filter = ["phase_type", "is_first_run", "features_enumerated"]
    search_fields = ["id", "session__id", "baseline_commit_sha", "resumed_from_session", "resume_point"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *_TIMES]


@admin.register(ProgressSummary)
class ProgressSummaryAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "from_iteration", "to_iteration", "tasks_completed", "tasks_remaining",
                    "tests_passing", "tests_failing", "features_passing", "features_total", "created_at"]
    search_fields = ["id", "session__id", "summary_text", "last_commit_sha"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *_TIMES]


@admin.register(Bug)
class BugAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "short_description", "severity", "complexity", "status",
                    "council_activated", "created_at", "resolved_at"]
    list_filter = ["status", "severity", "complexity", "diagnosis_method", "council_activated"]
    search_fields = ["id", "session__id", "description", "root_cause", "fix_summary"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *_TIMES]

    @admin.display(description="description")
    def short_description(self, obj: Bug) -> str:
        return obj.description[:80]

    def service_create(self, data: dict[str, Any]) -> Bug:
        return services.bug_create(data=data)

    def service_update(self, obj: Bug, data: dict[str, Any]) -> Bug:
        return services.bug_update(bug=obj, data=data)


@admin.register(Escalation)
class EscalationAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "from_model", "to_model", "agent", "reason", "failure_count", "task_key",
                    "timestamp"]
    list_filter = ["from_model", "to_model", "reason"]
    search_fields = ["id", "session__id", "agent", "task_key", "reason"]
    date_hierarchy = "timestamp"
    readonly_fields = ["id", *_TIMES]


@admin.register(AcceptanceCriterion)
class AcceptanceCriterionAdmin(ServiceModelAdmin):
    list_display = ["key", "plan_key", "task_key", "sprint_key", "category", "passes", "failure_count",
                    "priority", "verified_at"]
    list_filter = ["passes", "category", "priority", "verification_method"]
    search_fields = ["key", "plan_key", "task_key", "sprint_key", "description"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *CRITERION_VERIFICATION_FIELDS, *_TIMES]
    actions = ["mark_passing"]

    @admin.action(description="Mark the selected criteria as passing (verified now)")
    def mark_passing(self, request: HttpRequest, queryset: QuerySet[AcceptanceCriterion]) -> None:
        for criterion in queryset:
            services.acceptance_criterion_verify(criterion_id=criterion.pk, passes=True,
                                                 verified_by=request.user.get_username(),
                                                 verification_method="manual")


@admin.register(Feature)
class FeatureAdmin(ServiceModelAdmin):
    list_display = ["key", "name", "plan_key", "sprint_key", "category", "passes", "steps_passed", "steps_total",
                    "priority", "verified_at"]
    list_filter = ["passes", "all_steps_pass", "priority", "category"]
    search_fields = ["key", "name", "plan_key", "sprint_key", "description"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *FEATURE_STEP_COUNT_FIELDS, *_TIMES]

    def service_create(self, data: dict[str, Any]) -> Feature:
        return services.feature_create(data=data)

    def service_update(self, obj: Feature, data: dict[str, Any]) -> Feature:
        return services.feature_update(feature=obj, data=data)


@admin.register(ContextBudget)
class ContextBudgetAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "model", "context_limit", "current_usage", "usage_percent", "status",
                    "last_action", "updated_at"]
    list_filter = ["status", "model", "last_action"]
    search_fields = ["id", "session__id", "model"]
    date_hierarchy = "updated_at"
    readonly_fields = ["id", *CONTEXT_BUDGET_DERIVED_FIELDS, *_TIMES]

    def service_create(self, data: dict[str, Any]) -> ContextBudget:
        return services.context_budget_create(data=data)

    def service_update(self, obj: ContextBudget, data: dict[str, Any]) -> ContextBudget:
        return services.context_budget_update(budget=obj, data=data)


@admin.register(ContextSnapshot)
class ContextSnapshotAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "snapshot_type", "tokens_before", "tokens_after", "tokens_saved",
                    "trigger_reason", "created_at"]
    list_filter = ["snapshot_type", "trigger_reason"]
    search_fields = ["id", "session__id", "summary_text", "trigger_reason"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *_TIMES]

    def service_create(self, data: dict[str, Any]) -> ContextSnapshot:
        return services.context_snapshot_create(data=data)

    def service_update(self, obj: ContextSnapshot, data: dict[str, Any]) -> ContextSnapshot:
        return services.context_snapshot_update(snapshot=obj, data=data)


class InterviewQuestionInline(admin.TabularInline):
    model = InterviewQuestion
    fields = ["sequence", "question_key", "question_text", "question_type", "required", "response",
              "responded_at"]
    readonly_fields = list(INTERVIEW_QUESTION_SERVER_FIELDS)
    ordering = ["sequence"]
    extra = 0


@admin.register(Interview)
class InterviewAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "interview_type", "status", "questions_asked", "questions_answered",
                    "started_at", "completed_at"]
    list_filter = ["interview_type", "status"]
    search_fields = ["id", "session__id"]
    date_hierarchy = "started_at"
    readonly_fields = ["id", *INTERVIEW_COUNTER_FIELDS, *_TIMES]
    inlines = [InterviewQuestionInline]

    def service_create(self, data: dict[str, Any]) -> Interview:
        return services.interview_create(data=data)

    def service_update(self, obj: Interview, data: dict[str, Any]) -> Interview:
        return services.interview_update(interview=obj, data=data)

    def save_formset(self, request: HttpRequest, form: Any, formset: BaseInlineFormSet, change: bool) -> None:
        """Question rows go through the question services, which number them and keep the counters."""
        formset.save(commit=False)
        for question in formset.deleted_objects:
            services.interview_question_delete(question=question)
        for question, changed in formset.changed_objects:
            services.interview_question_update(question=InterviewQuestion.objects.get(pk=question.pk),
                                               data={name: getattr(question, name) for name in changed})
        editable = [name for name in InterviewQuestionInline.fields if name not in INTERVIEW_QUESTION_SERVER_FIELDS]
        for question in formset.new_objects:
            services.interview_question_create(
                data={"interview": form.instance, **{name: getattr(question, name) for name in editable}})


@admin.register(InterviewQuestion)
class InterviewQuestionAdmin(ServiceModelAdmin):
    autocomplete_fields = ["interview"]
    list_display = ["id", "interview", "sequence", "question_key", "question_type", "required", "responded_at"]
    list_filter = ["question_type", "required"]
    search_fields = ["id", "interview__id", "question_key", "question_text", "response"]
    date_hierarchy = "created_at"
    list_select_related = ["interview"]
    readonly_fields = ["id", *INTERVIEW_QUESTION_SERVER_FIELDS, *_TIMES]

    def service_create(self, data: dict[str, Any]) -> InterviewQuestion:
        return services.interview_question_create(data=data)

    def service_update(self, obj: InterviewQuestion, data: dict[str, Any]) -> InterviewQuestion:
        return services.interview_question_update(question=obj, data=data)

    def service_delete(self, obj: InterviewQuestion) -> None:
        services.interview_question_delete(question=obj)


@admin.register(LoopRun)
class LoopRunAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "short_task", "status", "iterations", "max_iterations", "started_at",
                    "ended_at"]
    list_filter = ["status"]
    search_fields = ["id", "session__id", "task", "snapshot_path"]
    date_hierarchy = "started_at"
    readonly_fields = ["id", *LOOP_RUN_PROGRESS_FIELDS, *_TIMES]
    actions = ["stop_runs"]

    @admin.display(description="task")
    def short_task(self, obj: LoopRun) -> str:
        return obj.task[:80]

    @admin.action(description="Stop the selected running loop runs")
    def stop_runs(self, request: HttpRequest, queryset: QuerySet[LoopRun]) -> None:
        for loop_run in queryset.filter(status=LoopRunStatus.RUNNING):
            services.loop_run_finish(loop_run_id=loop_run.pk, status=LoopRunStatus.STOPPED)
