"""Orchestration records (seed 000): plans, tasks, questions, feedback, signals, invocations."""

from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html

from ralphsite.core.errors import DomainError, InvalidInput
from ralphsite.core.service_admin import (
    LongTextInline,
    OperatorAction,
    ReadOnlyPageAdmin,
    ServiceModelAdmin,
    SessionFilter,
    column_ago,
    column_flag,
    column_session,
    column_status,
    column_text,
    operator_name,
)
from sessions_app import selectors
from sessions_app.admin.base import LedgerHistoryMixin, ReadOnlyInline, SessionScopedAdmin
from sessions_app.downloads import attachment_download_response
from sessions_app.models import (
    TASK_STATUS_LIFECYCLE,
    AgentInvocation,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Iteration,
    Level,
    Plan,
    PlanSnapshot,
    Question,
    QuestionStatus,
    ReplanningDelta,
    ResearchFinding,
    ResearchSession,
    Signal,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
    TaskStatus,
)
from sessions_app.services.devteam import RESEARCH_COUNTER_FIELDS
from sessions_app.services.questions import feedback_item_resolve, question_answer
from sessions_app.services.tasks import task_release, task_status_set, task_update, tasks_delete


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



@admin.register(Iteration)
class IterationAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "number", "planning_complete", "tasks_defined", "started_at", "completed_at"]
    list_filter = ["planning_complete"]
    search_fields = ["id", "session__id", "session__key"]
    date_hierarchy = "started_at"
    readonly_fields = ["planning_completed_at"]


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


class ResearchFindingInline(ReadOnlyInline):
    """Findings are written on their own page, through the services that keep the counters."""

    model = ResearchFinding
    fields = ["finding_type", "title", "source", "priority", "file_path"]


@admin.register(ResearchSession)
class ResearchSessionAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "status", "findings_count", "blockers_found", "started_at"]
    list_filter = ["status"]
    search_fields = ["id", "session__id", "session__key"]
    date_hierarchy = "started_at"
    inlines = [ResearchFindingInline]
    readonly_fields = list(RESEARCH_COUNTER_FIELDS)


@admin.register(ResearchFinding)
class ResearchFindingAdmin(ServiceModelAdmin):
    list_display = ["title", "finding_type", "source", "priority", "research_session", "recorded_at"]
    list_filter = ["finding_type", "source", "priority"]
    search_fields = ["title", "description", "file_path"]
    date_hierarchy = "recorded_at"
    raw_id_fields = ["research_session"]


class TaskDependencyInline(LongTextInline):
    model = TaskDependency
    fk_name = "task"
    extra = 0
    raw_id_fields = ["depends_on"]
    verbose_name_plural = "depends on"


class TaskAttemptInline(ReadOnlyInline):
    model = TaskAttempt
    fields = ["attempt_number", "status", "review_verdict", "agent", "model", "tokens_input", "tokens_output",
              "cost_usd", "created_at"]


class TaskFileInline(LongTextInline):
    model = TaskFile
    extra = 0
    fields = ["path", "is_pattern", "file_type", "access_type"]


def _task_release(request: HttpRequest, task: Task, inputs: dict[str, str]) -> str:
    task_release(task=task, agent=operator_name(request), reason=inputs["reason"], operator=True)
    return f"{task.key} released: claimable again."


def _task_fail(request: HttpRequest, task: Task, inputs: dict[str, str]) -> str:
    task_status_set(task=task, status=TaskStatus.FAILED, annotation=inputs["reason"],
                    agent=operator_name(request), fenced=False)
    return f"{task.key} marked failed; its claim is cleared."


def _task_status(status: str) -> Callable[[HttpRequest, Task, dict[str, str]], str]:
    def run(request: HttpRequest, task: Task, inputs: dict[str, str]) -> str:
        task_status_set(task=task, status=status, annotation=inputs.get("reason", ""),
                        agent=operator_name(request), fenced=False)
        return f"{task.key} is {TaskStatus(status).label.lower()}."
    return run


def _task_may_become(status: str) -> Callable[[Task], bool]:
    """A button is shown where the task lifecycle allows its change (the service refuses the rest)."""
    return lambda task: task.status != status and TASK_STATUS_LIFECYCLE.allows(task.status, status)


def task_timeline(task: Task) -> list[dict[str, Any]]:
    """The task's attempts in the order they were made, each with its page (its duration is the
    attempt's `duration`): a task's page and each of its attempts' pages show it."""
    attempts = sorted(selectors.task_details_load(task=task).attempts.all(), key=lambda a: a.attempt_number)
    return [{"attempt": attempt, "url": reverse("admin:sessions_app_taskattempt_change", args=[attempt.pk])}
            for attempt in attempts]


@admin.register(Task)
class TaskAdmin(LedgerHistoryMixin, ReadOnlyPageAdmin):
    list_display = ["key", column_text("title", length=60), column_status(),
                    column_text("status_annotation", length=60, description="why"), "assigned_agent",
                    column_session(), column_ago("updated_at", description="changed"), "wave", "id"]
    list_display_links = ["key"]
    list_filter = [SessionFilter, "status", "task_type", "work_type", "priority"]
    search_fields = ["key", "title", "objective", "description", "session__key", "sprint_key"]
    list_select_related = ["session"]
    autocomplete_fields = ["session", "plan", "parent"]
    # Status moves through its transitions only (the buttons above the form, the API's status/release).
    readonly_fields = ["status", "status_annotation", "claimed_by", "lease_expires_at", "claim", "started_at",
                       "completed_at", "created_at", "updated_at"]
    inlines = [TaskDependencyInline, TaskAttemptInline, TaskFileInline]
    read_only_template = "admin/sessions_app/task/read_only.html"
    operator_actions = (
        OperatorAction("release", "Release the claim", _task_release, inputs=(("reason", "reason (optional)"),),
                       shown=lambda task: task.status == TaskStatus.IN_PROGRESS and bool(task.claimed_by),
                       help="Take the task back from its agent: not started again, claimable by anyone."),
        OperatorAction("fail", "Mark failed", _task_fail, style="danger", inputs=(("reason", "why it failed"),),
                       shown=_task_may_become(TaskStatus.FAILED),
                       help="The task fails (its claim is cleared); tasks that depend on it stay blocked."),
        OperatorAction("complete", "Mark completed", _task_status(TaskStatus.COMPLETED),
                       shown=_task_may_become(TaskStatus.COMPLETED)),
        OperatorAction("reopen", "Reopen", _task_status(TaskStatus.NOT_STARTED),
                       # a claimed task goes back through Release (its event names the holder)
                       shown=lambda task: task.status != TaskStatus.IN_PROGRESS
                       and _task_may_become(TaskStatus.NOT_STARTED)(task),
                       help="Back to not started: claimable again."),
    )

    def read_only_context(self, request: HttpRequest, task: Task) -> dict[str, Any]:
        """Titled by its key; its dependencies, files and its attempts' timeline (task_details_load:
        three queries besides the task)."""
        timeline = task_timeline(task)
        return {"title": f"Task {task.key}", "task": task, "timeline": timeline,
                "depends_on": [{"key": dependency.depends_on.key,
                                "url": reverse("admin:sessions_app_task_change", args=[dependency.depends_on_id])}
                               for dependency in task.dependencies.all()],
                "files": list(task.files.all())}

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
            task_update(task=Task.objects.get(pk=form.instance.pk), data=data)
        except DomainError as error:
            self.message_user(request, f"{formset.prefix} not saved: {error.message}",
                              messages.ERROR)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Task]) -> None:
        tasks_delete(tasks=list(queryset))  # one set: dependents deleted with it are no obstacle


class PricedCostAdmin(ServiceModelAdmin):
    """A row reporting a provider call: its cost left blank is priced as the API's omitted cost_usd
    (sessions_app.services.usage); whether it was is shown, not edited."""

    readonly_fields = ["is_estimated"]

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> forms.Field | None:
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name == "cost_usd" and field is not None:
            field.required = False
            field.help_text = "USD. Blank: priced from the model's price in force at the call's time."
        return field

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {**super().get_changeform_initial_data(request), "cost_usd": None}  # a new row: blank, priced


@admin.register(TaskAttempt)
class TaskAttemptAdmin(ReadOnlyPageAdmin, PricedCostAdmin):
    list_display = ["task", column_status(), column_status("review_verdict", description="review"),
                    column_text("error_message", length=60, description="error"), "agent",
                    column_session(), column_ago("created_at", description="reported"), "cost_usd", "attempt_number",
                    "model", "tokens_input", "tokens_output", "id"]
    list_display_links = ["task"]
    list_filter = [SessionFilter, "status", "review_verdict"]
    search_fields = ["task__key", "agent", "model", "implementation_report"]
    list_select_related = ["task", "session"]
    autocomplete_fields = ["task", "session"]
    read_only_template = "admin/sessions_app/taskattempt/read_only.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[TaskAttempt]:
        return super().get_queryset(request).select_related("task")

    def read_only_context(self, request: HttpRequest, attempt: TaskAttempt) -> dict[str, Any]:
        """Titled by its task's key; the task's timeline with this attempt marked, and the task's history."""
        task = attempt.task
        return {"title": f"{task.key}: attempt {attempt.attempt_number}", "attempt": attempt, "task": task,
                "task_url": reverse("admin:sessions_app_task_change", args=[task.pk]),
                "timeline": task_timeline(task),
                "history_url": reverse("admin:sessions_app_task_history", args=[task.pk])}


@admin.register(TaskFile)
class TaskFileAdmin(ServiceModelAdmin):
    list_display = ["path", "task", "is_pattern", "file_type", "access_type"]
    list_filter = ["access_type", "file_type", "is_pattern"]
    search_fields = ["path", "task__key"]
    list_select_related = ["task"]
    autocomplete_fields = ["task"]


ANSWER_FIELDS = ("answer", "answer_source", "answer_confidence", "answer_implication")


class QuestionAnswerForm(forms.ModelForm):
    """The question as the agent asked it (read-only) and the answer a person gives: saving an answer
    answers the question through the answer service (status, time, ledger event), as the API does."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if set(ANSWER_FIELDS) & set(self.changed_data) and not (cleaned.get("answer") or "").strip():
            self.add_error("answer", "Write the answer (the other answer fields go with it).")
        return cleaned


def _question_answer(request: HttpRequest, question: Question, inputs: dict[str, str]) -> str:
    if not inputs.get("answer"):
        raise InvalidInput("Write the answer.", details={"answer": ["required"]})
    question_answer(question=question, data={name: inputs.get(name, "") for name in ANSWER_FIELDS},
                    actor=operator_name(request))
    return f"{question.key} answered: the agent's next poll sees it."


@admin.register(Question)
class QuestionAdmin(SessionScopedAdmin):
    form = QuestionAnswerForm
    operator_actions = (
        OperatorAction("answer", "Answer", _question_answer, style="primary",
                       shown=lambda question: question.status != QuestionStatus.ANSWERED,
                       inputs=(("answer", "your answer"), ("answer_source", "source (optional)"),
                               ("answer_confidence", "confidence", [("", "confidence"), *Level.choices]),
                               ("answer_implication", "implication (optional)"))),
    )
    list_display = ["key", column_text("text", length=90, description="question"), column_status(), "priority",
                    column_session(), column_ago("created_at", description="asked"),
                    column_ago("answered_at", description="answered"), "answered_by", "category", "id"]
    list_display_links = ["key"]
    list_filter = [SessionFilter, "status", "priority", "category", "answer_confidence"]
    search_fields = ["key", "text", "answer", "session__key"]
    readonly_fields = ["session", "key", "text", "status", "answered_at", "answered_by", "iteration_number",
                       "cycle_number", "question_type", "source_issue_key", "impact", "created_at"]
    fieldsets = [
        ("The question", {"fields": ["session", "key", "text", "impact", "status", "category", "priority",
                                     "question_type", "source_issue_key", "iteration_number", "cycle_number",
                                     "created_at"]}),
        ("Your answer", {"fields": [*ANSWER_FIELDS, "answered_at", "answered_by"],
                         "description": "Saving an answer answers the question: the agent's next poll sees it."}),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # agents ask questions (through the API); people answer them

    def save_model(self, request: HttpRequest, obj: Question, form: forms.ModelForm, change: bool) -> None:
        """An answer goes through the answer service (by this person); other fields, if any, first."""
        data = self._model_data(form, form.changed_data)
        question = Question.objects.get(pk=obj.pk)
        rest = {name: value for name, value in data.items() if name not in ANSWER_FIELDS}
        if rest:
            question = self.writes.update(question, rest)
        if len(rest) < len(data):
            question_answer(question=question, data={name: form.cleaned_data[name] for name in ANSWER_FIELDS},
                            actor=operator_name(request))


class FeedbackItemInline(LongTextInline):
    model = FeedbackItem
    extra = 0
    fields = ["issue_key", "severity", "description", "is_resolved", "resolved_at"]
    readonly_fields = ["is_resolved", "resolved_at"]  # resolved on the item's page (the resolve service)


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


def _feedback_resolve(request: HttpRequest, item: FeedbackItem, inputs: dict[str, str]) -> str:
    feedback_item_resolve(item=item)
    return f"Feedback item {item.issue_key or item.pk} resolved."


@admin.register(FeedbackItem)
class FeedbackItemAdmin(ServiceModelAdmin):
    list_display = ["issue_key", column_text("description", length=90), "severity",
                    column_flag("is_resolved", yes="resolved", no="unresolved", description="resolved"),
                    column_session("batch__session"), column_ago("created_at", description="reported"), "id"]
    list_display_links = ["issue_key"]
    list_filter = [SessionFilter.on("batch__session_id"), "severity", "is_resolved"]
    search_fields = ["issue_key", "description", "evidence"]
    list_select_related = ["batch__session"]
    raw_id_fields = ["batch"]
    readonly_fields = ["is_resolved", "resolved_at"]
    actions = ["resolve_selected"]
    operator_actions = (OperatorAction("resolve", "Resolve", _feedback_resolve, style="primary",
                                       shown=lambda item: not item.is_resolved),)

    @admin.action(description="Resolve the selected feedback items")
    def resolve_selected(self, request: HttpRequest, queryset: QuerySet[FeedbackItem]) -> None:
        items = list(queryset.filter(is_resolved=False).select_related("batch"))
        for item in items:
            feedback_item_resolve(item=item)
        self.message_user(request, f"{len(items)} feedback item(s) resolved.", messages.SUCCESS)


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
    list_display = [column_status("type", description="signal"), column_text("message", length=90),
                    column_flag("is_processed", yes="processed", no="pending", description="state"),
                    column_session(), column_ago("sent_at", description="sent"), "sent_by", "processed_by",
                    column_ago("processed_at", description="processed"), "expired_reason", "id"]
    list_display_links = ["type_badge"]
    list_filter = [SessionFilter, "type", "is_processed"]
    search_fields = ["message", "session__key", "session__id"]
    # Set by the orchestrator's poll, from who sends it, and by the session's end.
    readonly_fields = ["is_processed", "processed_at", "processed_by", "sent_by", "expired_at", "expired_reason"]

    def save_model(self, request: HttpRequest, obj: Signal, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
        else:  # sent by this person, as the console's buttons send them
            obj.pk = self.writes.create(self._model_data(form, form.cleaned_data), actor=operator_name(request)).pk


class AgentInvocationForm(forms.ModelForm):
    """The admin's form (its model and fields come from AgentInvocationAdmin)."""

    def clean(self) -> dict[str, Any]:
        """Both task and task_key edited: they must name the same task (either alone updates the other,
        in services.usage.agent_invocation_update)."""
        cleaned = super().clean()
        task, key = cleaned.get("task"), cleaned.get("task_key")
        if {"task", "task_key"} <= set(self.changed_data) and task is not None and key and key != task.key:
            self.add_error("task_key", f"{key!r} is not the key of the chosen task ({task.key!r}).")
        return cleaned


@admin.register(AgentInvocation)
class AgentInvocationAdmin(PricedCostAdmin):
    form = AgentInvocationForm
    list_display = ["agent", "role", column_status(), "task_key",
                    column_text("error_message", length=50, description="error"), "cost_usd", column_session(),
                    column_ago("started_at", description="started"), "model", "tokens_input", "tokens_output",
                    "duration_ms", "id"]
    list_display_links = ["agent"]
    list_filter = [SessionFilter, "role", "status", "agent_type"]
    search_fields = ["agent", "model", "task_key", "prompt", "session__key"]
    list_select_related = ["session"]
    autocomplete_fields = ["session", "task"]

