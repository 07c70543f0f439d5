from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet
from django.http import HttpRequest

from ralphsite.services import instance_create, instance_delete, instance_update
from sessions_app import services
from sessions_app.models import (
    AcceptanceCriterion,
    Bug,
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


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["id", "key", "status", "state", "command_type", "project_path", "current_iteration",
                    "total_cost_usd", "started_at", "ended_at"]
    list_filter = ["status", "state", "command_type", "execution_mode", "circuit_breaker_state"]
    search_fields = ["id", "key", "user_request", "command", "project_path", "summary"]
    date_hierarchy = "started_at"
    readonly_fields = ["id", *SESSION_TOTAL_FIELDS, "token_count", "last_activity_at", "created_at",
                       "updated_at"]
    exclude = ["summary_embedding"]
    fieldsets = [
        (None, {"fields": ["id", "key", "user_request", "status", "state", "project_path"]}),
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

    def save_model(self, request: HttpRequest, obj: Session, form: Any, change: bool) -> None:
        data = {name: form.cleaned_data[name] for name in form.changed_data}
        if change:
            services.session_update(session=Session.objects.get(pk=obj.pk), data=data)
        else:
            created = services.session_create(data=form.cleaned_data)
            obj.pk = created.pk

    def delete_model(self, request: HttpRequest, obj: Session) -> None:
        services.session_delete(session=obj)


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------

_TIMES = ("created_at", "updated_at")


class ServiceModelAdmin(admin.ModelAdmin):
    """An admin page that writes through the model's services, like the API.

    Subclasses override `service_create` / `service_update` / `service_delete` where the model has
    domain rules; plain records use the generic services.
    """

    autocomplete_fields = ["session"]
    list_select_related = ["session"]

    def service_create(self, data: dict[str, Any]) -> models.Model:
        return instance_create(model=self.model, data=data)

    def service_update(self, obj: models.Model, data: dict[str, Any]) -> models.Model:
        return instance_update(instance=obj, data=data)

    def service_delete(self, obj: models.Model) -> None:
        instance_delete(instance=obj)

    def save_model(self, request: HttpRequest, obj: models.Model, form: Any, change: bool) -> None:
        if change:
            data = {name: form.cleaned_data[name] for name in form.changed_data}
            self.service_update(self.model._default_manager.get(pk=obj.pk), data)
        else:
            obj.pk = self.service_create(dict(form.cleaned_data)).pk

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        self.service_delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for obj in queryset:
            self.service_delete(obj)


@admin.register(SessionStateEntry)
class SessionStateEntryAdmin(ServiceModelAdmin):
    list_display = ["key", "session", "value", "updated_at"]
    search_fields = ["key", "session__id", "session__key"]
    date_hierarchy = "updated_at"
    readonly_fields = ["id", *_TIMES]


@admin.register(SessionPhase)
class SessionPhaseAdmin(ServiceModelAdmin):
    list_display = ["id", "session", "phase_type", "is_first_run", "features_attempted", "features_completed",
                    "created_at"]
    list_filter = ["phase_type", "is_first_run", "features_enumerated"]
    search_fields = ["id", "session__id", "baseline_commit_sha", "resumed_from_session", "resume_point"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *_TIMES]


@admin.register(ProgressSummary)
class ProgressSummaryAdmin(ServiceModelAdmin):
    list_display = ["id", "session", "from_iteration", "to_iteration", "tasks_completed", "tasks_remaining",
                    "tests_passing", "tests_failing", "features_passing", "features_total", "created_at"]
    search_fields = ["id", "session__id", "summary_text", "last_commit_sha"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *_TIMES]


@admin.register(Bug)
class BugAdmin(ServiceModelAdmin):
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
class EscalationAdmin(ServiceModelAdmin):
    list_display = ["id", "session", "from_model", "to_model", "agent", "reason", "failure_count", "task_key",
                    "timestamp"]
    list_filter = ["from_model", "to_model", "reason"]
    search_fields = ["id", "session__id", "agent", "task_key", "reason"]
    date_hierarchy = "timestamp"
    readonly_fields = ["id", *_TIMES]


@admin.register(AcceptanceCriterion)
class AcceptanceCriterionAdmin(ServiceModelAdmin):
    autocomplete_fields: list[str] = []
    list_select_related: list[str] = []
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
    autocomplete_fields: list[str] = []
    list_select_related: list[str] = []
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
class ContextBudgetAdmin(ServiceModelAdmin):
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
class ContextSnapshotAdmin(ServiceModelAdmin):
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
class InterviewAdmin(ServiceModelAdmin):
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
class LoopRunAdmin(ServiceModelAdmin):
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
