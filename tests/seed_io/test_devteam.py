"""import_seed devteam: a DevTeam database built from seed 003's DDL, its SQL views against our stats."""

import json
import re
import sqlite3
from datetime import UTC, datetime
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from ledger_app.models import (
    Baseline,
    Checkpoint,
    DeadLetter,
    ErrorLog,
    GateResult,
    LedgerEvent,
    Rollback,
    TokenUsage,
    UsageSource,
)
from ledger_app.services import usage_record
from ralphsite.core.choices import choice_canonical
from ralphsite.core.models import SeedRow
from ralphsite.moving.seed_io.base import moment
from sessions_app.models import (
    AcceptanceCriterion,
    AgentInvocation,
    Bug,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    Interview,
    Plan,
    ProgressSummary,
    ResearchSession,
    Session,
    SessionPhase,
    SessionStateEntry,
    Task,
    TaskAttempt,
)
from sessions_app.services.sessions import session_delete
from tests.ledger_app.factories import get_all_sources, get_stat
from tests.seed_io.helpers import file_rows, import_seed, seed_database, summary_row

pytestmark = pytest.mark.django_db

SESSIONS = [
    {"id": "sess-20250201-a", "started_at": "2025-02-01 10:00:00", "ended_at": "2025-02-01 12:00:00",
     "command": "/devteam:implement --sprint 1", "command_type": "implement", "status": "completed",
     "exit_reason": "Success", "current_phase": "quality_gates", "current_task_id": "TASK-002",
     "current_agent": "api-developer-typescript", "current_model": "opus", "current_iteration": 7,
     "max_iterations": 10, "consecutive_failures": 0, "max_consecutive_failures": 5,
     "circuit_breaker_state": "closed", "plan_id": "plan-001", "sprint_id": "sprint-1", "execution_mode": "normal",
     "total_tokens_input": 120000, "total_tokens_output": 30000, "total_cost_cents": 1234,
     "bug_council_activated": 1, "bug_council_reason": "세 번 실패 🐛"},
    {"id": "sess-20250202-b", "started_at": "2025-02-02 09:00:00", "ended_at": None, "command": "/devteam:bug 42",
     "command_type": "bug", "status": "running", "exit_reason": None, "current_phase": None,
     "current_task_id": None, "current_agent": None, "current_model": None, "current_iteration": 0,
     "max_iterations": None, "consecutive_failures": 3, "max_consecutive_failures": None,
     "circuit_breaker_state": "half-open", "plan_id": None, "sprint_id": None, "execution_mode": "eco",
     "total_tokens_input": 0, "total_tokens_output": 0, "total_cost_cents": 5, "bug_council_activated": 0,
     "bug_council_reason": None},
    {"id": "sess-20250203-c", "started_at": "2025-02-03 09:00:00", "ended_at": "2025-02-03 09:05:00",
     "command": "/devteam:plan", "command_type": "plan", "status": "aborted", "exit_reason": "user_abort",
     "current_phase": "interview", "current_task_id": None, "current_agent": None, "current_model": "haiku",
     "current_iteration": 1, "max_iterations": 10, "consecutive_failures": 0, "max_consecutive_failures": 5,
     "circuit_breaker_state": "open", "plan_id": None, "sprint_id": None, "execution_mode": "normal",
     "total_tokens_input": 10, "total_tokens_output": 20, "total_cost_cents": 0, "bug_council_activated": 0,
     "bug_council_reason": None},
]
A, B, C = (s["id"] for s in SESSIONS)


def _runs() -> list[dict[str, Any]]:
    rows = []
    for index, (session, agent, model, status, duration, cost) in enumerate([
            (A, "api-developer-typescript", "sonnet", "success", 120, 15),
            (A, "api-developer-typescript", "sonnet", "failed", 30, 4),
            (A, "api-developer-typescript", "opus", "success", 61, 99),
            (A, "frontend-developer", "haiku", "escalated", None, None),
            (B, "frontend-developer", "haiku", "running", None, 1),
            (B, "qa-engineer 🧪", "sonnet", "failed", 7, 3)]):
        rows.append({"session_id": session, "agent": agent, "agent_type": "backend" if index % 2 else None,
                     "model": model, "started_at": f"2025-02-0{1 + index % 2} 10:{index:02d}:00",
                     "ended_at": None if status == "running" else f"2025-02-0{1 + index % 2} 11:00:00",
                     "duration_seconds": duration, "status": status, "error_message": "타입 오류" if status == "failed"
                     else None, "error_type": "type_error" if status == "failed" else None, "task_id": "TASK-001",
                     "iteration": index + 1, "attempt": None if index == 0 else 1, "tokens_input": 1000 * index,
                     "tokens_output": 10 * index if index else None, "cost_cents": cost,
                     "files_changed": '["src/a.ts", "src/비.ts"]' if index == 0 else None,
                     "output_summary": "ok 👍" if status == "success" else None})
    return rows


def _devteam_db(path: Path) -> Path:
    return seed_database(path, "devteam", {
        "sessions": SESSIONS,
        "session_state": [
            {"session_id": A, "key": "current_phase", "value": '"executing"', "updated_at": "2025-02-01 10:05:00"},
            {"session_id": A, "key": "retry_map", "value": '{"TASK-001": 2, "한글": [1, 2]}',
             "updated_at": "2025-02-01 10:06:00"},
            {"session_id": B, "key": "note", "value": "not json at all", "updated_at": None},
        ],
        "events": [
            {"session_id": A if i % 3 else B, "timestamp": f"2025-02-01 10:{i:02d}:00", "event_type": event_type,
             "event_category": "agent" if "agent" in event_type else None, "agent": "qa" if i % 2 else None,
             "model": "sonnet", "iteration": i, "phase": "executing", "data": json.dumps({"i": i, "텍스트": "✅"}),
             "metadata": None if i % 2 else '{"source": "hook"}', "message": f"event {i} 🚀",
             "tokens_input": 100 * i if i % 4 else None, "tokens_output": 7 * i, "cost_cents": i}
            for i, event_type in enumerate(["session_started", "phase_changed", "agent_started", "agent_completed",
                                            "agent_failed", "model_escalated", "gate_passed", "gate_failed",
                                            "task_started", "task_completed", "error_occurred", "session_ended"])
        ],
        "agent_runs": _runs(),
        "gate_results": [
            {"session_id": session, "gate": gate, "iteration": it, "passed": passed, "details": details,
             "error_count": errors, "warning_count": None, "coverage_percent": coverage,
             "timestamp": f"2025-02-01 1{it}:00:00", "duration_seconds": 3}
            for session, gate, it, passed, details, errors, coverage in [
                (A, "tests", 1, 1, '{"failed": []}', 0, None), (A, "tests", 2, 0, None, 3, None),
                (A, "tests", 3, 1, None, 0, None), (A, "lint", 1, 1, None, None, None),
                (B, "typecheck", 1, 0, '{"errors": ["TS2322"]}', 1, None), (B, "security", 1, 1, None, 0, None),
                (A, "coverage", 1, 0, None, None, 71.5), (A, "coverage", 2, 1, None, None, 85.25)]],
        "escalations": [
            {"session_id": A, "from_model": "haiku", "to_model": "sonnet", "agent": "frontend-developer",
             "reason": "consecutive_failures", "failure_count": 2, "iteration": 3, "task_id": "TASK-001",
             "timestamp": "2025-02-01 10:30:00"},
            {"session_id": A, "from_model": "sonnet", "to_model": "opus", "agent": None, "reason": "복잡도 증가",
             "failure_count": None, "iteration": None, "task_id": None, "timestamp": "2025-02-01 10:40:00"},
        ],
        "tasks": [
            {"id": f"TASK-00{n}", "name": f"Task {n} ✨", "description": None if n == 2 else "설명", "task_type": kind,
             "plan_id": None, "sprint_id": sprint, "parent_task_id": None, "session_id": session, "status": status,
             "scope_files": {1: "src/**/*.ts,tests/*", 2: "README.md"}.get(n), "scope_json": None,
             "assigned_agent": None, "assigned_model": "sonnet", "priority": priority, "sequence": n,
             "depends_on": '["TASK-001"]' if n > 1 else None, "blocks": None, "estimated_effort": effort,
             "actual_iterations": n, "files_changed": None, "created_at": f"2025-02-01 09:0{n}:00",
             "started_at": None if status == "pending" else "2025-02-01 10:00:00", "completed_at": None,
             "result_summary": None, "error_message": None, "commit_sha": "abc123" if n == 1 else None}
            for n, kind, sprint, session, status, priority, effort in [
                (1, "feature", "sprint-1", A, "completed", "critical", "small"),
                (2, "bugfix", "sprint-1", A, "in_progress", "high", "medium"),
                (3, "refactor", "sprint-1", None, "failed", "medium", "large"),
                (4, "test", "sprint-2", "sess-deleted", "pending", "low", "xl"),
                (5, "docs", "sprint-2", B, "blocked", "medium", None),
                (6, None, None, None, "pending", "medium", None)]],
        "task_attempts": [
            {"task_id": "TASK-001", "session_id": A, "attempt_number": 1, "model": "haiku", "agent": "dev",
             "started_at": "2025-02-01 10:00:00", "ended_at": "2025-02-01 10:10:00", "duration_seconds": 600,
             "status": "failed", "error_type": "test_failure", "error_message": "3 tests failed",
             "tokens_input": 100, "tokens_output": 50, "cost_cents": 2},
            {"task_id": "TASK-001", "session_id": A, "attempt_number": 2, "model": "sonnet", "agent": "dev",
             "started_at": "2025-02-01 10:20:00", "ended_at": None, "duration_seconds": None, "status": "success",
             "error_type": None, "error_message": None, "tokens_input": 300, "tokens_output": 80, "cost_cents": 9},
            {"task_id": "TASK-003", "session_id": None, "attempt_number": 1, "model": None, "agent": None,
             "started_at": None, "ended_at": None, "duration_seconds": None, "status": "escalated",
             "error_type": None, "error_message": None, "tokens_input": 5, "tokens_output": 5, "cost_cents": None},
            # NULL tokens: SUM(tokens_input + tokens_output) leaves the row out, a task of such rows only is NULL.
            *({"task_id": task, "session_id": session, "attempt_number": number, "status": "failed",
               "tokens_input": tokens_in, "tokens_output": tokens_out, "cost_cents": 1}
              for task, session, number, tokens_in, tokens_out in [
                  ("TASK-003", None, 2, None, 7), ("TASK-002", A, 1, 40, None), ("TASK-005", B, 1, None, None)]),
        ],
        "acceptance_criteria": [
            {"task_id": task, "sprint_id": "sprint-1", "plan_id": plan, "criterion_id": cid, "description": f"{cid} ✓",
             "category": category, "passes": passes, "verified_at": None, "verified_by": None,
             "verification_method": method, "verification_evidence": None, "last_failure_reason": None,
             "failure_count": 0, "priority": "high", "sequence": 1, "created_at": "2025-02-01 09:00:00",
             "updated_at": "2025-02-01 09:30:00"}
            for task, plan, cid, category, passes, method in [
                ("TASK-001", "plan-001", "AC-001", "functional", 1, "automated_test"),
                ("TASK-001", "plan-001", "AC-002", "visual", 0, "visual"),
                ("TASK-002", "plan-001", "AC-003", "performance", 1, "manual"),
                (None, "plan-002", "AC-001", "security", 0, None)]],
        "features": [
            {"plan_id": plan, "sprint_id": None, "feature_id": fid, "name": f"Feature {fid}", "description": None,
             "category": "auth", "steps": steps, "passes": passes, "all_steps_pass": passes, "steps_total": total,
             "steps_passed": done, "verified_at": None, "verified_by": None, "priority": "medium", "sequence": 0,
             "created_at": "2025-02-01 09:00:00", "updated_at": "2025-02-01 09:00:00"}
            for plan, fid, steps, passes, total, done in [
                ("plan-001", "FEAT-001", '[{"step": "click 버튼", "passes": true}]', 1, 1, 1),
                ("plan-001", "FEAT-002", None, 0, 3, 1), (None, "FEAT-003", "[]", 0, 0, 0)]],
        "context_budgets": [
            {"session_id": A, "model": "sonnet", "context_limit": 200000, "current_usage": 150000,
             "usage_percent": 75.0, "warn_threshold": 140000, "summarize_threshold": 180000, "status": "warning",
             "last_action": "warned", "updated_at": "2025-02-01 11:00:00"},
            {"session_id": B, "model": "haiku", "context_limit": 100000, "current_usage": None,
             "usage_percent": None, "warn_threshold": 0, "summarize_threshold": 0, "status": "critical",
             "last_action": None, "updated_at": None},
        ],
        "context_snapshots": [
            {"session_id": A, "snapshot_type": kind, "tokens_before": 150000, "tokens_after": 40000,
             "tokens_saved": None, "preserved_items": '["plan"]', "summarized_items": None,
             "summary_text": "요약 📝", "trigger_reason": "approaching_limit", "created_at": "2025-02-01 11:00:00"}
            for kind in ("auto", "checkpoint", "overflow_prevention")],
        "token_usage": [
            {"session_id": session, "task_id": "TASK-001", "sprint_id": "sprint-1", "model": model,
             "input_tokens": tin, "output_tokens": tout, "cost_usd": cost, "operation": "code-gen",
             "agent_name": "dev", "recorded_at": at}
            for session, model, tin, tout, cost, at in [
                (A, "sonnet", 1000, 200, 0.012345, "2025-02-01 10:00:00"),
                (A, "opus", 2000, 100, 0.1, "2025-02-01 23:59:59"),
                (B, "haiku", 10, 10, 0.00007, "2025-02-02 00:00:00"),
                (None, "haiku", 1, 1, 0.0, "2025-02-02 01:00:00"),
                ("sess-gone", "haiku", 5, 5, 1.23456, "2025-02-03 01:00:00")]],
        "error_log": [
            {"session_id": A, "task_id": None, "operation": "git push", "error_type": etype,
             "error_message": "연결 거부됨", "error_pattern": None, "recovery_action": "retry",
             "recovery_success": recovered, "retry_count": 1, "circuit_opened": circuit,
             "logged_at": "2025-02-01 10:00:00"}
            for etype, recovered, circuit in [("transient", 1, 0), ("transient", 0, 1), ("transient", None, 0),
                                              ("permanent", None, 1), ("recoverable", 1, 0)]],
        "dead_letter": [
            {"operation_type": "github_comment", "operation_params": '{"issue": 42}', "error_message": "503",
             "stack_trace": None, "attempt_count": 3, "session_id": A, "task_id": "TASK-001", "status": status,
             "retry_after": None, "expires_at": "2025-03-01 00:00:00", "created_at": "2025-02-01 10:00:00"}
            for status in ("pending", "retried", "failed", "expired")],
        **V1_REST, **V2_REST,
    })


# v1's tables besides those above, and v2's: every column, NULLs, Korean and emoji, references by DevTeam's ids.
V1_REST: dict[str, list[dict[str, Any]]] = {
    "interviews": [
        {"id": 1, "session_id": B, "interview_type": "bug", "started_at": "2025-02-02 09:00:00",
         "completed_at": "2025-02-02 09:10:00", "status": "completed", "questions_asked": 2, "questions_answered": 2},
        {"id": 2, "session_id": C, "interview_type": "feature", "started_at": None, "completed_at": None,
         "status": None, "questions_asked": None, "questions_answered": 0}],
    "interview_questions": [
        {"id": 1, "interview_id": 1, "question_key": "expected_behavior", "question_text": "무엇을 기대했나요?",
         "question_type": "text", "response": "로그인 성공 🎉", "responded_at": "2025-02-02 09:05:00", "sequence": 1,
         "required": 1},
        {"id": 2, "interview_id": 1, "question_key": "repro_steps", "question_text": "Steps?", "question_type": None,
         "response": None, "responded_at": None, "sequence": 2, "required": None},
        {"id": 3, "interview_id": 99, "question_key": "orphan", "question_text": "left behind", "sequence": 1}],
    "research_sessions": [{"id": 1, "session_id": C, "started_at": "2025-02-03 09:01:00", "completed_at": None,
                           "status": "in_progress", "findings_count": 2, "recommendations_count": None,
                           "blockers_found": 1}],
    "research_findings": [
        {"id": 1, "research_session_id": 1, "finding_type": "blocker", "title": "No test DB 🚫",
         "description": None, "source": "codebase", "file_path": "conftest.py", "evidence": '{"lines": [1, 2]}',
         "priority": "high", "timestamp": "2025-02-03 09:02:00"},
        {"id": 2, "research_session_id": 1, "finding_type": "pattern", "title": "저장소 패턴", "description": "repo",
         "source": None, "file_path": None, "evidence": None, "priority": None, "timestamp": None}],
    "bugs": [
        {"id": 1, "session_id": B, "description": "로그인 버튼 🐛", "severity": "critical", "complexity": "complex",
         "root_cause": "race", "diagnosis_method": "bug_council", "fix_summary": None,
         "files_changed": '["src/login.ts"]', "prevention_measures": None, "status": "resolved",
         "created_at": "2025-02-02 09:00:00", "resolved_at": "2025-02-02 11:00:00", "council_activated": 1,
         "council_votes": '{"opus": "race", "sonnet": "race"}'},
        {"id": 2, "session_id": None, "description": "same again", "severity": None, "complexity": None,
         "root_cause": None, "diagnosis_method": None, "fix_summary": None, "files_changed": None,
         "prevention_measures": None, "status": None, "created_at": None, "resolved_at": None,
         "council_activated": None, "council_votes": None}],
    "plans": [
        {"id": "plan-001", "name": "인증 Auth", "description": None, "plan_type": "feature", "prd_path": "docs/prd.md",
         "tasks_path": None, "sprints_path": None, "status": "in_progress", "total_sprints": 2,
         "completed_sprints": 1, "total_tasks": 6, "completed_tasks": 1, "created_at": "2025-01-31 09:00:00",
         "started_at": "2025-02-01 09:00:00", "completed_at": None, "research_session_id": 1},
        {"id": "plan-002", "name": "Later", "description": "🗓", "plan_type": None, "prd_path": None,
         "tasks_path": None, "sprints_path": None, "status": None, "total_sprints": None, "completed_sprints": 0,
         "total_tasks": 0, "completed_tasks": 0, "created_at": "2025-01-31 10:00:00", "started_at": None,
         "completed_at": None, "research_session_id": None}],
    "task_files": [
        {"id": 1, "task_id": "TASK-001", "file_path": "src/**/*.ts", "file_type": "source", "access_type": "allowed",
         "is_pattern": 1},
        {"id": 2, "task_id": "TASK-001", "file_path": "src/비밀.ts", "file_type": None, "access_type": "forbidden",
         "is_pattern": 0},
        {"id": 3, "task_id": "TASK-002", "file_path": "README.md", "file_type": "docs", "access_type": None,
         "is_pattern": None}],
}
V2_REST: dict[str, list[dict[str, Any]]] = {
    "progress_summaries": [
        {"id": 1, "session_id": A, "summary_text": "2/6 done 📈", "from_iteration": 1, "to_iteration": 5,
         "tasks_completed": 2, "tasks_remaining": 4, "tests_passing": 40, "tests_failing": 2,
         "features_passing": 1, "features_total": 3, "last_commit_sha": "abc123", "files_changed": '["a.ts"]',
         "created_at": "2025-02-01 11:00:00"},
        {"id": 2, "session_id": A, "summary_text": "요약", "from_iteration": None, "to_iteration": None,
         "tasks_completed": None, "tasks_remaining": None, "tests_passing": None, "tests_failing": None,
         "features_passing": None, "features_total": None, "last_commit_sha": None, "files_changed": None,
         "created_at": None}],
    "session_phases": [
        {"id": 1, "session_id": A, "phase_type": "initializer", "is_first_run": 1, "init_script_created": 1,
         "features_enumerated": 1, "progress_file_created": 0, "baseline_commit_sha": "def456",
         "features_attempted": 3, "features_completed": 1, "resumed_from_session": None, "resume_point": None,
         "created_at": "2025-02-01 10:00:00"},
        {"id": 2, "session_id": B, "phase_type": "resume", "is_first_run": None, "init_script_created": None,
         "features_enumerated": None, "progress_file_created": None, "baseline_commit_sha": None,
         "features_attempted": None, "features_completed": None, "resumed_from_session": A,
         "resume_point": "TASK-002 다음", "created_at": "2025-02-02 09:00:00"}],
    "baselines": [
        {"id": 1, "tag_name": "baseline/sprint-01/20250201-120000", "commit_hash": "abc123",
         "milestone": "sprint-start", "description": "시작 🚩", "branch": "main", "files_changed": 12,
         "created_at": "2025-02-01 12:00:00"},
        {"id": 2, "tag_name": "baseline/sprint-02/x", "commit_hash": "def456", "milestone": "feature-complete",
         "description": None, "branch": None, "files_changed": None, "created_at": None}],
    "checkpoints": [
        {"id": 1, "checkpoint_id": "chkpt-20250201-120000-abc123", "path": ".devteam/checkpoints/x",
         "description": None, "git_commit": None, "session_id": None, "task_id": None, "sprint_id": None,
         "can_restore": None, "created_at": None},
        {"id": 2, "checkpoint_id": "chkpt-20250201-130000-def456", "path": ".devteam/checkpoints/y",
         "description": "before 리팩터", "git_commit": "def456", "session_id": A, "task_id": "TASK-002",
         "sprint_id": "sprint-1", "can_restore": 0, "created_at": "2025-02-01 13:00:00"}],
    "checkpoint_restores": [
        {"id": 1, "checkpoint_id": "chkpt-20250201-130000-def456", "restored_at": "2025-02-01 14:00:00"},
        {"id": 2, "checkpoint_id": "chkpt-20250201-130000-def456", "restored_at": None}],
    "rollbacks": [
        {"id": 1, "rollback_type": "smart", "target_commit": "abc123", "target_tag": "baseline/sprint-01/x",
         "reason": "테스트 회귀 📉", "from_commit": "def456", "trigger_type": "regression", "check_type": "test",
         "backup_branch": "backup/1", "rolled_back_at": "2025-02-01 15:00:00"},
        {"id": 2, "rollback_type": "manual", "target_commit": "abc123", "target_tag": None, "reason": None,
         "from_commit": None, "trigger_type": None, "check_type": None, "backup_branch": None,
         "rolled_back_at": None}],
}


def test_it_imports_every_row_and_column_of_a_devteam_db(tmp_path: Path) -> None:
    output = import_seed("devteam", _devteam_db(tmp_path / "devteam.db"))
    assert summary_row(output, "sessions") == ["3", "3", "0", "0", "0", "0"]
    assert summary_row(output, "events") == ["12", "12", "0", "0", "0", "0"]
    assert summary_row(output, "task_attempts") == ["6", "6", "0", "0", "0", "0"]
    for table, rows in {**V1_REST, **V2_REST}.items():
        orphans = table == "interview_questions"  # one names an interview that is not in the file
        assert summary_row(output, table)[:6] == [str(len(rows)), str(len(rows) - orphans), "0", "0", "0",
                                              "1" if orphans else "0"], table

    a = Session.objects.get(key=A)
    assert (a.command, a.command_type, a.status, a.exit_reason, a.current_task_key, a.current_iteration,
            a.plan_key, a.sprint_key, a.total_tokens_input, a.total_cost_usd, a.bug_council_activated,
            a.bug_council_reason) == ("/devteam:implement --sprint 1", "implement", "completed", "Success",
                                      "TASK-002", 7, "plan-001", "sprint-1", 120000, Decimal("12.34"), True,
                                      "세 번 실패 🐛")
    assert a.started_at == datetime(2025, 2, 1, 10, tzinfo=UTC) and a.ended_at == datetime(2025, 2, 1, 12, tzinfo=UTC)
    b = Session.objects.get(key=B)
    assert (b.current_iteration, b.max_iterations, b.circuit_breaker_state, b.execution_mode, b.total_cost_usd,
            b.ended_at) == (1, 10, "half_open", "eco", Decimal("0.05"), None)
    assert SeedRow.objects.get(source_table="sessions", source_key=B).extra == {
        "current_iteration": 0, "max_iterations": None, "max_consecutive_failures": None, "exit_reason": None,
        "current_phase": None, "current_task_id": None, "current_agent": None, "current_model": None,
        "plan_id": None, "sprint_id": None, "bug_council_reason": None,
        "circuit_breaker_state": "half-open"}  # the tool's spelling, for export_seed

    state = {(e.session.key, e.key): e.value for e in SessionStateEntry.objects.select_related("session")}
    assert state == {(A, "current_phase"): "executing", (A, "retry_map"): {"TASK-001": 2, "한글": [1, 2]},
                     (B, "note"): "not json at all"}

    events = list(LedgerEvent.objects.filter(session__key__in=[A, B]).order_by("id"))
    assert [e.type for e in events][:3] == ["session_started", "phase_changed", "agent_started"]
    first, sixth = events[0], events[5]
    assert (first.session.key, first.category, first.tokens_in, first.tokens_out, first.cost_usd, first.meta,
            first.data, first.message) == (B, "", 0, 0, Decimal(0), {"source": "hook"}, {"i": 0, "텍스트": "✅"},
                                           "event 0 🚀")
    assert (sixth.tokens_in, sixth.tokens_out, sixth.tokens_total, sixth.cost_usd, sixth.iteration) == (
        500, 35, 535, Decimal("0.05"), 5)
    assert sixth.timestamp == datetime(2025, 2, 1, 10, 5, tzinfo=UTC)
    assert SeedRow.objects.get(source_table="events", source_key=str(4 + 1)).extra == {"tokens_input": None,
                                                                                      "agent": None}

    runs = AgentInvocation.objects.filter(session=a).order_by("started_at")
    assert runs.count() == 4
    run = runs[0]
    assert (run.duration_ms, run.files_changed, run.attempt, run.cost_usd, run.output_summary, run.task_key) == (
        120000, ["src/a.ts", "src/비.ts"], 1, Decimal("0.15"), "ok 👍", "TASK-001")
    assert {r.status for r in AgentInvocation.objects.all()} == {"success", "failed", "escalated", "running"}

    assert GateResult.objects.count() == 8 and Escalation.objects.count() == 2
    assert set(GateResult.objects.values_list("gate", flat=True)) == {"tests", "lint", "typecheck", "security",
                                                                      "coverage"}
    tasks = {t.key: t for t in Task.objects.all()}
    assert set(tasks) == {f"TASK-00{n}" for n in range(1, 7)}
    assert (tasks["TASK-004"].status, tasks["TASK-004"].session, tasks["TASK-005"].status) == (
        "not_started", None, "blocked")
    assert SeedRow.objects.get(source_table="tasks", source_key="TASK-004").extra["session_id"] == "sess-deleted"
    assert SeedRow.objects.get(source_table="tasks", source_key="TASK-001").extra["scope_files"] == \
        "src/**/*.ts,tests/*"
    assert {t.work_type for t in tasks.values()} == {"feature", "bugfix", "refactor", "test", "docs", ""}
    assert TaskAttempt.objects.filter(task=tasks["TASK-001"]).count() == 2
    assert AcceptanceCriterion.objects.count() == 4 and Feature.objects.count() == 3
    assert ContextBudget.objects.count() == 2 and ContextSnapshot.objects.count() == 3
    assert TokenUsage.objects.count() == 5 and ErrorLog.objects.count() == 5
    assert set(DeadLetter.objects.values_list("status", flat=True)) == {"pending", "retried", "failed", "expired"}
    usage = TokenUsage.objects.get(model="sonnet")
    assert (usage.cost_usd, usage.agent, usage.session) == (Decimal("0.012345"), "dev", a)

    out = StringIO()
    call_command("ledger_verify", stdout=out, stderr=StringIO())
    assert "ledger chain intact: 12 events" in out.getvalue()


def test_the_rest_of_v1_and_v2_arrives_with_its_references(tmp_path: Path) -> None:
    import_seed("devteam", _devteam_db(tmp_path / "devteam.db"))
    b, c = Session.objects.get(key=B), Session.objects.get(key=C)
    interview = Interview.objects.get(session=b)
    questions = interview.questions.order_by("sequence")
    assert [(q.question_key, q.question_type, q.required, q.response) for q in questions] == [
        ("expected_behavior", "text", True, "로그인 성공 🎉"), ("repro_steps", "text", True, "")]
    assert SeedRow.objects.get(source_table="interview_questions", source_key="2").extra == {
        "question_type": None, "response": None, "required": None}
    pending = Interview.objects.get(session=c)
    assert (pending.status, pending.questions_asked) == ("in_progress", 0)  # NULLs: the DEFAULTs

    research = ResearchSession.objects.get(session=c)
    assert sorted(f.title for f in research.findings.all()) == ["No test DB 🚫", "저장소 패턴"]
    plan = Plan.objects.get(key="plan-001")
    assert (plan.name, plan.research_session, plan.status, plan.total_tasks) == (
        "인증 Auth", research, "in_progress", 6)
    assert Plan.objects.get(key="plan-002").research_session is None
    assert Task.objects.get(key="TASK-001").plan is None  # the file's tasks name no plan

    task = Task.objects.get(key="TASK-001")
    # task_files' rows, and the paths of scope_files as the API makes them (a path both list is task_files' row)
    assert [(f.path, f.file_type, f.access_type, f.is_pattern) for f in task.files.order_by("path")] == [
        ("src/**/*.ts", "source", "allowed", True), ("src/비밀.ts", "", "forbidden", False),
        ("tests/*", "", "allowed", True)]
    assert Task.objects.get(key="TASK-002").files.get().access_type == "allowed"

    bug = Bug.objects.get(session=b)
    assert (bug.severity, bug.council_votes, bug.files_changed) == ("critical", {"opus": "race", "sonnet": "race"},
                                                                    ["src/login.ts"])
    assert Bug.objects.get(session=None).status == "open"
    assert [p.summary_text for p in ProgressSummary.objects.order_by("summary_text")] == ["2/6 done 📈", "요약"]
    assert SessionPhase.objects.get(session=b).resumed_from_session == A
    assert Baseline.objects.get(tag_name="baseline/sprint-01/20250201-120000").description == "시작 🚩"
    checkpoint = Checkpoint.objects.get(key="chkpt-20250201-130000-def456")
    assert (checkpoint.session.key, checkpoint.task_key, checkpoint.can_restore, checkpoint.restores.count()) == (
        A, "TASK-002", False, 2)
    assert Checkpoint.objects.get(key="chkpt-20250201-120000-abc123").can_restore is True
    assert {r.rollback_type: r.reason for r in Rollback.objects.all()} == {"smart": "테스트 회귀 📉", "manual": ""}


def test_a_second_import_creates_nothing_and_a_newer_file_only_its_new_rows(tmp_path: Path) -> None:
    path = _devteam_db(tmp_path / "devteam.db")
    import_seed("devteam", path)
    again = import_seed("devteam", path)
    assert "nothing new" in again and summary_row(again, "events") == ["12", "0", "0", "12", "0", "0"]
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO events (session_id, event_type, timestamp) VALUES (?, 'task_failed', "
                   "'2025-02-04 00:00:00')", [C])
    newer = import_seed("devteam", path)
    assert summary_row(newer, "events") == ["13", "1", "0", "12", "0", "0"] and "1 rows created" in newer
    assert LedgerEvent.objects.count() == 13


def test_a_newer_copys_scope_files_add_their_new_paths_as_file_rows(tmp_path: Path) -> None:
    path = _devteam_db(tmp_path / "devteam.db")
    import_seed("devteam", path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE tasks SET scope_files = 'README.md,docs/*.md' WHERE id = 'TASK-002'")
    import_seed("devteam", path)
    files = Task.objects.get(key="TASK-002").files.order_by("path")
    assert [(f.path, f.file_type, f.is_pattern) for f in files] == [("README.md", "docs", False),
                                                                   ("docs/*.md", "", True)]


def test_a_newer_copys_scope_files_move_the_file_rows_and_count_as_an_update(tmp_path: Path) -> None:
    """A path a newer copy takes out of a task's scope_files loses the file row the column made (a task_files row of
    the tool's for that path stays: its own table says what becomes of it); the task counts as updated."""
    path = _devteam_db(tmp_path / "devteam.db")
    import_seed("devteam", path)
    with sqlite3.connect(path) as db:  # was src/**/*.ts (a task_files row too) and tests/* (the column's only)
        db.execute("UPDATE tasks SET scope_files = 'docs/*.md' WHERE id = 'TASK-001'")
        db.execute("UPDATE tasks SET scope_files = NULL WHERE id = 'TASK-002'")  # README.md: a task_files row
    output = import_seed("devteam", path)
    assert summary_row(output, "tasks")[1:3] == ["0", "2"], output
    assert "2 updated" in output
    files = Task.objects.get(key="TASK-001").files.order_by("path")
    assert [(f.path, f.access_type) for f in files] == [
        ("docs/*.md", "allowed"), ("src/**/*.ts", "allowed"), ("src/비밀.ts", "forbidden")]
    assert list(Task.objects.get(key="TASK-002").files.values_list("path", flat=True)) == ["README.md"]
    assert "nothing new" in import_seed("devteam", path)
    exported = tmp_path / "exported.db"
    call_command("export_seed", "devteam", str(exported), stdout=StringIO())
    assert {row["id"]: row["scope_files"] for row in file_rows(exported, "tasks")
            if row["id"] in ("TASK-001", "TASK-002")} == {"TASK-001": "docs/*.md", "TASK-002": None}


def _same(ours: Any, theirs: Any) -> bool:
    """Equal as the seed's view would print it. Our text, counter and list columns are NOT NULL ('', 0
    and [] where DevTeam stores NULL), so a NULL the view shows is our '', 0 or [] (a SUM over NULLs
    only included); a JSON text column is our JSON value; our mean durations are rounded to the
    millisecond."""
    if theirs is None:
        return ours in (None, "", 0, [])
    if isinstance(ours, list | dict) and isinstance(theirs, str):
        return ours == json.loads(theirs)
    if isinstance(ours, bool):
        return ours == bool(theirs)
    if isinstance(theirs, float) and isinstance(ours, float) and round(theirs, 3) == ours:
        return True
    if isinstance(theirs, int | float):
        return Decimal(str(ours)) == Decimal(str(theirs))
    if isinstance(theirs, str) and isinstance(ours, str) and theirs[:4].isdigit() and "-" in theirs[:8]:
        return moment(ours) == moment(theirs) if ":" in theirs else ours == theirs
    if isinstance(theirs, str) and isinstance(ours, str) and ours != theirs:
        return choice_canonical([ours], theirs) == ours  # an enum arrives canonical (`half-open` → `half_open`)
    return ours == theirs


COLUMN_DEFAULTS = {"max_iterations": 10, "max_consecutive_failures": 5}
# Columns whose NULL is ours too (issue #26: "NULL stays NULL"), compared exactly.
NULL_KEPT = {("task-attempts-summary", "total_tokens")}

# our stat → (seed view, the columns that identify a row). Session ids are compared as DevTeam's keys.
VIEWS = {
    "session-summary": ("v_session_summary", ("id",)),
    "model-usage": ("v_model_usage", ("session_id", "model")),
    "agent-performance": ("v_agent_performance", ("agent",)),
    "sprint-progress": ("v_sprint_progress", ("sprint_id",)),
    "gate-pass-rates": ("v_gate_pass_rates", ("gate",)),
    "acceptance-criteria-status": ("v_acceptance_criteria_status", ("task_id",)),
    "feature-status": ("v_feature_status", ("plan_id",)),
    "context-status": ("v_context_status", ("session_id", "model")),
    "daily-cost": ("v_daily_cost", ("date",)),
    "error-summary": ("v_error_summary", ("error_type",)),
    "current-session": ("v_current_session", ("id",)),
    "task-attempts-summary": ("v_task_attempts_summary", ("task_id",)),
    "current-task": ("v_current_task", ("id",)),
    "session-cost": ("v_session_cost", ("session_id",)),
}


def _assert_answers_what_the_seed_answers(path: Path, api: APIClient, stat: str) -> None:
    # Ids are compared as they are: an imported row answers the id its file gave it (issue #26).
    view, identity = VIEWS[stat]
    theirs = file_rows(path, view)
    ours = get_stat(api, stat)
    for row in ours:
        for column in ("task_id", "plan_id", "sprint_id"):
            if row.get(column) == "":
                row[column] = None  # our keys are '' where DevTeam's text id is NULL
    our_groups = sorted(tuple(str(r[c]) for c in identity) for r in ours)
    their_groups = sorted(tuple(str(r[c]) for c in identity) for r in theirs)
    assert our_groups == their_groups, stat
    by_identity = {tuple(str(r[c]) for c in identity): r for r in ours}
    for seed_row in theirs:
        row = by_identity[tuple(str(seed_row[c]) for c in identity)]
        for column, value in seed_row.items():
            if column == "current_iteration" and value == 0:
                # DevTeam's iteration 0 (not started) is our 1: sessions count from 1 (constraint
                # session_iteration_from_1); the 0 stays on the SeedRow for the export.
                value = 1
            if value is None and column in COLUMN_DEFAULTS:
                value = COLUMN_DEFAULTS[column]  # a NULL limit is the table's DEFAULT, which we store
            if (stat, column) in NULL_KEPT:
                assert row[column] == value, (stat, column, row[column], value)
            elif column in row:
                assert _same(row[column], value), (stat, column, row[column], value)


@pytest.mark.parametrize("stat", VIEWS)
def test_stats_answer_what_the_seeds_views_answer_on_the_original_file(tmp_path: Path, api: APIClient,
                                                                       stat: str) -> None:
    path = _devteam_db(tmp_path / "devteam.db")
    import_seed("devteam", path)
    _assert_answers_what_the_seed_answers(path, api, stat)


def test_null_attempt_tokens_stay_null_through_the_api_the_admin_and_export(tmp_path: Path, api: APIClient,
                                                                          admin_client: Any) -> None:
    import_seed("devteam", _devteam_db(tmp_path / "devteam.db"))
    attempt = TaskAttempt.objects.get(task__key="TASK-005")
    assert (attempt.tokens_input, attempt.tokens_output) == (None, None)
    body = api.get(f"/api/v1/task-attempts/{attempt.pk}/").json()
    assert (body["tokens_input"], body["tokens_output"]) == (None, None)
    listed = api.get("/api/v1/task-attempts/", {"page_size": 100}).json()["results"]
    assert sum(row["tokens_input"] is None for row in listed) == 2
    for url in (f"/admin/sessions_app/taskattempt/{attempt.pk}/change/", "/admin/sessions_app/taskattempt/",
                f"/admin/sessions_app/task/{attempt.task_id}/change/"):
        html = admin_client.get(url).content.decode()
        assert not re.search(r"None (in|out|tokens)", html), url  # an unknown count is shown as unknown
    exported = tmp_path / "exported.db"
    call_command("export_seed", "devteam", str(exported), stdout=StringIO())
    assert {(row["task_id"], row["attempt_number"]): (row["tokens_input"], row["tokens_output"])
            for row in file_rows(exported, "task_attempts")} == {
        ("TASK-001", 1): (100, 50), ("TASK-001", 2): (300, 80), ("TASK-003", 1): (5, 5), ("TASK-003", 2): (None, 7),
        ("TASK-002", 1): (40, None), ("TASK-005", 1): (None, None)}


# The seed's views that answer a session's or a task's own id, and those columns.
ID_COLUMNS = {"current-session": ("id",), "session-summary": ("id",), "current-task": ("id", "session_id"),
              "model-usage": ("session_id",), "context-status": ("session_id",), "session-cost": ("session_id",),
              "task-attempts-summary": ("task_id",)}


def test_views_answer_the_seeds_own_ids_for_imported_rows_and_ours_for_rows_made_here(
        tmp_path: Path, api: APIClient) -> None:
    import_seed("devteam", _devteam_db(tmp_path / "devteam.db"))
    assert get_stat(api, "current-session")[0]["id"] == B
    [task] = get_stat(api, "current-task")
    assert (task["id"], task["key"], task["session_id"]) == ("TASK-002", "TASK-002", A)
    assert {row["id"] for row in get_stat(api, "session-summary")} == {A, B, C}
    attempted = {"TASK-001", "TASK-002", "TASK-003", "TASK-005"}
    assert {row["task_id"] for row in get_stat(api, "task-attempts-summary")} == attempted

    # Rows made here answer our ids, beside the imported ones.
    session = Session.objects.create(user_request="ours", key="ours", status="running",
                                     started_at=datetime(2026, 1, 1, tzinfo=UTC))
    task = Task.objects.create(session=session, key="T-ours", title="ours", status="in_progress",
                               started_at=datetime(2026, 1, 1, tzinfo=UTC))
    TaskAttempt.objects.create(task=task, session=session, attempt_number=1)
    assert get_stat(api, "current-session")[0]["id"] == session.pk
    assert (get_stat(api, "current-task")[0]["id"], get_stat(api, "current-task")[0]["session_id"]) == (
        task.pk, session.pk)
    assert {row["id"] for row in get_stat(api, "session-summary")} == {A, B, C, session.pk}
    assert {row["task_id"] for row in get_stat(api, "task-attempts-summary")} == {*attempted, task.pk}
    imported = {*Session.objects.exclude(pk=session.pk).values_list("pk", flat=True),
                *Task.objects.exclude(pk=task.pk).values_list("pk", flat=True)}
    for stat, columns in ID_COLUMNS.items():  # no seed view answers an imported row by our id
        answered = {row[column] for row in get_stat(api, stat) for column in columns}
        assert answered and not answered & imported, (stat, answered & imported)


USAGE_VIEWS = ("session-cost", "daily-cost", "model-usage", "agent-performance")


@pytest.mark.parametrize("stat", USAGE_VIEWS)
def test_calls_from_paths_devteam_does_not_have_are_labelled_figures_beside_the_seeds(
        tmp_path: Path, api: APIClient, stat: str) -> None:
    # Issue #26: an attempt, a ledger event and Claude Code's hooks report calls DevTeam's token_usage and
    # agent_runs never hold: the seed's columns still answer its SQL, the calls are in `all_sources`.
    path = _devteam_db(tmp_path / "devteam.db")
    import_seed("devteam", path)
    session = Session.objects.get(key=A)
    before = get_all_sources(api, stat)
    attempt = {"task": Task.objects.filter(session=session).first().pk, "model": "opus", "agent": "extra",
               "tokens_input": 1000, "tokens_output": 100, "cost_usd": "0.500000"}
    assert api.post("/api/v1/task-attempts/", attempt, format="json").status_code == 201
    event = {"session": session.pk, "type": "x-llm-call", "model": "opus", "agent": "extra", "tokens_in": 2000,
             "tokens_out": 200, "cost_usd": "0.250000"}
    assert api.post("/api/v1/events/", event, format="json").status_code == 201
    usage_record(items=[{"session_id": session.pk, "source": UsageSource.RUN, "request_id": "msg-1",
                         "model": "opus", "agent": "claude-code", "input_tokens": 4000, "output_tokens": 400,
                         "cost_usd": Decimal("0.125")}])
    assert TokenUsage.objects.exclude(source=UsageSource.TOKEN_USAGE).count() == 3

    _assert_answers_what_the_seed_answers(path, api, stat)
    after = get_all_sources(api, stat)
    assert sum(row["api_calls"] for row in after) == sum(row["api_calls"] for row in before) + 3
    if stat == "agent-performance":
        assert {row["agent"]: row["total_cost_cents"] for row in after if row["agent"] in ("extra", "claude-code")
                } == {"extra": 75, "claude-code": 13}


def test_session_cost_keeps_the_calls_of_a_deleted_session_under_null_apart_from_a_session_not_in_the_file(
        tmp_path: Path, api: APIClient) -> None:
    import_seed("devteam", _devteam_db(tmp_path / "devteam.db"))
    session = Session.objects.get(key=B)
    session.status = "completed"
    session.save(update_fields=["status"])
    session_delete(session=session)  # its one call (10 + 10 tokens) has no session now
    rows = {row["session_id"]: row for row in get_stat(api, "session-cost")}
    assert set(rows) == {A, None, "sess-gone"}  # A by the id its file gave it
    assert (rows[None]["api_calls"], rows[None]["total_tokens"]) == (2, 22)  # DevTeam's NULL one and B's
    assert (rows["sess-gone"]["api_calls"], rows["sess-gone"]["total_cost_usd"]) == (1, "1.2346")
    assert get_stat(api, "session-cost", session=Session.objects.get(key=A).pk)[0]["api_calls"] == 2


def test_it_refuses_a_file_without_devteams_tables_and_writes_nothing(tmp_path: Path) -> None:
    path = seed_database(tmp_path / "memory.db", "memory", {})
    with pytest.raises(CommandError, match=r"is not a devteam database: no table .*agent_runs"):
        import_seed("devteam", path)
    assert not Session.objects.exists() and not SeedRow.objects.exists()
