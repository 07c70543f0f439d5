"""DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004)."""

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet
from django.http import HttpRequest

from ralphsite.core.service_admin import LongTextInline, ServiceModelAdmin
from sessions_app.admin.base import SessionScopedAdmin
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
    SessionPhase,
    SessionStateEntry,
)
from sessions_app.services.devteam import (
    CONTEXT_BUDGET_DERIVED_FIELDS,
    CRITERION_VERIFICATION_FIELDS,
    FEATURE_STEP_COUNT_FIELDS,
    INTERVIEW_COUNTER_FIELDS,
    INTERVIEW_QUESTION_SERVER_FIELDS,
    LOOP_RUN_PROGRESS_FIELDS,
    acceptance_criterion_verify,
    interview_question_create,
    interview_question_delete,
    interview_question_update,
    loop_run_finish,
)

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
            acceptance_criterion_verify(criterion_id=criterion.pk, passes=True,
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


@admin.register(ContextBudget)
class ContextBudgetAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "model", "context_limit", "current_usage", "usage_percent", "status",
                    "last_action", "updated_at"]
    list_filter = ["status", "model", "last_action"]
    search_fields = ["id", "session__id", "model"]
    date_hierarchy = "updated_at"
    readonly_fields = ["id", *CONTEXT_BUDGET_DERIVED_FIELDS, *_TIMES]


@admin.register(ContextSnapshot)
class ContextSnapshotAdmin(SessionScopedAdmin):
    list_display = ["id", "session", "snapshot_type", "tokens_before", "tokens_after", "tokens_saved",
                    "trigger_reason", "created_at"]
    list_filter = ["snapshot_type", "trigger_reason"]
    search_fields = ["id", "session__id", "summary_text", "trigger_reason"]
    date_hierarchy = "created_at"
    readonly_fields = ["id", *_TIMES]


class InterviewQuestionInline(LongTextInline):
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

    def save_formset(self, request: HttpRequest, form: Any, formset: BaseInlineFormSet, change: bool) -> None:
        """Question rows go through the question services, which number them and keep the counters."""
        formset.save(commit=False)
        for question in formset.deleted_objects:
            interview_question_delete(question=question)
        for question, changed in formset.changed_objects:
            interview_question_update(question=InterviewQuestion.objects.get(pk=question.pk),
                                      data={name: getattr(question, name) for name in changed})
        editable = [name for name in InterviewQuestionInline.fields if name not in INTERVIEW_QUESTION_SERVER_FIELDS]
        for question in formset.new_objects:
            interview_question_create(
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
            loop_run_finish(loop_run_id=loop_run.pk, status=LoopRunStatus.STOPPED)

