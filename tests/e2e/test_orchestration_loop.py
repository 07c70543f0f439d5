"""A whole Ralph loop driven over real HTTP, the way an orchestrator and its agents drive it."""

from decimal import Decimal

import pytest
from django.utils import timezone

from tests.e2e.client import Agent

pytestmark = pytest.mark.django_db(transaction=True)

V1 = "/api/v1"

# t1 ← t2, t1 ← t3, (t2, t3) ← t4: three waves; task-2 and task-3 may run side by side.
TASKS = [
    {"key": "task-1", "title": "Schema", "depends_on": []},
    {"key": "task-2", "title": "API", "depends_on": ["task-1"], "task_type": "parallelizable"},
    {"key": "task-3", "title": "Admin", "depends_on": ["task-1"], "task_type": "parallelizable"},
    {"key": "task-4", "title": "Docs", "depends_on": ["task-2", "task-3"]},
]
# What each executor reports: (tokens_input, tokens_output, cost_usd).
USAGE = {"task-1": (1000, 200, "0.012345"), "task-2": (2000, 300, "0.020000"),
         "task-3": (1500, 250, "0.007655"), "task-4": (500, 50, "0.000001")}


CLAIMS: dict[str, int] = {}  # task key → the claim value its claim returned (the fence of later writes)


def claim(agent: Agent, session_id: str, who: str) -> str:
    """The claimed task's key, or why nothing was claimed (`all_done`, `waiting`, `at_capacity`…)."""
    reply = agent.post(f"{V1}/sessions/{session_id}/claim-task/", {"agent": who, "lease_seconds": 120})
    if reply.status == 409 and reply.json()["code"] == "nothing_to_claim":
        return reply.json()["details"]["reason"]
    assert reply.status == 200, reply.body
    task = reply.json()
    assert task["status"] == "in_progress"
    assert task["claimed_by"] == who and task["assigned_agent"] == who
    CLAIMS[task["key"]] = task["claim"]
    return task["key"]


def execute(agent: Agent, task_id: str, key: str, who: str) -> None:
    """The executor reports, the reviewer approves, the orchestrator marks the task completed."""
    tokens_in, tokens_out, cost = USAGE[key]
    attempt = agent.ok("POST", f"{V1}/tasks/{task_id}/report/", {
        "implementation_report": f"Implemented {key}.", "agent": who, "model": "sonnet", "status": "success",
        "tokens_input": tokens_in, "tokens_output": tokens_out, "cost_usd": cost, "claim": CLAIMS[key]}, expect=201)
    assert attempt["attempt_number"] == 1 and attempt["task"] == task_id
    reviewed = agent.ok("POST", f"{V1}/tasks/{task_id}/review/",
                        {"review_report": f"{key} looks right.", "verdict": "qualified", "agent": "reviewer"})
    assert reviewed["id"] == attempt["id"] and reviewed["review_verdict"] == "qualified"
    assert reviewed["reviewed_at"] is not None
    task = agent.ok("POST", f"{V1}/tasks/{task_id}/status/",
                    {"status": "completed", "annotation": "reviewed", "agent": "orchestrator", "claim": CLAIMS[key]})
    assert task["status"] == "completed" and task["completed_at"] is not None
    assert task["claimed_by"] == "" and task["lease_expires_at"] is None
    assert task["latest_attempt"]["id"] == attempt["id"]


def test_it_runs_a_whole_orchestration_loop_and_keeps_its_audit_trail(agent: Agent) -> None:
    # -- the orchestrator opens a session and plans ---------------------------------------------
    session = agent.ok("POST", f"{V1}/sessions/", {
        "key": "e2e-loop", "user_request": "Build the widget service", "project_path": "/srv/widgets",
        "command": "implement", "command_type": "implement", "plan_key": "plan-e2e"}, expect=201)
    sid = session["id"]
    assert len(sid) == 26 and session["status"] == "running" and session["state"] == "initializing"
    assert agent.ok("GET", f"{V1}/sessions/", key="e2e-loop")["results"][0]["id"] == sid

    moved = agent.ok("POST", f"{V1}/sessions/{sid}/transition/",
                     {"state": "planning", "current_iteration": 1, "agent": "orchestrator"})
    assert moved["state"] == "planning" and moved["current_iteration"] == 1

    plan = agent.ok("PUT", f"{V1}/sessions/{sid}/plan/", {"content": "# Plan\n1. schema\n2. api", "agent": "planner"})
    assert plan == {"session": sid, "content": "# Plan\n1. schema\n2. api", "iteration": 1, "snapshots": []}
    assert agent.ok("GET", f"{V1}/sessions/{sid}/plan/")["content"] == "# Plan\n1. schema\n2. api"

    # -- tasks with dependencies, and their waves ------------------------------------------------
    ids: dict[str, str] = {}
    for sequence, spec in enumerate(TASKS, start=1):
        task = agent.ok("POST", f"{V1}/tasks/", {**spec, "session": sid, "sequence": sequence,
                                                  "objective": f"Do {spec['title']}"}, expect=201)
        assert task["status"] == "not_started" and task["depends_on"] == spec["depends_on"]
        ids[spec["key"]] = task["id"]
    assert agent.ok("GET", f"{V1}/tasks/{ids['task-4']}/")["depends_on"] == ["task-2", "task-3"]
    # Offline-first: a retried create with the client's id returns the same row (200), not a duplicate;
    # the same id with another body is a conflict.
    retry = agent.ok("POST", f"{V1}/tasks/", {**TASKS[0], "id": ids["task-1"], "session": sid, "sequence": 1,
                                               "objective": "Do Schema"})
    assert retry["id"] == ids["task-1"] and retry["key"] == "task-1"
    clash = agent.post(f"{V1}/tasks/", {**TASKS[0], "id": ids["task-1"], "session": sid, "title": "Other"})
    assert clash.status == 409 and clash.json()["code"] == "conflict"
    assert agent.ok("GET", f"{V1}/tasks/", session=sid)["count"] == 4
    # A dependency on an unknown key is refused, naming it.
    refused = agent.post(f"{V1}/tasks/", {"session": sid, "key": "task-x", "title": "X", "depends_on": ["nope"]})
    assert refused.status == 400 and refused.json()["details"]["depends_on"] == ["nope"]

    waves = agent.ok("GET", f"{V1}/sessions/{sid}/waves/")
    assert waves == [{"wave": 1, "tasks": ["task-1"]}, {"wave": 2, "tasks": ["task-2", "task-3"]},
                     {"wave": 3, "tasks": ["task-4"]}]

    agent.ok("POST", f"{V1}/sessions/{sid}/transition/", {"state": "executing_batch", "current_wave": 1})

    # -- claims respect dependencies -------------------------------------------------------------
    claimed_order: list[str] = []
    assert claim(agent, sid, "exec-a") == "task-1"
    assert claim(agent, sid, "exec-b") == "waiting"  # task-2/3 wait for task-1
    execute(agent, ids["task-1"], "task-1", "exec-a")
    claimed_order.append("task-1")

    second = [claim(agent, sid, "exec-a"), claim(agent, sid, "exec-b")]
    assert sorted(second) == ["task-2", "task-3"]
    assert claim(agent, sid, "exec-c") == "waiting"  # task-4 waits for both
    # Only the holder may heartbeat; another agent gets a 409.
    stranger = agent.post(f"{V1}/tasks/{ids[second[0]]}/heartbeat/",
                          {"agent": "exec-z", "lease_seconds": 60, "claim": CLAIMS[second[0]]})
    assert stranger.status == 409 and stranger.json()["code"] == "not_claim_holder"
    for key, who in zip(second, ["exec-a", "exec-b"], strict=True):
        execute(agent, ids[key], key, who)
        claimed_order.append(key)

    assert claim(agent, sid, "exec-a") == "task-4"
    execute(agent, ids["task-4"], "task-4", "exec-a")
    claimed_order.append("task-4")
    assert claim(agent, sid, "exec-a") == "all_done"

    # -- steering: a signal, polled once ---------------------------------------------------------
    signal = agent.ok("POST", f"{V1}/signals/", {"session": sid, "type": "steer", "message": "Prefer small PRs"},
                      expect=201)
    assert signal["is_processed"] is False
    polled = agent.ok("POST", f"{V1}/sessions/{sid}/poll-signal/", {"agent": "orchestrator"})
    assert polled["id"] == signal["id"] and polled["message"] == "Prefer small PRs"
    assert polled["is_processed"] is True and polled["processed_by"] == "orchestrator"
    assert polled["processed_at"] is not None
    again = agent.post(f"{V1}/sessions/{sid}/poll-signal/", {"agent": "orchestrator"})
    assert again.status == 204

    # -- a question, asked and answered ----------------------------------------------------------
    question = agent.ok("POST", f"{V1}/questions/", {
        "session": sid, "key": "Q-TECH-001", "category": "technical", "text": "Which database?"}, expect=201)
    assert question["status"] == "unanswered"
    answered = agent.ok("POST", f"{V1}/questions/{question['id']}/answer/", {
        "answer": "PostgreSQL in production", "answer_source": "ADR-7", "answer_confidence": "high",
        "agent": "questioner"})
    assert answered["status"] == "answered" and answered["answer"] == "PostgreSQL in production"
    assert answered["answer_confidence"] == "high" and answered["answered_at"] is not None
    assert agent.ok("GET", f"{V1}/questions/", session=sid, status="unanswered")["count"] == 0

    # -- review, complete, finish ----------------------------------------------------------------
    reviewed = agent.ok("POST", f"{V1}/sessions/{sid}/transition/",
                        {"state": "session_review", "message": "all waves done", "agent": "orchestrator"})
    assert reviewed["state"] == "session_review"
    # Ralph V2's Complete state ends the session, its message the exit reason (issue #27 §1).
    finished = agent.ok("POST", f"{V1}/sessions/{sid}/transition/",
                        {"state": "complete", "message": "all_tasks_done", "agent": "orchestrator"})
    assert finished["status"] == "completed" and finished["exit_reason"] == "all_tasks_done"
    assert finished["ended_at"] is not None and finished["state"] == "complete"
    assert agent.post(f"{V1}/sessions/{sid}/finish/", {"status": "completed"}).json()["code"] == "session_finished"
    assert agent.ok("PATCH", f"{V1}/sessions/{sid}/", {"summary": "4 tasks"})["summary"] == "4 tasks"
    # A finished session cannot be finished as "running".
    assert agent.post(f"{V1}/sessions/{sid}/finish/", {"status": "running"}).status == 400

    # -- totals: the session's equal the sum of the reports --------------------------------------
    tokens_in = sum(u[0] for u in USAGE.values())
    tokens_out = sum(u[1] for u in USAGE.values())
    cost = sum(Decimal(u[2]) for u in USAGE.values())  # 0.040001
    session = agent.ok("GET", f"{V1}/sessions/{sid}/")
    assert session["total_tokens_input"] == tokens_in and session["total_tokens_output"] == tokens_out
    assert Decimal(session["total_cost_usd"]) == cost
    assert session["total_cost_cents"] == 4

    # -- API-call usage priced by the server from the model's price ------------------------------
    agent.ok("POST", f"{V1}/model-prices/", {"model": "e2e-model", "valid_from": "2020-01-01T00:00:00Z",
                                              "input_per_mtok": "3.000000", "output_per_mtok": "15.000000"},
             expect=201)
    usage = agent.ok("POST", f"{V1}/token-usage/", [
        {"session": sid, "model": "e2e-model", "input_tokens": 100_000, "output_tokens": 10_000,
         "task_key": "task-1", "agent": "exec-a", "recorded_at": "2025-06-01T10:00:00Z"},
        {"session": sid, "model": "e2e-model", "input_tokens": 1_000, "output_tokens": 1_000,
         "task_key": "task-2", "agent": "exec-b", "recorded_at": "2025-06-02T23:59:00Z"},
    ], expect=201)
    assert [Decimal(row["cost_usd"]) for row in usage] == [Decimal("0.45"), Decimal("0.018")]
    assert all(row["is_estimated"] is True for row in usage)
    tokens_in, tokens_out, cost = tokens_in + 101_000, tokens_out + 11_000, cost + Decimal("0.468")
    session = agent.ok("GET", f"{V1}/sessions/{sid}/")
    assert session["total_tokens_input"] == tokens_in and session["total_tokens_output"] == tokens_out
    assert Decimal(session["total_cost_usd"]) == cost == Decimal("0.508001")
    assert session["total_cost_cents"] == 51
    cost_answer = agent.ok("GET", f"{V1}/stats/session-cost/", session=sid)
    [session_cost] = cost_answer["all_sources"]["rows"]
    # Every call is one token usage row: the four reports' and the two rows posted (issue #15 §3).
    assert session_cost["api_calls"] == len(USAGE) + 2 and session_cost["total_tokens"] == tokens_in + tokens_out
    assert session_cost["total_input_tokens"] == tokens_in and session_cost["total_cost_usd"] == "0.5080"
    # DevTeam's v_session_cost reads its token_usage table: the two rows posted as token usage (issue #26).
    [seed_cost] = cost_answer["rows"]
    assert (seed_cost["api_calls"], seed_cost["total_input_tokens"], seed_cost["total_cost_usd"]) == (
        2, 101_000, "0.4680")
    daily = agent.ok("GET", f"{V1}/stats/daily-cost/", session=sid)
    today = timezone.now().date().isoformat()  # the reports' calls were recorded as they were made
    assert [(row["date"], row["api_calls"], row["total_cost_usd"]) for row in daily["all_sources"]["rows"]] == [
        ("2025-06-01", 1, "0.4500"), ("2025-06-02", 1, "0.0180"), (today, len(USAGE), "0.0400")]
    assert daily["rows"] == daily["all_sources"]["rows"][:2]

    # -- the audit trail: every orchestration change is a ledger event, in order -------------------
    events = agent.all_pages(f"{V1}/events/", session=sid, page_size=5)
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)
    assert all(e["session"] == sid and e["category"] == "orchestration" for e in events)
    kinds = [(e["type"], e["task_key"]) for e in events]
    expected = [("session_state_changed", ""), ("session_state_changed", "")]  # planning, executing_batch
    expected += [("task_claimed", "task-1"), ("task_status_changed", "task-1")]
    expected += sorted([("task_claimed", second[0]), ("task_claimed", second[1])])
    expected += [("task_status_changed", second[0]), ("task_status_changed", second[1])]
    expected += [("task_claimed", "task-4"), ("task_status_changed", "task-4")]
    expected += [("signal_sent", ""), ("signal_processed", ""), ("question_answered", "")]
    expected += [("session_state_changed", ""), ("session_state_changed", ""), ("session_finished", "")]
    assert kinds == expected
    transitions = [(e["data"]["from"], e["data"]["to"]) for e in events if e["type"] == "session_state_changed"]
    assert transitions == [("initializing", "planning"), ("planning", "executing_batch"),
                           ("executing_batch", "session_review"), ("session_review", "complete")]
    status_changes = [e["data"] for e in events if e["type"] == "task_status_changed"]
    assert [(d["from"], d["to"]) for d in status_changes] == [("in_progress", "completed")] * 4
    assert {e["agent"] for e in events if e["type"] == "task_claimed"} <= {"exec-a", "exec-b"}
    assert events[-1]["data"] == {"status": "completed", "exit_reason": "all_tasks_done"}
    signal_event = next(e for e in events if e["type"] == "signal_processed")
    assert signal_event["data"] == {"signal": signal["id"], "type": "steer"}
    # Filtering the trail by task works the same way.
    task_two = agent.all_pages(f"{V1}/events/", session=sid, task_key="task-2")
    assert [e["type"] for e in task_two] == ["task_claimed", "task_status_changed"]
    # The ledger is append-only through the API too.
    assert agent.delete(f"{V1}/events/{events[0]['id']}/").status == 405
    assert agent.patch(f"{V1}/events/{events[0]['id']}/", {"message": "rewritten"}).status == 405
    # An agent's own events, appended in bulk, are idempotent by key: a retried batch adds nothing.
    batch = [{"session": sid, "type": "x-e2e_note", "message": f"note {n}", "idempotency_key": f"e2e-note-{n}"}
             for n in range(3)]
    first = agent.ok("POST", f"{V1}/events/", batch, expect=201)
    assert [a["status"] for a in first] == ["created"] * 3
    again = agent.ok("POST", f"{V1}/events/", batch, expect=200)
    assert [a["status"] for a in again] == ["duplicate"] * 3
    assert [a["id"] for a in again] == [a["id"] for a in first]
    notes = agent.all_pages(f"{V1}/events/", session=sid, type="x-e2e_note")
    assert [e["message"] for e in notes] == ["note 0", "note 1", "note 2"]
    assert notes[0]["id"] > events[-1]["id"]

    # -- progress and statistics agree with what happened ----------------------------------------
    progress = agent.ok("GET", f"{V1}/sessions/{sid}/progress/")
    assert progress["total"] == 4 and progress["by_status"]["completed"] == 4
    assert sum(progress["by_status"].values()) == 4
    assert sorted(t["key"] for t in progress["tasks"]) == ["task-1", "task-2", "task-3", "task-4"]
    assert all(t["status"] == "completed" for t in progress["tasks"])

    summary = agent.ok("GET", f"{V1}/stats/session-summary/", session=sid)
    assert summary["name"] == "session-summary"
    [row] = summary["rows"]
    assert row["id"] == sid and row["status"] == "completed" and row["current_iteration"] == 1
    assert row["total_tokens"] == tokens_in + tokens_out == 117_800
    assert row["total_cost_dollars"] == "0.51"
    assert row["agent_runs"] == 0 and row["escalations"] == 0

    attempts = agent.ok("GET", f"{V1}/stats/task-attempts-summary/", session=sid)["rows"]
    by_key = {row["task_key"]: row for row in attempts}
    assert sorted(by_key) == ["task-1", "task-2", "task-3", "task-4"]
    for key, (t_in, t_out, _cost) in USAGE.items():
        assert by_key[key]["task_id"] == ids[key]
        assert by_key[key]["total_attempts"] == 1 and by_key[key]["successes"] == 1
        assert by_key[key]["failures"] == 0 and by_key[key]["total_tokens"] == t_in + t_out

    # The current-task view has nothing in progress any more (for this session).
    assert agent.ok("GET", f"{V1}/stats/current-task/", session=sid)["rows"] == []
