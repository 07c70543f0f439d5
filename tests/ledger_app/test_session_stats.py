"""The orchestration statistics against seed 003's view definitions, on the `devteam` fixture
(tests/ledger_app/conftest.py): every expected row below is worked out by hand from it."""

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from ralphsite.core.money import usd_to_cents
from tests.ledger_app.factories import DevTeam, get_stat

pytestmark = pytest.mark.django_db


def by_key(rows: list[dict], *columns: str) -> list[dict]:
    """Rows in the order the stat sorts them, where that order involves ULIDs made in one millisecond."""
    return sorted(rows, key=lambda row: tuple(row[column] for column in columns))


def test_it_summarises_each_session(api: APIClient, devteam: DevTeam) -> None:
    s1, s2 = devteam.s1, devteam.s2
    first = {"id": s1.id, "command": "/devteam:implement", "status": "completed", "started_at": "2025-03-01T10:00:00Z",
             "ended_at": "2025-03-02T10:00:00Z", "current_phase": "review", "current_agent": "reviewer",
             "current_model": "opus", "current_iteration": 3, "execution_mode": "eco", "total_tokens": 1234,
             "total_cost_dollars": "0.13", "agent_runs": 4, "escalations": 2, "bug_council_activated": True}
    second = {"id": s2.id, "command": "", "status": "running", "started_at": "2025-04-01T00:00:00Z",
              "ended_at": None, "current_phase": "", "current_agent": "", "current_model": "",
              "current_iteration": 1, "execution_mode": "normal", "total_tokens": 11, "total_cost_dollars": "1.23",
              "agent_runs": 3, "escalations": 0, "bug_council_activated": False}
    assert get_stat(api, "session-summary") == [second, first]
    assert get_stat(api, "session-summary", session=s1.id) == [first]
    assert get_stat(api, "session-summary", since="2025-03-15") == [second]


def test_it_breaks_agent_runs_down_by_session_and_model(api: APIClient, devteam: DevTeam) -> None:
    s1, s2 = devteam.s1.id, devteam.s2.id
    columns = ("session_id", "model", "runs", "successes", "failures", "success_rate", "tokens_input",
               "tokens_output", "cost_cents")
    expected = [dict(zip(columns, values, strict=True)) for values in (
        (s1, "opus", 1, 0, 0, 0.0, 10, 1, 2),
        (s1, "sonnet", 3, 2, 1, 66.7, 350, 35, 3),  # success + completed; 2.5 cents round up
        (s2, "haiku", 1, 0, 0, 0.0, 0, 0, 0),
        (s2, "opus", 2, 1, 0, 50.0, 1, 1, 0),
    )]
    assert get_stat(api, "model-usage") == by_key(expected, "session_id", "model")
    later = get_stat(api, "model-usage", since="2025-03-02")
    assert later == by_key([expected[0], expected[2], expected[3]], "session_id", "model")
    assert get_stat(api, "model-usage", until="2025-03-02") == [expected[1]]


def test_it_rates_each_agent(api: APIClient, devteam: DevTeam) -> None:
    assert get_stat(api, "agent-performance") == [
        {"agent": "backend", "total_runs": 3, "successes": 2, "success_rate": 66.7, "avg_duration_seconds": 1.5,
         "total_cost_cents": 3},
        {"agent": "planner", "total_runs": 1, "successes": 0, "success_rate": 0.0, "avg_duration_seconds": None,
         "total_cost_cents": 0},
        {"agent": "reviewer", "total_runs": 3, "successes": 1, "success_rate": 33.3, "avg_duration_seconds": 3.0,
         "total_cost_cents": 2},
    ]
    assert get_stat(api, "agent-performance", session=devteam.s2.id)[1] == {
        "agent": "reviewer", "total_runs": 2, "successes": 1, "success_rate": 50.0, "avg_duration_seconds": 1.5,
        "total_cost_cents": 0}


def test_it_finds_the_task_in_progress_started_last(api: APIClient, devteam: DevTeam) -> None:
    s1, s2, tasks = devteam.s1, devteam.s2, devteam.tasks
    # Seed 003's tasks columns, in its order, with `key` after `id`.
    latest = {"id": tasks["t5"].id, "key": "TASK-001", "name": "Wire it", "description": "", "task_type": "",
              "plan_id": None, "sprint_id": "sprint-2", "parent_task_id": None, "session_id": s2.id,
              "status": "in_progress", "scope_files": None, "scope_json": None, "assigned_agent": "",
              "assigned_model": "", "priority": "medium", "sequence": 0, "depends_on": [], "blocks": [],
              "estimated_effort": "", "actual_iterations": 0, "files_changed": [], "created_at": "2025-04-01T00:00:00Z",
              "started_at": "2025-04-01T00:30:00Z", "completed_at": None, "result_summary": "", "error_message": "",
              "commit_sha": ""}
    assert get_stat(api, "current-task") == [latest]
    assert get_stat(api, "current-task", session=s2.id) == [latest]  # never started sorts last on both backends
    assert get_stat(api, "current-task", session=s1.id) == [{
        "id": tasks["t2"].id, "key": "TASK-002", "name": "Build the API", "description": "REST endpoints",
        "task_type": "feature", "plan_id": "plan-001", "sprint_id": "sprint-1", "parent_task_id": "TASK-001",
        "session_id": s1.id, "status": "in_progress", "scope_files": "src/**/*.test.py,src/api.py",  # not forbidden
        "scope_json": {"files": ["src/api.py"]}, "assigned_agent": "backend", "assigned_model": "sonnet",
        "priority": "high", "sequence": 2, "depends_on": ["TASK-001"], "blocks": ["TASK-003", "TASK-004"],
        "estimated_effort": "small", "actual_iterations": 2, "files_changed": ["src/api.py"],
        "created_at": "2025-03-01T09:00:00Z", "started_at": "2025-03-01T12:00:00Z", "completed_at": None,
        "result_summary": "", "error_message": "", "commit_sha": ""}]
    assert [row["key"] for row in get_stat(api, "current-task", until="2025-03-15")] == ["TASK-002"]
    assert get_stat(api, "current-task", since="2025-05-01") == []


def test_it_measures_sprint_progress(api: APIClient, devteam: DevTeam) -> None:
    columns = ("sprint_id", "total_tasks", "completed", "in_progress", "failed", "pending", "completion_rate")
    sprint_1 = dict(zip(columns, ("sprint-1", 3, 1, 1, 0, 1, 33.3), strict=True))  # pending = not_started
    assert get_stat(api, "sprint-progress") == [sprint_1, dict(zip(columns, ("sprint-2", 3, 0, 1, 1, 0, 0.0),
                                                                   strict=True))]
    assert get_stat(api, "sprint-progress", session=devteam.s1.id) == [
        sprint_1, dict(zip(columns, ("sprint-2", 1, 0, 0, 1, 0, 0.0), strict=True))]
    assert get_stat(api, "sprint-progress", since="2025-03-15") == [
        dict(zip(columns, ("sprint-2", 2, 0, 1, 0, 0, 0.0), strict=True))]


def test_it_summarises_the_attempts_at_each_task(api: APIClient, devteam: DevTeam) -> None:
    tasks = devteam.tasks
    columns = ("task_id", "task_key", "total_attempts", "successes", "failures", "last_attempt", "total_tokens",
               "total_cost_cents")
    t1, t2, t5 = (dict(zip(columns, values, strict=True)) for values in (
        (tasks["t1"].id, "TASK-001", 1, 1, 0, 1, 10, 0),
        (tasks["t2"].id, "TASK-002", 3, 1, 1, 3, 187, 2),  # 1.5 cents round up
        (tasks["t5"].id, "TASK-001", 1, 1, 0, 1, 2, 0),  # the same key in another session: a row of its own
    ))
    assert get_stat(api, "task-attempts-summary") == by_key([t1, t2, t5], "task_key", "task_id")
    assert get_stat(api, "task-attempts-summary", session=devteam.s1.id) == [t1, t2]
    assert get_stat(api, "task-attempts-summary", since="2025-03-15") == [t5]


def test_it_counts_passing_acceptance_criteria_per_task(api: APIClient, devteam: DevTeam) -> None:
    columns = ("task_id", "total_criteria", "passing", "failing", "pass_rate")
    no_task, task_2, task_3 = (dict(zip(columns, values, strict=True)) for values in (
        (None, 1, 1, 0, 100.0), ("TASK-002", 4, 3, 1, 75.0), ("TASK-003", 1, 0, 1, 0.0)))  # None: no task
    assert get_stat(api, "acceptance-criteria-status") == [no_task, task_2, task_3]
    assert get_stat(api, "acceptance-criteria-status", session=devteam.s1.id) == [  # its plan-001
        dict(zip(columns, ("TASK-002", 3, 2, 1, 66.7), strict=True)), task_3]
    assert get_stat(api, "acceptance-criteria-status", session=devteam.s2.id) == []  # it names no plan
    assert get_stat(api, "acceptance-criteria-status", since="2025-03-15") == [
        no_task, dict(zip(columns, ("TASK-002", 1, 1, 0, 100.0), strict=True))]


def test_it_counts_passing_features_per_plan(api: APIClient, devteam: DevTeam) -> None:
    columns = ("plan_id", "total_features", "passing", "failing", "total_steps", "steps_passed", "feature_pass_rate")
    no_plan, plan_1, plan_2 = (dict(zip(columns, values, strict=True)) for values in (
        (None, 1, 0, 1, 2, 0, 0.0), ("plan-001", 3, 1, 2, 7, 5, 33.3), ("plan-002", 1, 1, 0, 1, 1, 100.0)))
    assert get_stat(api, "feature-status") == [no_plan, plan_1, plan_2]
    assert get_stat(api, "feature-status", session=devteam.s1.id) == [plan_1]
    assert get_stat(api, "feature-status", until="2025-03-15") == [no_plan, plan_1]


def test_it_reports_each_context_budget_with_its_sessions_snapshots(api: APIClient, devteam: DevTeam) -> None:
    s1, s2 = devteam.s1.id, devteam.s2.id
    columns = ("session_id", "model", "context_limit", "current_usage", "usage_percent", "status", "snapshots_created")
    opus_1, sonnet_1, opus_2 = (dict(zip(columns, values, strict=True)) for values in (
        (s1, "opus", 200_000, 150_000, 75.0, "warning", 3), (s1, "sonnet", 200_000, 10_000, 5.0, "ok", 3),
        (s2, "opus", 100_000, 95_000, 95.0, "critical", 0)))
    assert get_stat(api, "context-status") == by_key([opus_1, sonnet_1, opus_2], "session_id", "model")
    assert get_stat(api, "context-status", session=s1) == [opus_1, sonnet_1]
    assert get_stat(api, "context-status", since="2025-03-15") == [opus_2]


@pytest.mark.parametrize(("usd", "expected"), [("0.125000", 13), ("0.124999", 12), ("1.234567", 123),
                                               ("0.005000", 1), ("0.000000", 0)])
def test_it_rounds_one_amount_to_cents_half_away_from_zero(usd: str, expected: int) -> None:
    assert usd_to_cents(Decimal(usd)) == expected
