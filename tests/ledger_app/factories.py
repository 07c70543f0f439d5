"""Small builders for ledger tests (ORM rows; the API tests post their own bodies)."""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.db.models import Model
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent, TokenUsage, UsageSource
from sessions_app.models import (
    AcceptanceCriterion,
    AgentInvocation,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    Plan,
    Session,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
)


def make_session(**fields: Any) -> Session:
    return Session.objects.create(**fields)


def make_event(session: Session, index: int = 0, **fields: Any) -> LedgerEvent:
    values: dict[str, Any] = {"type": "task_started", "message": f"event {index}", "task_key": f"task-{index}"}
    return LedgerEvent.objects.create(session=session, **{**values, **fields})


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def usd(text: str) -> Decimal:
    return Decimal(text)


def dated(instance: Model, when: str, field: str = "created_at") -> Model:
    """Back-date an auto-set timestamp (auto_now_add ignores the value given to create)."""
    type(instance).objects.filter(pk=instance.pk).update(**{field: utc(when)})
    setattr(instance, field, utc(when))
    return instance


def _stat_answer(api: APIClient, name: str, **params: str) -> dict:
    """`GET stats/<name>/`, after checking every row (and every `all_sources` row) has exactly its columns, in
    order."""
    from ledger_app.stats import STATS

    response = api.get(f"/api/v1/stats/{name}/", params)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["columns"] == list(STATS[name].columns)
    assert all(list(row) == body["columns"] for row in body["rows"])
    extra = STATS[name].all_sources
    if extra is None:
        assert body["all_sources"] is None
    else:
        assert body["all_sources"]["columns"] == list(extra.columns)
        assert all(list(row) == list(extra.columns) for row in body["all_sources"]["rows"])
    return body


def get_stat(api: APIClient, name: str, **params: str) -> list[dict]:
    """`GET stats/<name>/` rows: what the seed's view answers."""
    return _stat_answer(api, name, **params)["rows"]


def get_all_sources(api: APIClient, name: str, **params: str) -> list[dict]:
    """`GET stats/<name>/`'s `all_sources` rows: Ralph Site's own figures over every path that reports a call."""
    return _stat_answer(api, name, **params)["all_sources"]["rows"]


@dataclass(frozen=True)
class DevTeam:
    s1: Session
    s2: Session
    tasks: dict[str, Task]  # by name: t1…t7


def add_runs(session: Session, runs: list[tuple[str, str, str, int | None, str, int, int, str]]) -> None:
    """Agent runs and, as the services record them, their provider calls in token usage (the session
    totals are the fixture's own)."""
    for agent, model, status, duration_ms, cost, tokens_in, tokens_out, at in runs:
        run = AgentInvocation.objects.create(session=session, agent=agent, model=model, status=status,
                                             duration_ms=duration_ms, cost_usd=Decimal(cost), tokens_input=tokens_in,
                                             tokens_output=tokens_out, started_at=utc(at))
        if tokens_in or tokens_out or Decimal(cost):
            TokenUsage.objects.create(session=session, agent=agent, model=model, input_tokens=tokens_in,
                                      output_tokens=tokens_out, cost_usd=Decimal(cost), recorded_at=utc(at),
                                      source=UsageSource.INVOCATION, source_id=run.pk)


def add_attempts(task: Task, attempts: list[tuple[str, int, int, str]], at: str) -> None:
    for number, (status, tokens_in, tokens_out, cost) in enumerate(attempts, start=1):
        dated(TaskAttempt.objects.create(task=task, session=task.session, attempt_number=number, status=status,
                                         tokens_input=tokens_in, tokens_output=tokens_out, cost_usd=Decimal(cost)), at)


def make_devteam() -> DevTeam:
    """Two sessions with agent runs, escalations, tasks (TASK-002 with scope files and dependencies),
    attempts, criteria, features and context budgets (the session statistics' answers are worked out
    from these in test_session_stats.py)."""
    s1 = make_session(command="/devteam:implement", status="completed", started_at=utc("2025-03-01T10:00:00Z"),
                      ended_at=utc("2025-03-02T10:00:00Z"), current_phase="review", current_agent="reviewer",
                      current_model="opus", current_iteration=3, execution_mode="eco", total_tokens_input=1000,
                      total_tokens_output=234, total_cost_usd=Decimal("0.125000"), bug_council_activated=True,
                      plan_key="plan-001")
    s2 = make_session(started_at=utc("2025-04-01T00:00:00Z"), total_tokens_input=5, total_tokens_output=6,
                      total_cost_usd=Decimal("1.234567"))
    add_runs(s1, [("backend", "sonnet", "success", 1000, "0.005000", 100, 10, "2025-03-01T10:00:00Z"),
                  ("backend", "sonnet", "completed", 2000, "0.010000", 200, 20, "2025-03-01T11:00:00Z"),
                  ("backend", "sonnet", "failed", None, "0.010000", 50, 5, "2025-03-01T12:00:00Z"),
                  ("reviewer", "opus", "escalated", 4500, "0.020000", 10, 1, "2025-03-02T00:00:00Z")])
    add_runs(s2, [("reviewer", "opus", "success", 1500, "0.000000", 0, 0, "2025-04-01T00:00:00Z"),
                  ("reviewer", "opus", "running", None, "0.001000", 1, 1, "2025-04-01T01:00:00Z"),
                  ("planner", "haiku", "started", None, "0.000000", 0, 0, "2025-04-01T02:00:00Z")])
    for reason in ("consecutive_failures", "complexity_increase"):
        Escalation.objects.create(session=s1, from_model="sonnet", to_model="opus", reason=reason)

    plan = Plan.objects.create(key="plan-001", name="Plan one")
    march, april = "2025-03-01T09:00:00Z", "2025-04-01T00:00:00Z"
    t1 = dated(Task.objects.create(session=s1, key="TASK-001", title="Model", sprint_key="sprint-1",
                                   status="completed"), march)
    t2 = dated(Task.objects.create(
        session=s1, key="TASK-002", title="Build the API", description="REST endpoints", work_type="feature",
        plan=plan, sprint_key="sprint-1", parent=t1, status="in_progress", scope={"files": ["src/api.py"]},
        assigned_agent="backend", assigned_model="sonnet", priority="high", sequence=2, estimated_effort="small",
        iteration_count=2, files_changed=["src/api.py"], started_at=utc("2025-03-01T12:00:00Z")), march)
    t3 = dated(Task.objects.create(session=s1, key="TASK-003", title="Docs", sprint_key="sprint-1"), march)
    t4 = dated(Task.objects.create(session=s1, key="TASK-004", title="Lint", sprint_key="sprint-2",
                                   status="failed"), march)
    t5 = dated(Task.objects.create(session=s2, key="TASK-001", title="Wire it", sprint_key="sprint-2",
                                   status="in_progress", started_at=utc("2025-04-01T00:30:00Z")), april)
    t6 = dated(Task.objects.create(session=s2, key="TASK-006", title="Never started", status="in_progress"), april)
    t7 = dated(Task.objects.create(session=s2, key="TASK-007", title="Blocked", sprint_key="sprint-2",
                                   status="blocked"), april)
    for path, is_pattern, access in (("src/api.py", False, "allowed"), ("src/**/*.test.py", True, "allowed"),
                                     ("secrets.env", False, "forbidden")):
        TaskFile.objects.create(task=t2, path=path, is_pattern=is_pattern, access_type=access)
    for task, depends_on in ((t2, t1), (t3, t2), (t4, t2)):
        TaskDependency.objects.create(task=task, depends_on=depends_on)
    add_attempts(t2, [("failed", 100, 10, "0.010000"), ("escalated", 50, 5, "0.004000"),
                      ("success", 20, 2, "0.001000")], "2025-03-01T12:00:00Z")
    add_attempts(t1, [("success", 10, 0, "0.004999")], "2025-03-01T12:00:00Z")
    add_attempts(t5, [("success", 1, 1, "0.000000")], "2025-04-01T01:00:00Z")

    for key, plan_key, task_key, passes, at in (
        ("AC-001", "plan-001", "TASK-002", True, march), ("AC-002", "plan-001", "TASK-002", False, march),
        ("AC-003", "plan-001", "TASK-002", True, march), ("AC-004", "plan-001", "TASK-003", False, march),
        ("AC-001", "plan-002", "TASK-002", True, april), ("AC-005", "plan-002", "", True, april),
    ):
        dated(AcceptanceCriterion.objects.create(key=key, plan_key=plan_key, task_key=task_key, passes=passes,
                                                 description=f"{key} holds"), at)
    for key, plan_key, passes, steps_total, steps_passed, at in (
        ("FEAT-001", "plan-001", True, 3, 3, march), ("FEAT-002", "plan-001", False, 4, 2, march),
        ("FEAT-003", "plan-001", False, 0, 0, march), ("FEAT-004", "plan-002", True, 1, 1, april),
        ("FEAT-005", "", False, 2, 0, march),
    ):
        dated(Feature.objects.create(key=key, plan_key=plan_key, name=key, passes=passes, steps_total=steps_total,
                                     steps_passed=steps_passed), at)

    for session, model, limit, usage, percent, status, at in (
        (s1, "opus", 200_000, 150_000, 75.0, "warning", march), (s1, "sonnet", 200_000, 10_000, 5.0, "ok", march),
        (s2, "opus", 100_000, 95_000, 95.0, "critical", april),
    ):
        dated(ContextBudget.objects.create(session=session, model=model, context_limit=limit, current_usage=usage,
                                           usage_percent=percent, status=status), at)
    for _ in range(3):
        ContextSnapshot.objects.create(session=s1, snapshot_type="auto")
    return DevTeam(s1=s1, s2=s2, tasks={"t1": t1, "t2": t2, "t3": t3, "t4": t4, "t5": t5, "t6": t6, "t7": t7})


def add_orchestration_rows(index: int) -> None:
    """One more session with a row of every kind the session statistics read (for query counts)."""
    session = make_session(plan_key=f"plan-{index}")
    plan = Plan.objects.create(key=f"plan-{index}", name="More")
    add_runs(session, [("tester", "haiku", "success", 10, "0.000100", 1, 1, "2025-05-01T00:00:00Z")])
    Escalation.objects.create(session=session, from_model="haiku", to_model="sonnet", reason="consecutive_failures")
    task = Task.objects.create(session=session, key=f"TASK-{index}", title="More", plan=plan,
                               sprint_key=f"sprint-{index}", status="in_progress",
                               started_at=utc("2025-05-01T00:00:00Z"))
    add_attempts(task, [("failed", 1, 1, "0.000100")], "2025-05-01T00:00:00Z")
    AcceptanceCriterion.objects.create(key=f"AC-{index}", plan_key=plan.key, task_key=task.key, description="more")
    Feature.objects.create(key=f"FEAT-{index}", plan_key=plan.key, name="more")
    ContextBudget.objects.create(session=session, model="haiku", context_limit=1000)
    ContextSnapshot.objects.create(session=session, snapshot_type="checkpoint")


def ledger_verify_run(*args: str) -> tuple[int, str, str]:
    """`manage.py ledger_verify`: its exit status, standard output and error."""
    out, err = StringIO(), StringIO()
    try:
        call_command("ledger_verify", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return int(exit_.code), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()
