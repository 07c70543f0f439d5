"""DevTeam (seed 003): `.devteam/devteam.db`, any of schema v1 to v4: all 28 tables.

v1's tables are required (sessions … escalations); v2's (acceptance_criteria … dead_letter) are
imported when present. Keys: sessions.id → Session.key, tasks.id → Task.key, plans.id → Plan.key,
criterion/feature/checkpoint ids → their keys, baselines by tag name; integer ids live on the SeedRows.
Cents → USD. A plan, checkpoint or baseline already ours under the same key is linked, not duplicated.
"""

from collections import defaultdict
from functools import partial
from typing import Any, ClassVar

from django.db import models, transaction

from ledger_app.models import (
    Baseline,
    Checkpoint,
    CheckpointRestore,
    DeadLetter,
    ErrorLog,
    GateResult,
    LedgerEvent,
    Rollback,
    TokenUsage,
)
from ralphsite.core.access import scope_path_of
from ralphsite.moving.seed_io.base import (
    EXTRA,
    ImportContext,
    MappedTable,
    Parent,
    Row,
    SeedImporter,
    SessionTable,
    TableImport,
    TableResult,
    cents,
    count,
    count_or_null,
    enum,
    flag,
    json_or,
    json_value,
    moment,
    number,
    text,
    usd,
)
from ralphsite.moving.seed_io.ledger_rows import event_values_checked
from ralphsite.moving.seed_io.refresh import REFUSALS, refusal
from sessions_app.models import (
    AcceptanceCriterion,
    AgentInvocation,
    Bug,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    FileAccess,
    Interview,
    InterviewQuestion,
    Plan,
    ProgressSummary,
    ResearchFinding,
    ResearchSession,
    SessionPhase,
    SessionStateEntry,
    Task,
    TaskAttempt,
    TaskFile,
)
from sessions_app.services.tasks import task_links_import, task_scope_import

TASK_STATUS = {"pending": "not_started"}


def seconds_to_ms(value: Any) -> int | None:
    return None if value is None else int(value) * 1000


seconds_to_ms.inverse = lambda ms: ms // 1000  # type: ignore[attr-defined] - read by export_seed


def flag_or_true(value: Any) -> bool:
    """A BOOLEAN DEFAULT TRUE column: NULL is the default (kept on the SeedRow as NULL)."""
    return True if value is None else flag(value)


class Keyed(MappedTable):
    """A table whose text id (`key_column`) is our `key`: a row already ours with that key is linked, in the
    same session for a model keyed within its session (`ralphsite.core.addressing`)."""

    key_column: ClassVar[str]

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["key"] = text(row[self.key_column])
        return values

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        same_key = self.model._default_manager.filter(key=values["key"])
        if scope_path_of(self.model) == "session":  # keyed within its session
            same_key = same_key.filter(session_id=values.get("session_id"))
        return same_key.first()

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {self.key_column: obj.key}


class DevTeamSessions(SessionTable):
    table, created = "sessions", "started_at"
    columns: ClassVar = {
        "started_at": ("started_at", moment), "ended_at": ("ended_at", moment), "command": ("command", text),
        "command_type": ("command_type", text), "status": ("status", enum({}, default="running")),
        "exit_reason": ("exit_reason", text), "current_phase": ("current_phase", text),
        "current_task_id": ("current_task_key", text), "current_agent": ("current_agent", text),
        "current_model": ("current_model", text), "current_iteration": ("current_iteration", count),
        "max_iterations": ("max_iterations", lambda v: count(v, 10)),
        "consecutive_failures": ("consecutive_failures", count),
        "max_consecutive_failures": ("max_consecutive_failures", lambda v: count(v, 5)),
        "circuit_breaker_state": ("circuit_breaker_state", enum({}, default="closed")),
        "plan_id": ("plan_key", text), "sprint_id": ("sprint_key", text),
        "execution_mode": ("execution_mode", enum({}, default="normal")),
        "total_tokens_input": ("total_tokens_input", count), "total_tokens_output": ("total_tokens_output", count),
        "total_cost_cents": ("total_cost_usd", cents), "bug_council_activated": ("bug_council_activated", flag),
        "bug_council_reason": ("bug_council_reason", text),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        assert isinstance(values, dict)
        if values["current_iteration"] < 1:  # DevTeam starts at 0, ours at 1: the 0 is kept on the SeedRow
            values.setdefault(EXTRA, {})["current_iteration"] = row["current_iteration"]
            values["current_iteration"] = 1
        return values


class SessionState(MappedTable):
    table, model, key_columns, created = "session_state", SessionStateEntry, ("session_id", "key"), "updated_at"
    columns: ClassVar = {"key": ("key", text), "value": ("value", json_or(dict)), "updated_at": ("updated_at", moment)}


class Events(MappedTable):
    """Ledger events go through the ledger's manager: each is put on the hash chain in id order."""

    table, model, created, order_by = "events", LedgerEvent, None, "id"
    append_only = True
    columns: ClassVar = {
        "timestamp": ("timestamp", moment), "event_type": ("type", text), "event_category": ("category", text),
        "agent": ("agent", text), "model": ("model", text), "iteration": ("iteration", number),
        "phase": ("phase", text), "data": ("data", json_or(dict)), "metadata": ("meta", json_or(dict)),
        "message": ("message", text), "tokens_input": ("tokens_in", count), "tokens_output": ("tokens_out", count),
        "cost_cents": ("cost_usd", cents),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["tokens_total"] = values["tokens_in"] + values["tokens_out"]
            if values["timestamp"] is None:
                values.pop("timestamp")
            return event_values_checked(self, row, values)
        return values


class AgentRuns(MappedTable):
    table, model, created = "agent_runs", AgentInvocation, "started_at"
    columns: ClassVar = {
        "agent": ("agent", text), "agent_type": ("agent_type", text), "model": ("model", text),
        "started_at": ("started_at", moment), "ended_at": ("completed_at", moment),
        "duration_seconds": ("duration_ms", seconds_to_ms), "status": ("status", enum({}, default="running")),
        "error_message": ("error_message", text), "error_type": ("error_type", text), "task_id": ("task_key", text),
        "iteration": ("iteration", number), "attempt": ("attempt", lambda v: count(v, 1)),
        "tokens_input": ("tokens_input", count), "tokens_output": ("tokens_output", count),
        "cost_cents": ("cost_usd", cents), "files_changed": ("files_changed", json_or(list)),
        "output_summary": ("output_summary", text),
    }


class GateResults(MappedTable):
    table, model, created = "gate_results", GateResult, "timestamp"
    columns: ClassVar = {
        "gate": ("gate", text), "iteration": ("iteration", count), "passed": ("passed", flag),
        "details": ("details", json_or(dict)), "error_count": ("error_count", number),
        "warning_count": ("warning_count", number), "coverage_percent": ("coverage_percent", number),
        "timestamp": ("timestamp", moment), "duration_seconds": ("duration_seconds", number),
    }


class Escalations(MappedTable):
    table, model, created = "escalations", Escalation, "timestamp"
    columns: ClassVar = {
        "from_model": ("from_model", text), "to_model": ("to_model", text), "agent": ("agent", text),
        "reason": ("reason", text), "failure_count": ("failure_count", number), "iteration": ("iteration", number),
        "task_id": ("task_key", text), "timestamp": ("timestamp", moment),
    }


class Interviews(MappedTable):
    table, model, created = "interviews", Interview, "started_at"
    columns: ClassVar = {
        "interview_type": ("interview_type", text), "started_at": ("started_at", moment),
        "completed_at": ("completed_at", moment), "status": ("status", enum({}, default="in_progress")),
        "questions_asked": ("questions_asked", count), "questions_answered": ("questions_answered", count),
    }


class InterviewQuestions(MappedTable):
    table, model, sessions = "interview_questions", InterviewQuestion, None
    parents: ClassVar = {"interview_id": Parent("interviews", "interview_id", "interview")}
    columns: ClassVar = {
        "question_key": ("question_key", text), "question_text": ("question_text", text),
        "question_type": ("question_type", enum({}, default="text")), "response": ("response", text),
        "responded_at": ("responded_at", moment), "sequence": ("sequence", count),
        "required": ("required", flag_or_true),
    }


class ResearchSessions(MappedTable):
    table, model, created = "research_sessions", ResearchSession, "started_at"
    columns: ClassVar = {
        "started_at": ("started_at", moment), "completed_at": ("completed_at", moment),
        "status": ("status", enum({}, default="in_progress")), "findings_count": ("findings_count", count),
        "recommendations_count": ("recommendations_count", count), "blockers_found": ("blockers_found", count),
    }


class ResearchFindings(MappedTable):
    table, model, sessions, created = "research_findings", ResearchFinding, None, "timestamp"
    parents: ClassVar = {"research_session_id": Parent("research_sessions", "research_session_id",
                                                       "research session")}
    columns: ClassVar = {
        "finding_type": ("finding_type", text), "title": ("title", text), "description": ("description", text),
        "source": ("source", text), "file_path": ("file_path", text), "evidence": ("evidence", json_value),
        "priority": ("priority", enum({}, default="medium")), "timestamp": ("recorded_at", moment),
    }


class Bugs(MappedTable):
    table, model, created, session_required = "bugs", Bug, "created_at", False
    columns: ClassVar = {
        "description": ("description", text), "severity": ("severity", text), "complexity": ("complexity", text),
        "root_cause": ("root_cause", text), "diagnosis_method": ("diagnosis_method", text),
        "fix_summary": ("fix_summary", text), "files_changed": ("files_changed", json_or(list)),
        "prevention_measures": ("prevention_measures", text), "status": ("status", enum({}, default="open")),
        "created_at": ("created_at", moment), "resolved_at": ("resolved_at", moment),
        "council_activated": ("council_activated", flag), "council_votes": ("council_votes", json_value),
    }


class Plans(Keyed):
    table, model, sessions, created, key_column = "plans", Plan, None, "created_at", "id"
    parents: ClassVar = {"research_session_id": Parent("research_sessions", "research_session_id", "research session",
                                                       required=False)}
    columns: ClassVar = {
        "name": ("name", text), "description": ("description", text), "plan_type": ("plan_type", text),
        "prd_path": ("prd_path", text), "tasks_path": ("tasks_path", text), "sprints_path": ("sprints_path", text),
        "status": ("status", enum({}, default="draft")), "total_sprints": ("total_sprints", count),
        "completed_sprints": ("completed_sprints", count), "total_tasks": ("total_tasks", count),
        "completed_tasks": ("completed_tasks", count), "created_at": ("created_at", moment),
        "started_at": ("started_at", moment), "completed_at": ("completed_at", moment),
    }


class Tasks(MappedTable):
    """`depends_on`/`blocks` and `parent_task_id` become the task's dependency edges and parent, set once every
    task is in (`after_table`) by the domain's service, so the API's rules hold: an edge to a task of another
    session, one that would close a cycle or a parent loop is left out and reported. `scope_files` becomes the
    task's file rows (`TaskFiles.after_table`). The columns stay on the SeedRow as the tool wrote them
    (export_seed writes them back), as does a plan that is not in the file."""

    table, model, created, session_required, tracks_touched = "tasks", Task, "created_at", False, True
    parents: ClassVar = {"plan_id": Parent("plans", "plan_id", "plan", required=False)}
    columns: ClassVar = {
        "name": ("title", text), "description": ("description", text), "task_type": ("work_type", text),
        "sprint_id": ("sprint_key", text), "status": ("status", enum(TASK_STATUS, default="not_started")),
        "scope_json": ("scope", json_value), "assigned_agent": ("assigned_agent", text),
        "assigned_model": ("assigned_model", text), "priority": ("priority", enum({}, default="medium")),
        "sequence": ("sequence", count), "estimated_effort": ("estimated_effort", text),
        "actual_iterations": ("iteration_count", count), "files_changed": ("files_changed", json_or(list)),
        "started_at": ("started_at", moment), "completed_at": ("completed_at", moment),
        "result_summary": ("result_summary", text), "error_message": ("error_message", text),
        "commit_sha": ("commit_sha", text),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["key"] = text(row["id"])
            if "scope_files" in row:  # as written, NULL included: the file rows do not say which were listed here
                values.setdefault(EXTRA, {})["scope_files"] = row["scope_files"]
        return values

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        """A task made here lists its allowed file rows as its scope, as DevTeam writes it (comma-separated)."""
        scope = sorted(f.path for f in obj.files.all() if f.access_type == FileAccess.ALLOWED)
        return {"id": obj.key, "scope_files": ",".join(scope) or None}

    def after_table(self, context: ImportContext, result: TableResult) -> None:
        """The edges of the tasks this import created or changed: a task depends on the keys of its `depends_on`
        and on every task whose `blocks` names it."""
        if not result.touched:
            return
        extras = dict(context.seed_rows(self.table).values_list("source_key", "extra"))
        blocked_by: dict[str, set[str]] = defaultdict(set)
        for key, extra in extras.items():
            for blocked in _listed(extra.get("blocks")):
                blocked_by[blocked].add(key)
        resolve = partial(context.resolve, self.table)
        # A changed `blocks` changes the edges of the tasks it names too.
        linking = list(dict.fromkeys([*result.touched, *(blocked for key in result.touched
                                                         for blocked in _listed(extras[key].get("blocks"))
                                                         if blocked in extras)]))
        wanted = {key: [*_listed(extras[key].get("depends_on")), *sorted(blocked_by[key] - {key})]
                  for key in linking}
        named = {*linking, *(extras[key].get("parent_task_id") for key in linking),
                 *(k for keys in wanted.values() for k in keys)}
        tasks = Task.objects.in_bulk([task_id for k in named if (task_id := resolve(k))])
        def linkable(key: str, task: Task, other: str) -> Task | None:
            """The task `other` names, when it can be linked to `task` (else reported, None)."""
            target = tasks.get(resolve(other))
            problem = ("is not in the file" if target is None
                       else "is in another session" if target.session_id != task.session_id else None)
            if problem:
                result.set_aside_one(f"{key}: task {other} it names {problem}")
            return None if problem else target

        for key in linking:
            task, parent_key = tasks.get(resolve(key)), extras[key].get("parent_task_id")
            if task is None or not (wanted[key] or parent_key or task.dependencies.exists()):
                continue
            edges = [other for other in dict.fromkeys(wanted[key]) if linkable(key, task, other)]
            parent = linkable(key, task, parent_key) if parent_key else None
            try:
                with transaction.atomic():
                    task_links_import(task=task, depends_on=edges, parent=parent)
            except REFUSALS as error:
                result.set_aside_one(f"{key}: dependencies and parent not set: {refusal(error)}")


def _listed(value: Any) -> list[str]:
    """A `depends_on`/`blocks` column's task ids or a `scope_files` column's paths: a JSON array (or, as DevTeam
    writes scope_files and loosely typed tools the rest, one item or comma-separated items)."""
    parsed = json_value(value, default=[])
    if isinstance(parsed, str):
        parsed = parsed.split(",")
    elif not isinstance(parsed, list):
        parsed = [parsed]
    return [str(k).strip() for k in parsed if k is not None and str(k).strip()]


class TaskAttempts(MappedTable):
    table, model, created, session_required = "task_attempts", TaskAttempt, "started_at", False
    columns: ClassVar = {
        "attempt_number": ("attempt_number", count), "model": ("model", text), "agent": ("agent", text),
        "started_at": ("started_at", moment), "ended_at": ("ended_at", moment),
        "duration_seconds": ("duration_seconds", number), "status": ("status", text),
        "error_type": ("error_type", text), "error_message": ("error_message", text),
        "tokens_input": ("tokens_input", count_or_null), "tokens_output": ("tokens_output", count_or_null),
        "cost_cents": ("cost_usd", cents),
    }
    parents: ClassVar = {"task_id": Parent("tasks", "task_id", "task")}


class TaskFiles(MappedTable):
    """DevTeam's task_files rows, then the tasks' `scope_files` as the file rows the API makes of bare paths
    (`task_scope_import`): a path both list is the task_files row. Export writes those scope rows back as the
    column only."""

    table, model, sessions = "task_files", TaskFile, None
    parents: ClassVar = {"task_id": Parent("tasks", "task_id", "task")}
    columns: ClassVar = {"file_path": ("path", text), "file_type": ("file_type", text),
                         "access_type": ("access_type", enum({}, default="allowed")),
                         "is_pattern": ("is_pattern", flag)}

    def after_table(self, context: ImportContext, result: TableResult) -> None:
        scopes = {object_id: paths for object_id, extra in context.seed_rows("tasks").values_list("object_id", "extra")
                  if (paths := _listed(extra.get("scope_files")))}
        dropped = self._scope_dropped(context, scopes)
        for task in Task.objects.filter(pk__in=[*scopes, *dropped]).order_by("pk"):
            try:
                with transaction.atomic():
                    task_scope_import(task=task, paths=scopes.get(task.pk, []), dropped=dropped.get(task.pk, []))
            except REFUSALS as error:
                result.set_aside_one(f"{task.key}: scope_files not set: {refusal(error)}")

    @staticmethod
    def _scope_dropped(context: ImportContext, scopes: dict[str, list[str]]) -> dict[str, list[str]]:
        """The paths a newer copy took out of a task's scope_files (by task id): the file rows the column made
        go. A path the tool's own task_files row has stays: that table's rows follow their own rows."""
        dropped = {}
        for key, before in context.replaced.get("tasks", {}).items():
            task_id = context.resolve("tasks", key)
            paths = [path for path in _listed(before.get("scope_files")) if path not in scopes.get(task_id, [])]
            if task_id and paths:
                dropped[task_id] = paths
        if dropped:
            tools = set(TaskFile.objects.filter(pk__in=context.seed_rows("task_files").values("object_id"),
                                                task__in=dropped).values_list("task_id", "path"))
            dropped = {task_id: kept for task_id, paths in dropped.items()
                       if (kept := [path for path in paths if (task_id, path) not in tools])}
        return dropped

    def exported(self, obj: models.Model, imported: bool, exporter: Any) -> bool:
        """A row the task's scope_files made (not a task_files row of the tool's) goes back as that column only."""
        return imported or obj.path not in _listed(exporter.seed_extra("tasks", obj.task_id).get("scope_files"))


class CriteriaTable(MappedTable):
    sessions = None
    created = "created_at"
    export_needs_session = True  # keyed by plan, not session: left out of a per-session export

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        """Keyed by plan and key, not by session: another project's row of the same plan and key is that row."""
        return self.model._default_manager.filter(plan_key=values["plan_key"], key=values["key"]).first()


class AcceptanceCriteria(CriteriaTable):
    table, model, required = "acceptance_criteria", AcceptanceCriterion, False
    columns: ClassVar = {
        "task_id": ("task_key", text), "sprint_id": ("sprint_key", text), "plan_id": ("plan_key", text),
        "criterion_id": ("key", text), "description": ("description", text), "category": ("category", text),
        "passes": ("passes", flag), "verified_at": ("verified_at", moment), "verified_by": ("verified_by", text),
        "verification_method": ("verification_method", text),
        "verification_evidence": ("verification_evidence", text),
        "last_failure_reason": ("last_failure_reason", text), "failure_count": ("failure_count", count),
        "priority": ("priority", enum({}, default="medium")), "sequence": ("sequence", count),
        "created_at": ("created_at", moment), "updated_at": ("updated_at", moment),
    }


class Features(CriteriaTable):
    table, model, required = "features", Feature, False
    columns: ClassVar = {
        "plan_id": ("plan_key", text), "sprint_id": ("sprint_key", text), "feature_id": ("key", text),
        "name": ("name", text), "description": ("description", text), "category": ("category", text),
        "steps": ("steps", json_or(list)), "passes": ("passes", flag), "all_steps_pass": ("all_steps_pass", flag),
        "steps_total": ("steps_total", count), "steps_passed": ("steps_passed", count),
        "verified_at": ("verified_at", moment), "verified_by": ("verified_by", text),
        "priority": ("priority", enum({}, default="medium")), "sequence": ("sequence", count),
        "created_at": ("created_at", moment), "updated_at": ("updated_at", moment),
    }


class ContextBudgets(MappedTable):
    table, model, required, created = "context_budgets", ContextBudget, False, "updated_at"
    columns: ClassVar = {
        "model": ("model", text), "context_limit": ("context_limit", count), "current_usage": ("current_usage", count),
        "usage_percent": ("usage_percent", lambda v: 0.0 if v is None else float(v)),
        "warn_threshold": ("warn_threshold", count), "summarize_threshold": ("summarize_threshold", count),
        "status": ("status", enum({}, default="ok")), "last_action": ("last_action", text),
        "updated_at": ("updated_at", moment),
    }


class ContextSnapshots(MappedTable):
    table, model, required, created = "context_snapshots", ContextSnapshot, False, "created_at"
    columns: ClassVar = {
        "snapshot_type": ("snapshot_type", text), "tokens_before": ("tokens_before", number),
        "tokens_after": ("tokens_after", number), "tokens_saved": ("tokens_saved", number),
        "preserved_items": ("preserved_items", json_value), "summarized_items": ("summarized_items", json_value),
        "summary_text": ("summary_text", text), "trigger_reason": ("trigger_reason", text),
    }


class TokenUsageRows(MappedTable):
    """A call naming a session not in the file keeps that id (`session_key`): session-cost answers it, as
    v_session_cost does."""

    table, model, required, created, session_required = "token_usage", TokenUsage, False, None, False
    columns: ClassVar = {
        "task_id": ("task_key", text), "sprint_id": ("sprint_key", text), "model": ("model", text),
        "input_tokens": ("input_tokens", count), "output_tokens": ("output_tokens", count),
        "cost_usd": ("cost_usd", usd), "operation": ("operation", text), "agent_name": ("agent", text),
        "recorded_at": ("recorded_at", moment),
    }

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        key = text(row["session_id"])
        if isinstance(values, dict) and values["session_id"] is None and key \
                and len(key) <= TokenUsage._meta.get_field("session_key").max_length:  # else on the SeedRow only
            values["session_key"] = key
        return values


class ErrorLogRows(MappedTable):
    table, model, required, created, session_required = "error_log", ErrorLog, False, None, False
    columns: ClassVar = {
        "task_id": ("task_key", text), "operation": ("operation", text), "error_type": ("error_type", text),
        "error_message": ("error_message", text), "error_pattern": ("error_pattern", text),
        "recovery_action": ("recovery_action", text),
        "recovery_success": ("recovery_success", lambda v: None if v is None else flag(v)),
        "retry_count": ("retry_count", count), "circuit_opened": ("circuit_opened", flag),
        "logged_at": ("logged_at", moment),
    }


class DeadLetters(MappedTable):
    table, model, required, created, session_required = "dead_letter", DeadLetter, False, None, False
    columns: ClassVar = {
        "operation_type": ("operation_type", text), "operation_params": ("operation_params", json_or(dict)),
        "error_message": ("error_message", text), "stack_trace": ("stack_trace", text),
        "attempt_count": ("attempt_count", lambda v: count(v, 1)), "task_id": ("task_key", text),
        "status": ("status", enum({}, default="pending")), "retry_after": ("retry_after", moment),
        "expires_at": ("expires_at", moment), "created_at": ("created_at", moment),
    }


class ProgressSummaries(MappedTable):
    table, model, required, created = "progress_summaries", ProgressSummary, False, "created_at"
    columns: ClassVar = {
        "summary_text": ("summary_text", text), "from_iteration": ("from_iteration", number),
        "to_iteration": ("to_iteration", number), "tasks_completed": ("tasks_completed", count),
        "tasks_remaining": ("tasks_remaining", count), "tests_passing": ("tests_passing", count),
        "tests_failing": ("tests_failing", count), "features_passing": ("features_passing", count),
        "features_total": ("features_total", count), "last_commit_sha": ("last_commit_sha", text),
        "files_changed": ("files_changed", json_or(list)), "created_at": ("created_at", moment),
    }


class SessionPhases(MappedTable):
    table, model, required, created = "session_phases", SessionPhase, False, "created_at"
    columns: ClassVar = {
        "phase_type": ("phase_type", text), "is_first_run": ("is_first_run", flag),
        "init_script_created": ("init_script_created", flag), "features_enumerated": ("features_enumerated", flag),
        "progress_file_created": ("progress_file_created", flag),
        "baseline_commit_sha": ("baseline_commit_sha", text), "features_attempted": ("features_attempted", count),
        "features_completed": ("features_completed", count), "resumed_from_session": ("resumed_from_session", text),
        "resume_point": ("resume_point", text), "created_at": ("created_at", moment),
    }


class Baselines(MappedTable):
    table, model, sessions, required, created = "baselines", Baseline, None, False, "created_at"
    export_needs_session = True  # a repository's, not a session's: left out of a per-session export
    columns: ClassVar = {
        "tag_name": ("tag_name", text), "commit_hash": ("commit_hash", text), "milestone": ("milestone", text),
        "description": ("description", text), "branch": ("branch", text), "files_changed": ("files_changed", count),
        "created_at": ("created_at", moment),
    }

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        return Baseline.objects.filter(tag_name=values["tag_name"]).first()


class Checkpoints(Keyed):
    """Keyed by checkpoint_id, the column checkpoint_restores names (the integer id stays on the SeedRow)."""

    table, model, required, created, session_required = "checkpoints", Checkpoint, False, "created_at", False
    key_columns, key_column = ("checkpoint_id",), "checkpoint_id"
    columns: ClassVar = {
        "path": ("path", text), "description": ("description", text), "git_commit": ("git_commit", text),
        "task_id": ("task_key", text), "sprint_id": ("sprint_key", text), "can_restore": ("can_restore", flag_or_true),
        "created_at": ("created_at", moment),
    }


class CheckpointRestores(MappedTable):
    table, model, sessions, required, created = "checkpoint_restores", CheckpointRestore, None, False, "restored_at"
    parents: ClassVar = {"checkpoint_id": Parent("checkpoints", "checkpoint_id", "checkpoint")}
    columns: ClassVar = {"restored_at": ("restored_at", moment)}


class Rollbacks(MappedTable):
    table, model, sessions, required, created = "rollbacks", Rollback, None, False, "rolled_back_at"
    export_needs_session = True  # DevTeam's rollbacks name no session
    columns: ClassVar = {
        "rollback_type": ("rollback_type", text), "target_commit": ("target_commit", text),
        "target_tag": ("target_tag", text), "reason": ("reason", text), "from_commit": ("from_commit", text),
        "trigger_type": ("trigger_type", text), "check_type": ("check_type", text),
        "backup_branch": ("backup_branch", text), "rolled_back_at": ("rolled_back_at", moment),
    }


class DevTeamImporter(SeedImporter):
    kind = "devteam"
    tables: ClassVar[list[TableImport]] = [
        DevTeamSessions(), SessionState(), Events(), AgentRuns(), GateResults(), Escalations(), Interviews(),
        InterviewQuestions(), ResearchSessions(), ResearchFindings(), Bugs(), Plans(), Tasks(), TaskAttempts(),
        TaskFiles(), AcceptanceCriteria(), Features(), ContextBudgets(), ContextSnapshots(), ProgressSummaries(),
        SessionPhases(), Baselines(), Checkpoints(), CheckpointRestores(), Rollbacks(), TokenUsageRows(),
        ErrorLogRows(), DeadLetters(),
    ]
