"""Ralph V2 (seed 000): `.ralph-sessions/ralph.db`, the EF Core entities with EF Core's default table names.

Enums are integers (the C# enums' ordinals, `IntEnumMap`), dates TEXT (`2026-02-09 14:30:00.1234567`,
UTC). The keys agents know stay keys: `Sessions.SessionId` → Session.key, `Tasks.TaskId` (`task-1`) →
Task.key, `Questions.QuestionId` → Question.key, `FeedbackItems.IssueId` → FeedbackItem.issue_key;
the GUID and integer ids live on the SeedRows (and name our rows' parents). A session, iteration,
plan snapshot, task or question already ours under the same key is linked, not duplicated.
`FilesJson` becomes the task's file rows; whatever of it those rows cannot say again (NULL, a value
that is no list of paths, an order other than by path, duplicates) is kept on the SeedRow.

The seed's ER diagram spells a few foreign keys otherwise than its entities (`TaskEntityId`,
`IterationEntityId`, `TaskDependencies.TaskId`); a file built from the diagram is read too.
"""

import json
from typing import Any, ClassVar

from django.db import models

from ralphsite.moving.seed_io.base import (
    EXTRA,
    ImportContext,
    IntEnumMap,
    MappedTable,
    Parent,
    Row,
    SeedImporter,
    SessionTable,
    TableImport,
    count,
    flag,
    json_or,
    moment,
    number,
    text,
)
from sessions_app.models import (
    AgentInvocation,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Iteration,
    PlanSnapshot,
    Question,
    ReplanningDelta,
    Signal,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
    path_is_pattern,
)
from sessions_app.models.feedback import FeedbackSeverity
from sessions_app.models.invocations import AgentRole, InvocationStatus
from sessions_app.models.questions import Level, QuestionCategory, QuestionStatus
from sessions_app.models.sessions import ENDING_STATES, OrchestratorState, SessionStatus
from sessions_app.models.steering import SignalType
from sessions_app.models.tasks import ReviewVerdict, TaskStatus, TaskType
from sessions_app.services.questions import signals_recorded_after_the_end_expire

# The C# enums of seed 000, in declaration order (EF Core stores the ordinal).
STATE = IntEnumMap(["Initializing", "Planning", "Batching", "ExecutingBatch", "ReviewingBatch", "SessionReview",
                    "Complete", "Replanning", "AwaitingFeedback", "Paused", "Stopped"], OrchestratorState,
                   default=OrchestratorState.INITIALIZING)
TASK_STATUS = IntEnumMap(["NotStarted", "InProgress", "ReviewPending", "Completed", "Failed", "Cancelled"],
                         TaskStatus, default=TaskStatus.NOT_STARTED)
TASK_TYPE = IntEnumMap(["Sequential", "Parallelizable"], TaskType, default=TaskType.SEQUENTIAL)
ROLE = IntEnumMap(["Planner", "Questioner", "Executor", "Reviewer"], AgentRole, default="")
CATEGORY = IntEnumMap(["Technical", "Requirements", "Constraints", "Assumptions", "Risks", "FeedbackDriven"],
                      QuestionCategory, default=QuestionCategory.TECHNICAL)
LEVEL = IntEnumMap(["Low", "Medium", "High"], Level, default=Level.MEDIUM)
CONFIDENCE = IntEnumMap(["Low", "Medium", "High"], Level, default="")
QUESTION_STATUS = IntEnumMap(["Unanswered", "Answered", "ResearchNeeded"], QuestionStatus,
                             default=QuestionStatus.UNANSWERED)
SEVERITY = IntEnumMap(["Critical", "Quality", "NewRequirement"], FeedbackSeverity, default=FeedbackSeverity.QUALITY)
VERDICT = IntEnumMap(["Qualified", "Failed"], ReviewVerdict, default="")
# Ralph V2 has no resume signal (any signal after a pause went on): ours is exported as its Info.
SIGNAL_TYPE = IntEnumMap(["Steer", "Pause", "Stop", "Info"], SignalType, default=SignalType.INFO,
                         exported_as={SignalType.RESUME: "Info"})
INVOCATION_STATUS = IntEnumMap(["Started", "Completed", "Failed", "Cancelled"], InvocationStatus,
                               default=InvocationStatus.STARTED)


SESSIONS, ITERATIONS, TASKS, BATCHES = "Sessions", "Iterations", "Tasks", "FeedbackBatches"
TASK = Parent(TASKS, "task_id", "task", session=True)
ITERATION = Parent(ITERATIONS, "iteration_id", "iteration", session=True)
BATCH = Parent(BATCHES, "batch_id", "feedback batch")


def iteration_number(value: Any) -> int:
    """Ralph counts iterations from 1; a 0 (or NULL) becomes our 1 and is kept on the SeedRow."""
    return max(count(value), 1)


iteration_number.inverse = int  # type: ignore[attr-defined] - ours is theirs (read by MappedTable, export_seed)


class RalphTable(MappedTable):
    key_columns = ("Id",)
    sessions, session_table, created = "SessionId", SESSIONS, "CreatedAt"


class KeyedBySession(RalphTable):
    """A table whose rows are unique per session under `unique` (our field): a row already ours is linked."""

    unique: ClassVar[str]

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        return self.model._default_manager.filter(session_id=values["session_id"],
                                                  **{self.unique: values[self.unique]}).first()


class Sessions(SessionTable):
    table, key_columns, key_column, created = SESSIONS, ("Id",), "SessionId", "CreatedAt"
    columns: ClassVar = {
        "UserRequest": ("user_request", text), "CurrentState": ("state", STATE),
        "CurrentIteration": ("current_iteration", iteration_number), "CurrentWave": ("current_wave", number),
        "CurrentPlanContent": ("current_plan_content", text), "DefaultModel": ("default_model", text),
        "MaxConcurrency": ("max_concurrency", count), "CreatedAt": ("started_at", moment),
        "UpdatedAt": ("updated_at", moment), "CompletedAt": ("ended_at", moment),
    }
    reads = frozenset({"SessionId"})

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        assert isinstance(values, dict)
        values["last_activity_at"] = values["updated_at"] or values["started_at"]
        # A Ralph session's state says whether it still runs: the domain's ENDING_STATES, as on every path.
        values["status"] = ENDING_STATES.get(values["state"], SessionStatus.RUNNING)
        if values["current_plan_content"]:
            values["plan_iteration"] = values["current_iteration"]
        return values

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {**super().export_columns(obj, exporter), "Id": exporter.session_ref(SESSIONS, obj.pk)}


class Iterations(KeyedBySession):
    table, model, unique, created = ITERATIONS, Iteration, "number", "StartedAt"
    columns: ClassVar = {
        "IterationNumber": ("number", iteration_number), "PlanningComplete": ("planning_complete", flag),
        "PlanningCompletedAt": ("planning_completed_at", moment), "TasksDefined": ("tasks_defined", count),
        "ReviewContent": ("review_content", text), "StartedAt": ("started_at", moment),
        "CompletedAt": ("completed_at", moment),
    }


class PlanSnapshots(KeyedBySession):
    table, model, unique = "PlanSnapshots", PlanSnapshot, "iteration_number"
    columns: ClassVar = {"IterationNumber": ("iteration_number", count), "Content": ("content", text),
                         "CreatedAt": ("created_at", moment)}


class Tasks(KeyedBySession):
    table, model, unique = TASKS, Task, "key"
    columns: ClassVar = {
        "TaskId": ("key", text), "Title": ("title", text), "Objective": ("objective", text),
        "TaskType": ("task_type", TASK_TYPE), "Status": ("status", TASK_STATUS),
        "StatusAnnotation": ("status_annotation", text), "SuccessCriteriaJson": ("success_criteria", json_or(list)),
        "Notes": ("notes", text), "WaveNumber": ("wave", number), "IterationCreated": ("iteration_created", count),
        "IterationUpdated": ("iteration_updated", count), "CreatedAt": ("created_at", moment),
        "UpdatedAt": ("updated_at", moment),
    }
    reads = frozenset({"FilesJson"})

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            files = _paths(row["FilesJson"])
            values["_files"] = sorted(set(files or []))
            if files != values["_files"]:  # what the file rows cannot say again
                values.setdefault(EXTRA, {})["FilesJson"] = row["FilesJson"]
        return values

    def build(self, values: dict[str, Any]) -> models.Model:
        files = values.pop("_files")
        task = super().build(values)
        task.seed_files = files
        return task

    def after_insert(self, objects: list[models.Model]) -> None:
        TaskFile.objects.bulk_create([TaskFile(task=task, path=path, is_pattern=path_is_pattern(path))
                                      for task in objects for path in task.seed_files])

    def changes(self, obj: models.Model, values: dict[str, Any]) -> dict[str, Any]:
        data = super().changes(obj, values)
        if sorted(obj.files.values_list("path", flat=True)) != values["_files"]:  # task_update sets the file rows
            data["files"] = [{"path": path, "is_pattern": path_is_pattern(path)} for path in values["_files"]]
        return data

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {"FilesJson": json.dumps([f.path for f in obj.files.all()], ensure_ascii=False)}


def _paths(value: Any) -> list[str] | None:
    """FilesJson's paths, or None when it holds no JSON list of paths (NULL, or text kept as it is)."""
    try:
        paths = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return None
    return paths if isinstance(paths, list) and all(isinstance(p, str) and p for p in paths) else None


class TaskDependencies(MappedTable):
    table, model, sessions = "TaskDependencies", TaskDependency, None
    key_columns = ("TaskItemId", "DependsOnTaskItemId")
    parents: ClassVar = {"TaskItemId": Parent(TASKS, "task_id", "task"),
                         "DependsOnTaskItemId": Parent(TASKS, "depends_on_id", "task")}
    aliases: ClassVar = {"TaskItemId": ("TaskId",), "DependsOnTaskItemId": ("DependsOnTaskId",)}

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict) and values["task_id"] == values["depends_on_id"]:
            return "a task depending on itself"
        return values

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        return TaskDependency.objects.filter(task_id=values["task_id"], depends_on_id=values["depends_on_id"]).first()


class TaskReports(RalphTable):
    """Ralph's reports are our task attempts (one per attempt number)."""

    table, model, sessions = "TaskReports", TaskAttempt, None
    parents: ClassVar = {"TaskItemId": TASK}
    aliases: ClassVar = {"TaskItemId": ("TaskEntityId",)}
    columns: ClassVar = {
        "AttemptNumber": ("attempt_number", count), "IterationNumber": ("iteration_number", count),
        "ImplementationReport": ("implementation_report", text), "ReviewReport": ("review_report", text),
        "ReviewVerdict": ("review_verdict", VERDICT), "CreatedAt": ("created_at", moment),
        "ReviewedAt": ("reviewed_at", moment),
    }

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        return TaskAttempt.objects.filter(task_id=values["task_id"], attempt_number=values["attempt_number"]).first()


class Questions(KeyedBySession):
    table, model, unique = "Questions", Question, "key"
    columns: ClassVar = {
        "Category": ("category", CATEGORY), "IterationNumber": ("iteration_number", iteration_number),
        "CycleNumber": ("cycle_number", count), "QuestionId": ("key", text), "QuestionText": ("text", text),
        "Priority": ("priority", LEVEL), "Status": ("status", QUESTION_STATUS), "Impact": ("impact", text),
        "QuestionType": ("question_type", text), "SourceIssueId": ("source_issue_key", text),
        "Answer": ("answer", text), "AnswerSource": ("answer_source", text),
        "AnswerConfidence": ("answer_confidence", CONFIDENCE), "AnswerImplication": ("answer_implication", text),
        "CreatedAt": ("created_at", moment), "AnsweredAt": ("answered_at", moment),
    }


class FeedbackBatches(RalphTable):
    table, model, sessions = BATCHES, FeedbackBatch, None
    parents: ClassVar = {"IterationId": ITERATION}
    aliases: ClassVar = {"IterationId": ("IterationEntityId",)}
    columns: ClassVar = {"BatchTimestamp": ("batch_timestamp", text), "Summary": ("summary", text),
                         "CreatedAt": ("created_at", moment)}


class FeedbackItems(RalphTable):
    table, model, sessions, created = "FeedbackItems", FeedbackItem, None, None
    parents: ClassVar = {"FeedbackBatchId": BATCH}
    columns: ClassVar = {
        "IssueId": ("issue_key", text), "Severity": ("severity", SEVERITY), "Description": ("description", text),
        "Evidence": ("evidence", text), "SuggestedFix": ("suggested_fix", text), "IsResolved": ("is_resolved", flag),
        "ResolvedAt": ("resolved_at", moment),
    }


def content(value: Any) -> bytes:
    return b"" if value is None else bytes(value) if not isinstance(value, str) else value.encode()


class FeedbackAttachments(RalphTable):
    table, model, sessions = "FeedbackAttachments", FeedbackAttachment, None
    parents: ClassVar = {"FeedbackBatchId": BATCH}
    columns: ClassVar = {"FileName": ("file_name", text), "FileContent": ("content", content),
                         "Description": ("description", text), "CreatedAt": ("created_at", moment)}

    def fields(self, row: Row, context: ImportContext) -> dict[str, Any] | str:
        values = super().fields(row, context)
        if isinstance(values, dict):
            values["size"] = len(values["content"])
            if isinstance(row["FileContent"], str):  # TEXT where EF Core writes a BLOB: kept as written
                values.setdefault(EXTRA, {})["FileContent"] = row["FileContent"]
        return values


class ReplanningDeltas(RalphTable):
    table, model, sessions = "ReplanningDeltas", ReplanningDelta, None
    parents: ClassVar = {"IterationId": Parent(ITERATIONS, "iteration_id", "iteration")}
    aliases: ClassVar = {"IterationId": ("IterationEntityId",),
                         "PreviousPlanSnapshotRef": ("PreviousPlanSnapshot",)}
    columns: ClassVar = {
        "PreviousPlanSnapshotRef": ("previous_plan_snapshot_ref", text), "Summary": ("summary", text),
        "RemovedItems": ("removed_items", text), "AddedItems": ("added_items", text),
        "ModifiedItems": ("modified_items", text), "Rationale": ("rationale", text),
        "CreatedAt": ("created_at", moment),
    }

    def existing(self, row: Row, values: dict[str, Any], context: ImportContext) -> models.Model | None:
        return ReplanningDelta.objects.filter(iteration_id=values["iteration_id"]).first()


class Signals(RalphTable):
    table, model = "Signals", Signal
    columns: ClassVar = {"SignalType": ("type", SIGNAL_TYPE), "Message": ("message", text),
                         "IsProcessed": ("is_processed", flag), "CreatedAt": ("sent_at", moment),
                         "ProcessedAt": ("processed_at", moment)}

    def after_insert(self, objects: list[models.Model]) -> None:
        # One left unpolled in a session that ended expires with it, as here (the console lists no ghost Stop).
        signals_recorded_after_the_end_expire(signal_ids=[signal.pk for signal in objects])


class AgentInvocations(RalphTable):
    table, model, created = "AgentInvocations", AgentInvocation, "StartedAt"
    parents: ClassVar = {"TaskItemId": Parent(TASKS, "task_id", "task", required=False)}
    aliases: ClassVar = {"TaskItemId": ("TaskEntityId",)}
    columns: ClassVar = {
        "AgentRole": ("role", ROLE), "Mode": ("mode", text), "Prompt": ("prompt", text),
        "Response": ("response", text), "InvocationStatus": ("status", INVOCATION_STATUS),
        "DurationMs": ("duration_ms", number), "StartedAt": ("started_at", moment),
        "CompletedAt": ("completed_at", moment),
    }


class RalphImporter(SeedImporter):
    kind = "ralph"
    # EF Core's record of the migrations applied: without it, Ralph V2's MigrateAsync() creates its tables again.
    kept_tables: ClassVar = {"__EFMigrationsHistory": "MigrationId"}
    tables: ClassVar[list[TableImport]] = [
        Sessions(), Iterations(), PlanSnapshots(), Tasks(), TaskDependencies(), TaskReports(), Questions(),
        FeedbackBatches(), FeedbackItems(), FeedbackAttachments(), ReplanningDeltas(), Signals(),
        AgentInvocations(),
    ]
