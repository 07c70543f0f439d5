"""DevTeam (seed 003): `.devteam/devteam.db`, any of schema v1 to v4.

v1's tables are required (sessions … escalations); v2's (acceptance_criteria … dead_letter) are
imported when present. Keys: sessions.id → Session.key, tasks.id → Task.key, plans.id → Plan.key,
criterion/feature/checkpoint ids → their keys; integer ids live on the SeedRows. Cents → USD.
"""

from typing import Any, ClassVar

from django.db import models

from ledger_app.models import DeadLetter, ErrorLog, GateResult, LedgerEvent, TokenUsage
from ralphsite.seed_io.base import (
    EXTRA,
    ImportContext,
    MappedTable,
    Row,
    SeedImporter,
    TableImport,
    cents,
    count,
    enum,
    flag,
    json_or,
    json_value,
    moment,
    number,
    text,
    usd,
)
from sessions_app.models import (
    AcceptanceCriterion,
    AgentInvocation,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    Session,
    SessionStateEntry,
    Task,
    TaskAttempt,
)

TASK_STATUS = {"pending": "not_started"}


def seconds_to_ms(value: Any) -> int | None:
    return None if value is None else int(value) * 1000


seconds_to_ms.inverse = lambda ms: ms // 1000  # type: ignore[attr-defined] - read by export_seed


class DevTeamSessions(MappedTable):
    table, model, sessions, created = "sessions", Session, None, "started_at"
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
        values.pop("id")
        values["key"] = text(row["id"])
        values["last_activity_at"] = values["ended_at"] or values["started_at"]
        if values["current_iteration"] < 1:  # DevTeam starts at 0, ours at 1: the 0 is kept on the SeedRow
            values.setdefault(EXTRA, {})["current_iteration"] = row["current_iteration"]
            values["current_iteration"] = 1
        return values

    def existing(self, row: Row, values: dict[str, Any]) -> models.Model | None:
        return Session.objects.filter(key=values["key"]).first()

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"id": obj.key or obj.pk}


class SessionState(MappedTable):
    table, model, key_columns, created = "session_state", SessionStateEntry, ("session_id", "key"), "updated_at"
    columns: ClassVar = {"key": ("key", text), "value": ("value", json_or(dict)), "updated_at": ("updated_at", moment)}


class Events(MappedTable):
    """Ledger events go through the ledger's manager: each is put on the hash chain in id order."""

    table, model, created, order_by = "events", LedgerEvent, None, "id"
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


class Tasks(MappedTable):
    """`depends_on`/`blocks` and `scope_files` stay on the SeedRow (JSON and text as the tool wrote them)."""

    table, model, created, session_required = "tasks", Task, "created_at", False
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
        return values

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"id": obj.key}


class TaskAttempts(MappedTable):
    table, model, created, session_required = "task_attempts", TaskAttempt, "started_at", False
    columns: ClassVar = {
        "attempt_number": ("attempt_number", count), "model": ("model", text), "agent": ("agent", text),
        "started_at": ("started_at", moment), "ended_at": ("ended_at", moment),
        "duration_seconds": ("duration_seconds", number), "status": ("status", text),
        "error_type": ("error_type", text), "error_message": ("error_message", text),
        "tokens_input": ("tokens_input", count), "tokens_output": ("tokens_output", count),
        "cost_cents": ("cost_usd", cents),
    }
    reads = frozenset({"task_id"})

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        task_id = context.resolve("tasks", row["task_id"])
        if task_id is None:
            return "its task is not in the file"
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["task_id"] = task_id
        return values

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"task_id": exporter.seed_key("tasks", obj.task_id)}


class CriteriaTable(MappedTable):
    sessions = None
    created = "created_at"
    export_needs_session = True  # keyed by plan, not session: left out of a per-session export


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
    table, model, required, created, session_required = "token_usage", TokenUsage, False, None, False
    columns: ClassVar = {
        "task_id": ("task_key", text), "sprint_id": ("sprint_key", text), "model": ("model", text),
        "input_tokens": ("input_tokens", count), "output_tokens": ("output_tokens", count),
        "cost_usd": ("cost_usd", usd), "operation": ("operation", text), "agent_name": ("agent", text),
        "recorded_at": ("recorded_at", moment),
    }


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


# Tables the importer knows but does not bring in yet: named in the summary, never silently passed over.
NOT_YET = ("interviews", "interview_questions", "research_sessions", "research_findings", "bugs", "plans",
           "task_files", "progress_summaries", "session_phases", "baselines", "checkpoints",
           "checkpoint_restores", "rollbacks")


class DevTeamImporter(SeedImporter):
    kind = "devteam"
    tables: ClassVar[list[TableImport]] = [
        DevTeamSessions(), SessionState(), Events(), AgentRuns(), GateResults(), Escalations(), Tasks(),
        TaskAttempts(), AcceptanceCriteria(), Features(), ContextBudgets(), ContextSnapshots(), TokenUsageRows(),
        ErrorLogRows(), DeadLetters(),
    ]
    not_imported = NOT_YET
