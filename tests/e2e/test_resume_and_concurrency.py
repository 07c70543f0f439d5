"""An interrupted run found and resumed, and concurrent claimers on the real server."""

import threading
from collections import Counter

import pytest

from tests.concurrency import in_threads
from tests.e2e.client import Agent

pytestmark = pytest.mark.django_db(transaction=True)

V1 = "/api/v1"


def test_it_finds_an_interrupted_run_and_resumes_it_where_it_stopped(agent: Agent) -> None:
    project = "/srv/resume-e2e"
    sid = agent.ok("POST", f"{V1}/sessions/", {"key": "e2e-interrupted", "project_path": project}, expect=201)["id"]
    done = agent.ok("POST", f"{V1}/sessions/", {"key": "e2e-done", "project_path": project}, expect=201)["id"]
    agent.ok("POST", f"{V1}/sessions/{done}/finish/", {"status": "completed"})
    agent.ok("POST", f"{V1}/sessions/{sid}/transition/", {"state": "executing_batch", "current_iteration": 2,
                                                         "current_wave": 1})
    for key, deps in [("task-1", []), ("task-2", []), ("task-3", ["task-1"])]:
        agent.ok("POST", f"{V1}/tasks/", {"session": sid, "key": key, "title": key, "depends_on": deps}, expect=201)
    claimed = agent.ok("POST", f"{V1}/sessions/{sid}/claim-task/", {"agent": "exec-1", "lease_seconds": 600})
    assert claimed["key"] == "task-1"
    checkpoint = agent.ok("POST", f"{V1}/checkpoints/", {"key": "chkpt-e2e-1", "session": sid, "task_key": "task-1",
                                                        "git_commit": "abc123", "summary": "before task-1"},
                          expect=201)
    # ... and the orchestrator dies here, the session still `running`.

    # Just now it was active: not interrupted with the default idle threshold (five minutes).
    assert agent.ok("GET", f"{V1}/sessions/interrupted/", project_path=project)["results"] == []
    interrupted = agent.ok("GET", f"{V1}/sessions/interrupted/", project_path=project, idle_seconds=0)
    assert interrupted["count"] == 1
    [row] = interrupted["results"]
    assert row["id"] == sid and row["status"] == "running" and row["current_iteration"] == 2
    bad = agent.get(f"{V1}/sessions/interrupted/", idle_seconds=-1)
    assert bad.status == 400 and bad.json()["code"] == "validation_error"

    # Written to within the idle window, it is not interrupted for resume/ either …
    active = agent.post(f"{V1}/sessions/{sid}/resume/", {"agent": "orchestrator-2"})
    assert active.status == 409 and active.json()["code"] == "session_active"
    # … unless the caller uses the threshold that found it interrupted.
    point = agent.ok("POST", f"{V1}/sessions/{sid}/resume/", {"agent": "orchestrator-2", "idle_seconds": 0})
    assert point["session"] == sid and point["iteration"] == 2 and point["wave"] == 1
    assert point["state"] == "executing_batch"
    assert point["current_task"] == "task-1" and point["next_task"] == "task-2"
    assert point["last_checkpoint"]["id"] == checkpoint["id"]
    assert point["last_checkpoint"]["key"] == "chkpt-e2e-1" and point["last_checkpoint"]["git_commit"] == "abc123"

    events = agent.all_pages(f"{V1}/events/", session=sid, type="session_resumed")
    assert len(events) == 1 and events[0]["agent"] == "orchestrator-2"
    assert events[0]["data"] == {"from": "running", "current_task": "task-1", "next_task": "task-2"}
    # Resuming is activity: the session is no longer idle, and a second orchestrator cannot take it over.
    assert agent.ok("GET", f"{V1}/sessions/interrupted/", project_path=project)["count"] == 0
    second = agent.post(f"{V1}/sessions/{sid}/resume/", {"agent": "orchestrator-3"})
    assert second.status == 409 and second.json()["code"] == "session_active"


THREADS = 6
TASK_COUNT = 30


def test_it_hands_each_task_to_exactly_one_of_several_concurrent_agents(new_agent, agent: Agent) -> None:
    sid = agent.ok("POST", f"{V1}/sessions/", {"key": "e2e-claims", "max_concurrency": 100}, expect=201)["id"]
    for index in range(TASK_COUNT):
        agent.ok("POST", f"{V1}/tasks/", {"session": sid, "key": f"task-{index:02}", "title": f"t{index}",
                                          "wave": index % 3, "task_type": "parallelizable"}, expect=201)
    # A task whose dependency is blocked (never completed) must never be handed out.
    gate = agent.ok("POST", f"{V1}/tasks/", {"session": sid, "key": "gate", "title": "gate"}, expect=201)
    agent.ok("POST", f"{V1}/tasks/{gate['id']}/status/", {"status": "blocked"})
    agent.ok("POST", f"{V1}/tasks/", {"session": sid, "key": "zz-waits", "title": "waits", "depends_on": ["gate"]},
             expect=201)

    agents = [new_agent() for _ in range(THREADS)]
    claims: list[tuple[str, str]] = []
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def work(index: int) -> None:
        me = agents[index]
        name = f"agent-{index}"
        while True:
            reply = me.post(f"{V1}/sessions/{sid}/claim-task/", {"agent": name, "lease_seconds": 600})
            with lock:
                statuses[reply.status] += 1
            if reply.status != 200:
                assert reply.status == 409 and reply.json()["details"]["reason"] == "waiting", reply.body
                return
            task = reply.json()
            assert task["claimed_by"] == name and task["status"] == "in_progress"
            with lock:
                claims.append((task["key"], name))

    in_threads(THREADS, work)
    assert statuses[200] == TASK_COUNT and statuses[409] == THREADS and set(statuses) == {200, 409}
    keys = [key for key, _ in claims]
    assert len(keys) == len(set(keys)) == TASK_COUNT
    assert set(keys) == {f"task-{i:02}" for i in range(TASK_COUNT)}
    assert len({name for _, name in claims}) > 1  # the work really was shared

    # The server's view agrees: each task held by the agent that got it, one claim event per task.
    tasks = {t["key"]: t for t in agent.all_pages(f"{V1}/tasks/", session=sid, page_size=500)}
    assert all(tasks[key]["claimed_by"] == name and tasks[key]["status"] == "in_progress" for key, name in claims)
    assert tasks["zz-waits"]["status"] == "not_started" and tasks["zz-waits"]["claimed_by"] == ""
    claim_events = agent.all_pages(f"{V1}/events/", session=sid, type="task_claimed", page_size=1000)
    assert sorted((e["task_key"], e["agent"]) for e in claim_events) == sorted(claims)
    progress = agent.ok("GET", f"{V1}/sessions/{sid}/progress/")
    assert progress["by_status"]["in_progress"] == TASK_COUNT
    assert progress["by_status"]["blocked"] == 1 and progress["by_status"]["not_started"] == 1
    assert progress["blocked"] == [{"task": "zz-waits", "because": ["gate"]}]
