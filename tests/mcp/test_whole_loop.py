"""Seed 000's whole Ralph V2 loop through MCP tools alone, one token and one role's tool set per agent
(issue #30 §5): the orchestrator (a project token) creates the session and drives its states, iterations,
waves, invocations and feedback; the planner, the executors and the reviewer each hold a session token
bound to their name. Every result is checked against its tool's outputSchema (tests/mcp/conftest.py)."""

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from ralphsite.agents.mcp.toolsets import TOOL_SETS
from ralphsite.core.models import TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import (
    AgentInvocation,
    Iteration,
    PlanSnapshot,
    ReplanningDelta,
    Session,
    Task,
    TaskAttempt,
)
from tests.mcp.test_tools import ORCHESTRATOR_TOOLS

pytestmark = pytest.mark.django_db(transaction=True)

PROJECT = "/srv/widgets"


def test_a_ralph_v2_loop_runs_through_mcp_alone_one_token_per_agent(connect: Callable[..., Any], user) -> None:
    orchestrator_token = api_token_create(user=user, scope=TokenScope.PROJECT, project_path=PROJECT,
                                          agent="orchestrator")
    with connect(secret=orchestrator_token.secret, tools="orchestrator") as orchestrator:
        assert {tool.name for tool in orchestrator.list_tools()} == TOOL_SETS["orchestrator"]
        # A project token creates sessions of its project only.
        assert orchestrator.error("create_session", key="elsewhere", project_path="/srv/gadgets")["code"] == \
            "permission_denied"
        session = orchestrator.ok("create_session", key="widgets-1", user_request="Build the widget service",
                                  project_path=PROJECT, max_concurrency=2, default_model="sonnet")
        assert (session["state"], session["status"], session["current_iteration"]) == ("initializing", "running", 1)
        s = {"session": "widgets-1"}
        tokens = {agent: api_token_create(user=user, scope=TokenScope.SESSION, session_id=session["id"],
                                          agent=agent).secret for agent in ("planner", "exec-1", "reviewer")}

        # -- iteration 1: planning ----------------------------------------------------------------------------
        assert orchestrator.ok("transition_session", state="planning", current_phase="planning",
                               message="plan the work", **s)["state"] == "planning"
        planning = orchestrator.ok("start_invocation", role="planner", mode="INITIALIZE", model="sonnet",
                                   prompt="Plan the widget service", iteration=1, **s)
        assert planning["status"] == "started"
        with connect(secret=tokens["planner"], tools="planner") as planner:
            assert {tool.name for tool in planner.list_tools()} == TOOL_SETS["planner"]
            assert planner.ok("get_session")["user_request"] == "Build the widget service"
            planner.ok("update_plan", content="# Plan v1\n1. schema\n2. api")
            planner.ok("create_task", key="task-1", title="Schema", objective="Tables", success_criteria=["migrates"])
            planner.ok("create_task", key="task-2", title="API", objective="Endpoints", depends_on=["task-1"])
            # A tool outside the planner's set is not offered to it.
            assert "claim_task" not in {tool.name for tool in planner.list_tools()}
        finished = orchestrator.ok("complete_invocation", invocation=planning["id"], status="completed",
                                   response="2 tasks", tokens_input=2000, tokens_output=300, cost_usd=0.01,
                                   request_id="req-plan-1", duration_ms=4200, **s)
        assert (finished["status"], finished["cost_usd"], finished["is_estimated"]) == ("completed", "0.010000", False)
        assert orchestrator.ok("update_iteration", number=1, planning_complete=True, tasks_defined=2, **s)[
            "planning_complete"] is True
        assert orchestrator.ok("store_waves", **s) == {"waves": [{"wave": 1, "tasks": ["task-1"]},
                                                                 {"wave": 2, "tasks": ["task-2"]}]}

        # -- iteration 1: executing and reviewing, wave by wave ------------------------------------------------
        for wave, key in ((1, "task-1"), (2, "task-2")):
            orchestrator.ok("transition_session", state="executing_batch", current_wave=wave, **s)
            _execute_and_review(connect, tokens, key)
            orchestrator.ok("transition_session", state="reviewing_batch", current_wave=wave, **s)
        assert orchestrator.ok("get_progress", **s)["by_status"] == {"completed": 2}
        orchestrator.ok("transition_session", state="session_review", **s)
        orchestrator.ok("update_iteration", number=1, review_content="Both tasks done.",
                        completed_at="2026-02-09T14:30:00Z", **s)

        # -- human feedback: iteration 2 replans -------------------------------------------------------------
        orchestrator.ok("transition_session", state="awaiting_feedback", **s)
        batch = orchestrator.ok("create_feedback", iteration=1, batch_timestamp="20260209-143000",
                                summary="One bug", items=[{"issue_key": "ISS-001", "severity": "critical",
                                                           "description": "Login fails",
                                                           "suggested_fix": "Check the session cookie"}], **s)
        assert [item["issue_key"] for item in batch["items"]] == ["ISS-001"]
        assert orchestrator.ok("transition_session", state="replanning", current_iteration=2, **s)[
            "current_iteration"] == 2
        with connect(secret=tokens["planner"], tools="planner") as planner:
            [feedback] = planner.ok("get_feedback", iteration=1)["batches"]
            assert feedback["items"][0]["is_resolved"] is False
            assert planner.ok("update_plan", content="# Plan v2\n3. fix login") == {
                "updated": True, "iteration": 2, "snapshots": [1]}
            planner.ok("create_task", key="task-3", title="Fix login", objective="ISS-001", depends_on=["task-2"])
            assert planner.ok("resolve_feedback", item="ISS-001")["is_resolved"] is True
            assert planner.ok("resolve_feedback", item="ISS-001")["is_resolved"] is True  # idempotent
            assert planner.ok("record_replanning", previous_plan_snapshot_ref="plan.iteration-1",
                              added_items="- task-3", rationale="ISS-001") == {
                "iteration": 2, "previous_plan_snapshot_ref": "plan.iteration-1", "added_items": "- task-3",
                "rationale": "ISS-001"}
            assert planner.error("record_replanning", summary="again")["code"] == "conflict"  # once per iteration
        assert orchestrator.ok("store_waves", **s)["waves"][-1] == {"wave": 3, "tasks": ["task-3"]}
        orchestrator.ok("transition_session", state="executing_batch", current_wave=3, **s)
        _execute_and_review(connect, tokens, "task-3")
        orchestrator.ok("transition_session", state="session_review", **s)

        # -- the end ---------------------------------------------------------------------------------------
        assert orchestrator.ok("poll_signal", **s) == {"signal": None}
        done = orchestrator.ok("finish_session", status="completed", exit_reason="all_tasks_done",
                               summary="3 tasks, 1 feedback round", **s)
        assert (done["status"], done["state"], done["exit_reason"]) == ("completed", "complete", "all_tasks_done")
        assert orchestrator.error("transition_session", state="planning", **s)["code"] == "session_finished"
        assert orchestrator.ok("get_session", **s)["total_tokens_input"] == 5000
        assert ORCHESTRATOR_TOOLS - orchestrator.called == {"resolve_feedback", "record_replanning"}  # the planner's

    row = Session.objects.get(key="widgets-1")
    assert (row.status, row.project_path, row.summary) == ("completed", PROJECT, "3 tasks, 1 feedback round")
    assert list(Task.objects.filter(session=row).order_by("key").values_list("key", "status", "wave")) == [
        ("task-1", "completed", 1), ("task-2", "completed", 2), ("task-3", "completed", 3)]
    iterations = {it.number: it for it in Iteration.objects.filter(session=row)}
    assert set(iterations) == {1, 2}
    assert iterations[1].planning_complete and iterations[1].planning_completed_at is not None
    assert iterations[1].review_content == "Both tasks done." and iterations[1].completed_at is not None
    assert PlanSnapshot.objects.get(session=row).content.startswith("# Plan v1")
    assert ReplanningDelta.objects.get(iteration=iterations[2]).rationale == "ISS-001"
    invocation = AgentInvocation.objects.get(session=row)
    assert (invocation.role, invocation.agent, invocation.status) == ("planner", "orchestrator", "completed")
    assert list(TaskAttempt.objects.filter(task__session=row).values_list("agent", "review_verdict")) == [
        ("exec-1", "qualified")] * 3
    # The totals: the planner's invocation and the three reports (1000 in, 100 out, $0.002 each).
    assert (row.total_tokens_input, row.total_tokens_output) == (2000 + 3 * 1000, 300 + 3 * 100)
    assert row.total_cost_usd == Decimal("0.01") + 3 * Decimal("0.002")


def _execute_and_review(connect: Callable[..., Any], tokens: dict[str, str], key: str) -> None:
    """An executor claims the next task, reports an attempt and hands it to review; the reviewer completes it."""
    with connect(secret=tokens["exec-1"], tools="executor") as executor:
        claimed = executor.ok("claim_task")["task"]
        assert (claimed["key"], claimed["claimed_by"]) == (key, "exec-1")
        executor.ok("submit_report", task=key, implementation_report=f"## PART 1\n{key} done.", model="sonnet",
                    status="success", tokens_input=1000, tokens_output=100, cost_usd=0.002,
                    request_id=f"req-{key}")
        assert executor.ok("update_task_status", task=key, status="review_pending", annotation="ready for review")[
            "status"] == "review_pending"
    with connect(secret=tokens["reviewer"], tools="reviewer") as reviewer:
        assert reviewer.ok("get_task", task=key)["latest_attempt"]["attempt_number"] == 1
        assert reviewer.ok("submit_review", task=key, review_report="Looks right.", verdict="qualified",
                           complete=True) == {"task": key, "attempt_number": 1, "verdict": "qualified"}
