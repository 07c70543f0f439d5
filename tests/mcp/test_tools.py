"""Every tool, called by the official SDK client over HTTP, in a whole Ralph V2 loop (both protocol eras)."""

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import jsonschema
import pytest

from conversations_app.models import GlobalPattern, Observation
from ledger_app.models import Checkpoint, Issue, LedgerEvent, TokenUsage
from ralphsite.agents.mcp.tools import TOOLS
from sessions_app.models import Iteration, Question, Session, SessionStateEntry, Signal, Task, TaskAttempt
from sessions_app.services.questions import feedback_batch_create

pytestmark = pytest.mark.django_db(transaction=True)

SEED_000_TOOLS = {"get_plan", "update_plan", "get_task", "create_task", "update_task_status", "get_progress",
                  "submit_report", "submit_review", "get_questions", "create_question", "answer_question",
                  "get_feedback", "create_signal", "poll_signal"}
LOOP_TOOLS = {"claim_task", "heartbeat_task", "release_task", "get_waves", "get_state", "set_state", "append_event",
              "record_issue", "create_checkpoint", "add_token_usage"}
MEMORY_TOOLS = {"search_memory", "record_observation", "record_pattern"}
# Ralph V2's orchestrator (issue #30 §5): tests/mcp/test_whole_loop.py calls each of them.
ORCHESTRATOR_TOOLS = {"create_session", "get_session", "transition_session", "finish_session", "update_iteration",
                      "store_waves", "create_feedback", "resolve_feedback", "record_replanning", "start_invocation",
                      "complete_invocation"}
# What replaces or removes stored content (destructiveHint), and what a repeat leaves as it was (idempotentHint).
DESTRUCTIVE = {"update_plan", "set_state", "answer_question", "finish_session", "update_iteration"}
IDEMPOTENT_WRITES = {"update_plan", "set_state", "store_waves", "update_iteration", "resolve_feedback",
                     "complete_invocation"}


def test_the_tool_table_is_the_issues_list() -> None:
    assert set(TOOLS) == SEED_000_TOOLS | LOOP_TOOLS | MEMORY_TOOLS | ORCHESTRATOR_TOOLS


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_every_tool_is_listed_with_a_valid_described_schema(connect: Callable[..., Any], mode: str) -> None:
    with connect(mode=mode) as agent:
        listed = agent.list_tools()
    assert [tool.name for tool in listed] == list(TOOLS)  # a deterministic order
    for tool in listed:
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert tool.description and all(spec.get("description") for spec in schema["properties"].values())
        assert set(schema.get("required", [])) <= set(schema["properties"])
        session_bound = tool.name not in {"search_memory", "record_pattern", "create_session"}
        assert ("session" in schema.get("required", [])) is session_bound, tool.name
        reading = tool.name.startswith(("get_", "search_"))
        assert tool.annotations.read_only_hint is reading, tool.name
        assert tool.annotations.destructive_hint is (tool.name in DESTRUCTIVE), tool.name
        assert tool.annotations.idempotent_hint is (reading or tool.name in IDEMPOTENT_WRITES), tool.name
        assert tool.annotations.open_world_hint is False
        assert tool.title and tool.title[0].isupper() and tool.title != tool.name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object" and set(tool.output_schema.get("required", [])) <= set(
            tool.output_schema["properties"]), tool.name


def test_every_number_argument_is_bounded() -> None:
    """The schema says the bounds the domain enforces (a model sees them before it calls)."""
    for tool in TOOLS.values():
        for name, arg in tool.arguments.items():
            if arg.schema.get("type") in ("integer", "number"):
                assert "minimum" in arg.schema and "maximum" in arg.schema, (tool.name, name)
    importance = TOOLS["record_observation"].arguments["importance"].schema
    assert (importance["minimum"], importance["maximum"]) == (0, 1)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_whole_loop_runs_through_the_tools(connect: Callable[..., Any], mode: str) -> None:
    session = Session.objects.create(key="v2-loop", user_request="Build the widget service")
    Iteration.objects.create(session=session, number=1)
    s = {"session": "v2-loop"}
    with connect(mode=mode) as agent:
        # -- the planner ----------------------------------------------------------------------------
        assert agent.ok("get_plan", **s) == {"content": ""}
        assert agent.ok("update_plan", content="# Plan\n1. schema\n2. api", agent="planner", **s) == {
            "updated": True, "iteration": 1}
        assert agent.ok("get_plan", **s) == {"content": "# Plan\n1. schema\n2. api", "iteration": 1}
        first = agent.ok("create_task", key="task-1", title="Schema", objective="Tables", task_type="sequential",
                         files=["app/models.py", "app/migrations/*.py"], success_criteria=["migrate runs"], **s)
        assert first["key"] == "task-1" and first["files"] == ["app/migrations/*.py", "app/models.py"]
        assert "id" not in first and "session" not in first
        agent.ok("create_task", key="task-2", title="API", depends_on=["task-1"], **s)
        agent.ok("create_task", key="task-3", title="Docs", depends_on=["task-1", "task-2"], notes="short", **s)
        assert agent.ok("get_waves", **s) == {"waves": [{"wave": 1, "tasks": ["task-1"]},
                                                        {"wave": 2, "tasks": ["task-2"]},
                                                        {"wave": 3, "tasks": ["task-3"]}]}
        question = agent.ok("create_question", key="Q-TECH-001", category="technical", text="Which database?", **s)
        assert question == {"key": "Q-TECH-001", "category": "technical", "priority": "medium",
                            "status": "unanswered", "text": "Which database?", "iteration_number": 1}
        assert [q["key"] for q in agent.ok("get_questions", status="unanswered", **s)["questions"]] == ["Q-TECH-001"]
        answered = agent.ok("answer_question", question="Q-TECH-001", answer="PostgreSQL", answer_source="ADR-7",
                            answer_confidence="high", agent="questioner", **s)
        assert (answered["status"], answered["answer"], answered["answer_confidence"]) == ("answered", "PostgreSQL",
                                                                                          "high")
        assert agent.ok("get_questions", status="unanswered", **s) == {"questions": []}
        assert agent.ok("get_questions", category="technical", **s)["questions"][0]["answer_source"] == "ADR-7"

        # -- an executor ----------------------------------------------------------------------------
        claimed = agent.ok("claim_task", agent="exec-1", lease_seconds=120, **s)["task"]
        assert (claimed["key"], claimed["status"], claimed["claimed_by"], claimed["claim"]) == (
            "task-1", "in_progress", "exec-1", 1)
        assert agent.ok("claim_task", agent="exec-2", **s) == {  # task-2 waits for task-1
            "task": None, "reason": "waiting", "message": "Tasks in progress or in review will unblock more.",
            "max_concurrency": 2, "in_progress": ["task-1"], "unfinished": 3}
        beat = agent.ok("heartbeat_task", task="task-1", agent="exec-1", lease_seconds=300, claim=1, **s)
        assert beat["key"] == "task-1" and beat["lease_expires_at"].endswith("Z")
        released = agent.ok("release_task", task="task-1", agent="exec-1", reason="context full", claim=1, **s)
        assert released == {"key": "task-1", "status": "not_started"}
        again = agent.ok("claim_task", agent="exec-1", **s)
        assert [again["task"][name] for name in ("key", "claim")] == ["task-1", 2], again
        assert agent.ok("get_task", task="task-1", **s)["claimed_by"] == "exec-1"
        reported = agent.ok("submit_report", task="task-1", implementation_report="## PART 1\nDone.", agent="exec-1",
                            model="sonnet", status="success", tokens_input=1000, tokens_output=200, cost_usd=0.0125,
                            request_id="req-1", claim=2, **s)
        assert reported == {"task": "task-1", "attempt_number": 1, "created": True}
        for _ in range(2):
            issue = agent.ok("record_issue", task_key="task-1", kind="test_failure", signature="test_api::test_x",
                             message="AssertionError", file="tests/test_api.py", line=12, **s)
        assert issue == {"signature": "test_api::test_x", "kind": "test_failure", "count": 2, "created": False}
        event = agent.ok("append_event", type="backend_call_finished", task_key="task-1", agent="exec-1",
                         tokens_in=10, tokens_out=5, cost_usd=0.001, meta={"backend": "claude"},
                         idempotency_key="call-1", **s)
        assert event["created"] is True and event["type"] == "backend_call_finished"
        again = agent.ok("append_event", type="backend_call_finished", idempotency_key="call-1", **s)
        assert again == {"id": event["id"], "type": "backend_call_finished", "created": False}
        usage = agent.ok("add_token_usage", model="sonnet", input_tokens=300, output_tokens=40, cost_usd=0.002,
                         task_key="task-1", **s)
        assert usage == {"model": "sonnet", "input_tokens": 300, "output_tokens": 40, "cost_usd": "0.002000",
                         "is_estimated": False}
        reported_again = agent.ok("add_token_usage", model="sonnet", input_tokens=1000, output_tokens=200,
                                  cost_usd=0.0125, request_id="req-1", **s)  # the report's call: counted once
        assert reported_again["cost_usd"] == "0.012500"
        # One row, token usage from now on: DevTeam's token_usage holds it (issue #26).
        assert list(TokenUsage.objects.filter(request_id="req-1").values_list("source", flat=True)) == ["token_usage"]
        noted = agent.ok("record_observation", type="note", content="Chose PostgreSQL for the ledger", **s)
        assert noted["type"] == "note"
        checkpoint = agent.ok("create_checkpoint", key="chk-task-1", git_ref="ralph/task-1", task_key="task-1",
                              summary="schema done", **s)
        assert checkpoint == {"key": "chk-task-1", "git_ref": "ralph/task-1", "task_key": "task-1"}

        # -- the reviewer and the orchestrator ------------------------------------------------------
        review = agent.ok("submit_review", task="task-1", review_report="Looks right.", verdict="qualified",
                          agent="reviewer", **s)
        assert review == {"task": "task-1", "attempt_number": 1, "verdict": "qualified"}
        done = agent.ok("update_task_status", task="task-1", status="completed", annotation="reviewed",
                        agent="orchestrator", claim=2, **s)
        assert done == {"key": "task-1", "status": "completed"}
        assert agent.ok("get_task", task="task-1", **s)["latest_attempt"] == {
            "attempt_number": 1, "status": "success", "agent": "exec-1", "model": "sonnet",
            "review_verdict": "qualified", "reviewed_at": TaskAttempt.objects.get().reviewed_at.isoformat()
            .replace("+00:00", "Z")}
        progress = agent.ok("get_progress", **s)
        assert progress["total"] == 3 and progress["by_status"] == {"not_started": 2, "completed": 1}
        assert [t["key"] for t in progress["tasks"]] == ["task-1", "task-2", "task-3"]

        assert agent.ok("set_state", key="current_phase", value="executing", **s) == {
            "key": "current_phase", "value": "executing", "created": True}
        agent.ok("set_state", key="budget", value={"tokens": 5000, "eco": False}, **s)
        assert agent.ok("get_state", key="budget", **s) == {"state": {"budget": {"tokens": 5000, "eco": False}}}
        assert agent.ok("get_state", **s)["state"].keys() == {"budget", "current_phase"}
        assert agent.ok("get_state", key="never", **s) == {"state": {}}

        sent = agent.ok("create_signal", type="steer", message="Prefer small PRs", **s)
        assert sent["type"] == "steer"
        polled = agent.ok("poll_signal", agent="orchestrator", **s)["signal"]
        assert (polled["id"], polled["message"]) == (sent["id"], "Prefer small PRs")
        assert agent.ok("poll_signal", **s) == {"signal": None}

        feedback_batch_create(data={"iteration": Iteration.objects.get(session=session), "batch_timestamp": "b1",
                                    "items": [{"issue_key": "FB-1", "severity": "critical",
                                               "description": "Login fails"}]})
        assert agent.ok("get_feedback", iteration=1, **s) == {"batches": [{"iteration": 1, "batch": "b1", "items": [
            {"issue_key": "FB-1", "severity": "critical", "description": "Login fails", "is_resolved": False}],
            "attachments": []}]}
        assert agent.ok("get_feedback", iteration=2, **s) == {"batches": []}

        found = agent.ok("search_memory", q="PostgreSQL", kind="observation")
        assert found["count"] == 1 and found["hits"][0]["session"] == session.id
        assert "<mark>PostgreSQL</mark>" in found["hits"][0]["snippet"]
        assert agent.ok("search_memory", q="PostgreSQL", session="v2-loop")["count"] == 1
        pattern = agent.ok("record_pattern", pattern_type="best_practice", description="Name tasks by key",
                           project="/srv/widgets")
        assert pattern == {"pattern_type": "best_practice", "frequency": 1, "created": True,
                           "source_projects": ["/srv/widgets"]}
        assert agent.called == SEED_000_TOOLS | LOOP_TOOLS | MEMORY_TOOLS

    # What the tools wrote is what the REST twins write: the rows, and the ledger's audit events.
    session.refresh_from_db()
    assert session.current_plan_content == "# Plan\n1. schema\n2. api"
    assert list(Task.objects.filter(session=session).order_by("key").values_list("key", "status")) == [
        ("task-1", "completed"), ("task-2", "not_started"), ("task-3", "not_started")]
    assert Question.objects.get().answer == "PostgreSQL"
    assert SessionStateEntry.objects.filter(session=session).count() == 2
    assert Signal.objects.get().processed_by == "orchestrator"
    assert Issue.objects.get().count == 2 and Checkpoint.objects.get().session_id == session.id
    assert sorted(TokenUsage.objects.filter(source="token_usage").values_list("input_tokens", flat=True)) == [
        300, 1000]  # the report's call, reported as token usage too
    assert Observation.objects.get().session_id == session.id and GlobalPattern.objects.get().frequency == 1
    audit = [e.type for e in LedgerEvent.objects.filter(session=session).order_by("id")]
    assert audit == ["question_answered", "task_claimed", "task_released", "task_claimed", "issue_recorded",
                     "issue_recorded", "backend_call_finished", "checkpoint_created", "task_status_changed",
                     "signal_sent", "signal_processed"]
    # Session totals: the attempt, the event and the usage row.
    assert (session.total_tokens_input, session.total_tokens_output) == (1000 + 10 + 300, 200 + 5 + 40)
    assert session.total_cost_usd == Decimal("0.0125") + Decimal("0.001") + Decimal("0.002")
