"""import_seed ralph: a Ralph V2 ralph.db (EF Core, integer enums, TEXT dates) built from seed 000's entities."""

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError
from rest_framework.test import APIClient

from ralphsite.core.models import SeedRow
from sessions_app.models import (
    AgentInvocation,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Iteration,
    PlanSnapshot,
    Question,
    ReplanningDelta,
    Session,
    Signal,
    Task,
    TaskAttempt,
    TaskDependency,
)
from tests.seed_io.helpers import import_seed, seed_database, summary_row

pytestmark = pytest.mark.django_db

AUTH, DONE = "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "7C9E6679-7425-40DE-944B-E07FC1F90AE7"
BINARY = bytes(range(256)) + b"\x89PNG\r\n\x1a\n\x00"

# task id → (session, TaskId, TaskType, Status, FilesJson, WaveNumber); every TaskItemStatus and TaskItemType
TASKS = {
    1: (AUTH, "task-1", 0, 3, '["src/auth.py", "tests/*.py"]', 1),
    2: (AUTH, "task-2", 1, 1, None, 2),
    3: (AUTH, "task-3", 1, 2, '["b.py", "a.py"]', 2),
    4: (AUTH, "task-4", 0, 0, "not json 🙃", None),
    5: (AUTH, "task-5", 0, 4, "[]", None),
    6: (AUTH, "task-6", 0, 5, None, None),
    7: (DONE, "task-1", 0, 3, None, 1),
}
DEPENDENCIES = [(2, 1), (3, 1), (4, 2), (4, 3)]  # a diamond: task-4 waits for task-2 and task-3, both for task-1


# What Ralph V2's MigrateAsync() wrote (its own migration ids, from its assembly): an export must have them.
MIGRATIONS = [{"MigrationId": "20260209142958_InitialCreate", "ProductVersion": "9.0.1"},
              {"MigrationId": "20260301101500_AddSignalsStage", "ProductVersion": "9.0.2"}]


def _ralph_db(path: Path, **overrides: list[dict[str, Any]]) -> Path:
    rows: dict[str, list[dict[str, Any]]] = {
        "__EFMigrationsHistory": MIGRATIONS,
        "Sessions": [
            {"Id": AUTH, "SessionId": "sess-auth", "UserRequest": "로그인 기능 추가 🚀", "CurrentState": 4,
             "CurrentIteration": 2, "CurrentWave": 2, "CurrentPlanContent": "# Plan\n- [x] task-1\n- [/] task-2",
             "DefaultModel": "gpt-5", "MaxConcurrency": 3, "CreatedAt": "2026-02-09 14:30:00.1234567",
             "UpdatedAt": "2026-02-09 15:00:00", "CompletedAt": None},
            {"Id": DONE, "SessionId": "sess-done", "UserRequest": "done", "CurrentState": 6, "CurrentIteration": 0,
             "CurrentWave": None, "CurrentPlanContent": None, "DefaultModel": "claude-sonnet", "MaxConcurrency": 1,
             "CreatedAt": "2026-02-10 09:00:00", "UpdatedAt": "2026-02-10 10:00:00",
             "CompletedAt": "2026-02-10T10:00:00Z"}],
        "Iterations": [
            {"Id": 1, "SessionId": AUTH, "IterationNumber": 1, "PlanningComplete": 1,
             "PlanningCompletedAt": "2026-02-09 14:40:00", "TasksDefined": 6, "ReviewContent": "리뷰 ✅",
             "StartedAt": "2026-02-09 14:30:00", "CompletedAt": "2026-02-09 14:50:00"},
            {"Id": 2, "SessionId": AUTH, "IterationNumber": 2, "PlanningComplete": 0, "PlanningCompletedAt": None,
             "TasksDefined": 0, "ReviewContent": None, "StartedAt": "2026-02-09 14:50:00", "CompletedAt": None},
            {"Id": 3, "SessionId": DONE, "IterationNumber": 1, "PlanningComplete": 1, "PlanningCompletedAt": None,
             "TasksDefined": 1, "ReviewContent": None, "StartedAt": "2026-02-10 09:00:00", "CompletedAt": None}],
        "PlanSnapshots": [{"Id": 1, "SessionId": AUTH, "IterationNumber": 1, "Content": "# Plan v1 📝",
                           "CreatedAt": "2026-02-09 14:49:00"}],
        "Tasks": [
            {"Id": id_, "SessionId": session, "TaskId": key, "Title": f"{key} 제목", "Objective": "objective",
             "TaskType": task_type, "Status": status, "StatusAnnotation": "(Attempt 2, Iteration 1)" if id_ == 3
             else None, "FilesJson": files, "SuccessCriteriaJson": '["tests pass", "린트 통과"]' if id_ == 1 else None,
             "Notes": None, "WaveNumber": wave, "IterationCreated": 1, "IterationUpdated": 1 + (id_ == 3),
             "CreatedAt": f"2026-02-09 14:4{id_}:00", "UpdatedAt": f"2026-02-09 14:5{id_}:00"}
            for id_, (session, key, task_type, status, files, wave) in TASKS.items()],
        "TaskDependencies": [{"TaskItemId": task, "DependsOnTaskItemId": on} for task, on in DEPENDENCIES],
        "TaskReports": [
            {"Id": 1, "TaskItemId": 1, "AttemptNumber": 1, "IterationNumber": 1, "ImplementationReport": "PART 1",
             "ReviewReport": "PART 2", "ReviewVerdict": 1, "CreatedAt": "2026-02-09 14:45:00",
             "ReviewedAt": "2026-02-09 14:46:00"},
            {"Id": 2, "TaskItemId": 1, "AttemptNumber": 2, "IterationNumber": 1, "ImplementationReport": "다시 ✨",
             "ReviewReport": "ok", "ReviewVerdict": 0, "CreatedAt": "2026-02-09 14:47:00",
             "ReviewedAt": "2026-02-09 14:48:00"},
            {"Id": 3, "TaskItemId": 3, "AttemptNumber": 1, "IterationNumber": 2, "ImplementationReport": "wip",
             "ReviewReport": None, "ReviewVerdict": None, "CreatedAt": "2026-02-09 14:55:00", "ReviewedAt": None}],
        "Questions": [
            {"Id": n + 1, "SessionId": AUTH, "Category": n, "IterationNumber": 1, "CycleNumber": 1 + n % 2,
             "QuestionId": f"Q-{n:03d}", "QuestionText": f"질문 {n}?", "Priority": n % 3, "Status": n % 3,
             "Impact": None, "QuestionType": "Root Cause" if n == 5 else None,
             "SourceIssueId": "ISS-001" if n == 5 else None, "Answer": "네" if n % 3 == 1 else None,
             "AnswerSource": None, "AnswerConfidence": None if n > 2 else n, "AnswerImplication": None,
             "CreatedAt": "2026-02-09 14:35:00", "AnsweredAt": None} for n in range(6)],
        "FeedbackBatches": [{"Id": 1, "IterationId": 1, "BatchTimestamp": "20260209-143000", "Summary": None,
                             "CreatedAt": "2026-02-09 14:50:30"}],
        "FeedbackItems": [
            {"Id": n + 1, "FeedbackBatchId": 1, "IssueId": f"ISS-00{n + 1}", "Severity": n,
             "Description": "버튼이 안 보여요 👀", "Evidence": None, "SuggestedFix": "fix" if n else None,
             "IsResolved": n % 2, "ResolvedAt": "2026-02-09 15:00:00" if n % 2 else None} for n in range(3)],
        "FeedbackAttachments": [
            {"Id": 1, "FeedbackBatchId": 1, "FileName": "스크린샷.png", "FileContent": BINARY, "Description": None,
             "CreatedAt": "2026-02-09 14:50:31"},
            {"Id": 2, "FeedbackBatchId": 1, "FileName": "empty.txt", "FileContent": b"", "Description": "빈 파일",
             "CreatedAt": "2026-02-09 14:50:32"}],
        "ReplanningDeltas": [{"Id": 1, "IterationId": 2, "PreviousPlanSnapshotRef": "plan.iteration-1",
                              "Summary": "added task-6", "RemovedItems": None, "AddedItems": "- task-6",
                              "ModifiedItems": None, "Rationale": "feedback", "CreatedAt": "2026-02-09 14:51:00"}],
        "Signals": [
            {"Id": n + 1, "SessionId": AUTH, "SignalType": n, "Message": None if n == 1 else f"신호 {n}",
             "IsProcessed": int(n < 2), "CreatedAt": f"2026-02-09 14:3{n}:00",
             "ProcessedAt": f"2026-02-09 14:3{n}:30" if n < 2 else None} for n in range(4)],
        "AgentInvocations": [
            {"Id": n + 1, "SessionId": AUTH, "TaskItemId": task, "AgentRole": n % 4, "Mode": mode,
             "Prompt": "prompt 🤖", "Response": None if status == 0 else "response", "InvocationStatus": status,
             "DurationMs": None if status == 0 else 1234 * (n + 1), "StartedAt": f"2026-02-09 14:4{n}:00",
             "CompletedAt": None if status == 0 else f"2026-02-09 14:4{n}:09"}
            for n, (task, mode, status) in enumerate([(None, "INITIALIZE", 1), (None, "brainstorm", 1), (1, None, 2),
                                                      (3, None, 0), (1, None, 3), (None, None, 9)])],
    }
    rows.update(overrides)
    return seed_database(path, "ralph", rows)


def test_it_imports_every_row_and_column_of_a_ralph_db(tmp_path: Path) -> None:
    path = _ralph_db(tmp_path / "ralph.db")
    output = import_seed("ralph", path)
    with sqlite3.connect(path) as db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"):
            read = db.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            assert summary_row(output, table) == [str(read), str(read), "0", "0", "0", "0"], table

    auth, done = Session.objects.get(key="sess-auth"), Session.objects.get(key="sess-done")
    assert (auth.user_request, auth.state, auth.status, auth.current_iteration, auth.current_wave,
            auth.max_concurrency, auth.plan_iteration, auth.started_at, auth.ended_at) == (
        "로그인 기능 추가 🚀", "reviewing_batch", "running", 2, 2, 3, 2,
        datetime(2026, 2, 9, 14, 30, 0, 123456, tzinfo=UTC), None)
    assert (done.state, done.status, done.current_iteration, done.current_plan_content, done.ended_at) == (
        "complete", "completed", 1, "", datetime(2026, 2, 10, 10, tzinfo=UTC))
    assert SeedRow.objects.get(source_table="Sessions", source_key=DONE).extra == {
        "CurrentIteration": 0, "CurrentPlanContent": None}

    tasks = {(t.session.key, t.key): t for t in Task.objects.select_related("session")}
    assert {key: (t.task_type, t.status) for (session, key), t in tasks.items() if session == "sess-auth"} == {
        "task-1": ("sequential", "completed"), "task-2": ("parallelizable", "in_progress"),
        "task-3": ("parallelizable", "review_pending"), "task-4": ("sequential", "not_started"),
        "task-5": ("sequential", "failed"), "task-6": ("sequential", "cancelled")}
    first = tasks[("sess-auth", "task-1")]
    assert (first.title, first.success_criteria, first.wave, first.created_at) == (
        "task-1 제목", ["tests pass", "린트 통과"], 1, datetime(2026, 2, 9, 14, 41, tzinfo=UTC))
    assert sorted(f.path for f in first.files.all()) == ["src/auth.py", "tests/*.py"]
    assert [f.is_pattern for f in first.files.order_by("path")] == [False, True]
    assert tasks[("sess-done", "task-1")].status == "completed"
    # FilesJson the file rows cannot say again stays as written: NULL, unsorted, not JSON
    kept = {row.source_key: row.extra.get("FilesJson", "-") for row in SeedRow.objects.filter(source_table="Tasks")}
    assert kept == {"1": "-", "2": None, "3": '["b.py", "a.py"]', "4": "not json 🙃", "5": "-", "6": None, "7": None}

    edges = {(d.task.key, d.depends_on.key) for d in TaskDependency.objects.select_related("task", "depends_on")}
    assert edges == {("task-2", "task-1"), ("task-3", "task-1"), ("task-4", "task-2"), ("task-4", "task-3")}
    attempts = list(TaskAttempt.objects.order_by("task__key", "attempt_number"))
    assert [(a.task.key, a.attempt_number, a.review_verdict, a.session) for a in attempts] == [
        ("task-1", 1, "failed", auth), ("task-1", 2, "qualified", auth), ("task-3", 1, "", auth)]

    questions = {q.key: q for q in Question.objects.all()}
    assert [questions[f"Q-{n:03d}"].category for n in range(6)] == [
        "technical", "requirements", "constraints", "assumptions", "risks", "feedback_driven"]
    assert [(q.priority, q.status, q.answer_confidence) for q in (questions["Q-000"], questions["Q-001"],
                                                                  questions["Q-002"])] == [
        ("low", "unanswered", "low"), ("medium", "answered", "medium"), ("high", "research_needed", "high")]

    assert {(i.session.key, i.number, i.planning_complete) for i in Iteration.objects.all()} == {
        ("sess-auth", 1, True), ("sess-auth", 2, False), ("sess-done", 1, True)}
    assert PlanSnapshot.objects.get().content == "# Plan v1 📝"
    batch = FeedbackBatch.objects.get()
    assert (batch.session, batch.iteration.number, batch.batch_timestamp) == (auth, 1, "20260209-143000")
    assert [(i.issue_key, i.severity, i.is_resolved) for i in FeedbackItem.objects.order_by("issue_key")] == [
        ("ISS-001", "critical", False), ("ISS-002", "quality", True), ("ISS-003", "new_requirement", False)]
    screenshot = FeedbackAttachment.objects.get(file_name="스크린샷.png")
    assert (bytes(screenshot.content), screenshot.size) == (BINARY, len(BINARY))
    assert ReplanningDelta.objects.get().iteration.number == 2
    assert [(s.type, s.is_processed, s.message) for s in Signal.objects.order_by("sent_at")] == [
        ("steer", True, "신호 0"), ("pause", True, ""), ("stop", False, "신호 2"), ("info", False, "신호 3")]

    invocations = list(AgentInvocation.objects.order_by("started_at"))
    assert [(i.role, i.status, i.task and i.task.key) for i in invocations] == [
        ("planner", "completed", None), ("questioner", "completed", None), ("executor", "failed", "task-1"),
        ("reviewer", "started", "task-3"), ("planner", "cancelled", "task-1"), ("questioner", "started", None)]
    # an InvocationStatus the seed does not declare: ours says started, the tool's 9 stays on the SeedRow
    assert SeedRow.objects.get(source_table="AgentInvocations", source_key="6").extra["InvocationStatus"] == 9


def test_waves_progress_and_the_task_graph_show_the_plan(tmp_path: Path, api: APIClient) -> None:
    import_seed("ralph", _ralph_db(tmp_path / "ralph.db"))
    waves = api.get("/api/v1/sessions/sess-auth/waves/")
    assert waves.status_code == 200, waves.content
    assert waves.json() == [{"wave": 1, "tasks": ["task-1", "task-5", "task-6"]},
                            {"wave": 2, "tasks": ["task-2", "task-3"]}, {"wave": 3, "tasks": ["task-4"]}]
    progress = api.get("/api/v1/sessions/sess-auth/progress/").json()
    assert progress["total"] == 6
    assert {status: n for status, n in progress["by_status"].items() if n} == {
        "completed": 1, "in_progress": 1, "review_pending": 1, "not_started": 1, "failed": 1, "cancelled": 1}
    task = api.get("/api/v1/sessions/sess-auth/tasks/task-4/").json()
    assert sorted(task["depends_on"]) == ["task-2", "task-3"]


def test_a_second_import_creates_nothing_and_a_newer_file_only_its_new_rows(tmp_path: Path) -> None:
    path = _ralph_db(tmp_path / "ralph.db")
    import_seed("ralph", path)
    again = import_seed("ralph", path)
    assert "nothing new" in again and summary_row(again, "Tasks") == ["7", "0", "0", "7", "0", "0"]
    with sqlite3.connect(path) as db:
        db.execute("""INSERT INTO "Tasks" VALUES (8, ?, 'task-7', 'new', 'o', 0, 0, NULL, NULL, NULL, NULL, NULL,
                      2, 2, '2026-02-09 16:00:00', '2026-02-09 16:00:00')""", [AUTH])
        db.execute('INSERT INTO "TaskDependencies" VALUES (8, 4)')
    newer = import_seed("ralph", path)
    assert summary_row(newer, "Tasks") == ["8", "1", "0", "7", "0", "0"] and "2 rows created" in newer
    assert Task.objects.get(key="task-7").dependencies.get().depends_on.key == "task-4"


def test_a_session_agents_already_use_is_linked_with_its_iteration_not_duplicated(tmp_path: Path,
                                                                                   api: APIClient) -> None:
    created = api.post("/api/v1/sessions/", {"key": "sess-auth", "user_request": "x"}, format="json")
    assert created.status_code == 201, created.content
    import_seed("ralph", _ralph_db(tmp_path / "ralph.db"))
    session = Session.objects.get(key="sess-auth")
    assert str(session.pk) == created.json()["id"] and session.iterations.count() == 2


def test_it_reads_a_file_built_from_the_seeds_er_diagram(tmp_path: Path) -> None:
    """The ER diagram spells TaskReports.TaskEntityId, FeedbackBatches.IterationEntityId, TaskDependencies'
    TaskId/DependsOnTaskId and ReplanningDeltas.PreviousPlanSnapshot; the entities, as EF Core does, not."""
    path = _ralph_db(tmp_path / "ralph.db")
    with sqlite3.connect(path) as db:
        for table, old, new in [("TaskReports", "TaskItemId", "TaskEntityId"),
                                ("FeedbackBatches", "IterationId", "IterationEntityId"),
                                ("TaskDependencies", "TaskItemId", "TaskId"),
                                ("TaskDependencies", "DependsOnTaskItemId", "DependsOnTaskId"),
                                ("ReplanningDeltas", "PreviousPlanSnapshotRef", "PreviousPlanSnapshot")]:
            db.execute(f'ALTER TABLE "{table}" RENAME COLUMN "{old}" TO "{new}"')
        db.execute('ALTER TABLE "Signals" ADD COLUMN "Origin" TEXT')
        db.execute('''UPDATE "Signals" SET "Origin" = '콘솔' WHERE "Id" = 1''')
    output = import_seed("ralph", path)
    assert summary_row(output, "TaskDependencies") == ["4", "4", "0", "0", "0", "0"]
    assert TaskAttempt.objects.count() == 3 and FeedbackBatch.objects.get().iteration.number == 1
    assert ReplanningDelta.objects.get().previous_plan_snapshot_ref == "plan.iteration-1"
    assert SeedRow.objects.get(source_table="Signals", source_key="1").extra == {"Origin": "콘솔"}


def test_a_signal_left_unpolled_in_an_ended_session_comes_in_expired(tmp_path: Path) -> None:
    """Issue #27 §3: the console shows no Stop 'not yet polled' in a session that ended long ago."""
    path = _ralph_db(tmp_path / "ralph.db")
    with sqlite3.connect(path) as db:
        db.execute('INSERT INTO "Signals" ("Id", "SessionId", "SignalType", "Message", "IsProcessed", "CreatedAt") '
                   "VALUES (9, ?, 2, 'stop it', 0, '2026-02-10 09:59:00')", [DONE])
    import_seed("ralph", path)
    late = Signal.objects.get(message="stop it")
    assert (late.is_processed, late.expired_reason, late.expired_at) == (False, "session completed",
                                                                         late.session.ended_at)
    running = Signal.objects.filter(session__key="sess-auth", is_processed=False)
    assert running.count() == 2 and not running.filter(expired_at__isnull=False).exists()


@pytest.mark.parametrize(("setup", "message"), [
    ("other", r"is not a ralph database: no table .*AgentInvocations"),
    ("missing_table", r"is not a ralph database: no table Signals"),
    ("column", r"table Tasks has no column WaveNumber"),
    ("corrupt", r"ralph.db is (corrupt|not a readable SQLite database)"),
])
def test_it_refuses_a_file_that_is_not_a_ralph_db_and_writes_nothing(tmp_path: Path, setup: str,
                                                                     message: str) -> None:
    path = tmp_path / "ralph.db"
    if setup == "other":
        seed_database(path, "ralphy", {})
    else:
        _ralph_db(path)
        with sqlite3.connect(path) as db:
            if setup == "missing_table":
                db.execute('DROP TABLE "Signals"')
            elif setup == "column":
                db.execute('ALTER TABLE "Tasks" DROP COLUMN "WaveNumber"')
        if setup == "corrupt":
            data = bytearray(path.read_bytes())
            data[4096:] = b"\xff" * (len(data) - 4096)
            path.write_bytes(bytes(data))
    with pytest.raises(CommandError, match=message) as refused:
        import_seed("ralph", path)
    assert "\n" not in str(refused.value)
    assert not Session.objects.exists() and not SeedRow.objects.exists()
