"""claim-task respects the plan (issue #15 §2): max_concurrency, sequential tasks, skipped and failed
dependencies, and a machine-readable reason when there is nothing to claim; waves written back;
release and review as an orchestrator expects."""

import threading
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ralphsite.tokens.services import MintedToken
from sessions_app.models import Session, Task, TaskAttempt
from tests.api_mixins import assert_error_shape
from tests.concurrency import api_in_threads
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

PARALLEL = {"task_type": "parallelizable"}


def claim(api: APIClient, session: Session, agent: str = "exec-1") -> Any:
    return api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": agent, "lease_seconds": 600},
                    format="json")


def claimed_key(api: APIClient, session: Session, agent: str = "exec-1") -> str:
    response = claim(api, session, agent)
    assert response.status_code == 200, response.content
    return response.json()["key"]


def refusal(api: APIClient, session: Session) -> dict[str, Any]:
    """The details of a claim that found nothing (409 nothing_to_claim)."""
    return assert_error_shape(claim(api, session), 409, "nothing_to_claim")["details"]


def test_it_never_hands_out_more_than_max_concurrency(api: APIClient) -> None:
    session = make_session(max_concurrency=2)
    for index in range(4):
        make_task(session, f"task-{index}", **PARALLEL)
    assert [claimed_key(api, session) for _ in range(2)] == ["task-0", "task-1"]
    details = refusal(api, session)
    assert (details["reason"], details["in_progress"], details["ready"]) == (
        "at_capacity", ["task-0", "task-1"], ["task-2", "task-3"])
    assert details["max_concurrency"] == 2
    Task.objects.filter(key="task-0").update(status="completed")
    assert claimed_key(api, session) == "task-2"


def test_an_expired_lease_frees_its_place(api: APIClient) -> None:
    session = make_session(max_concurrency=1)
    make_task(session, "task-0", status="in_progress", claimed_by="gone",
              lease_expires_at=timezone.now() - timedelta(seconds=1), **PARALLEL)
    make_task(session, "task-1", **PARALLEL)
    assert claimed_key(api, session, "exec-2") == "task-0"  # taken over, not added
    assert refusal(api, session)["reason"] == "at_capacity"


def test_a_sequential_task_runs_alone(api: APIClient) -> None:
    session = make_session(max_concurrency=5)
    make_task(session, "task-1", sequence=1)  # sequential is the default (seed 000 TaskItemType)
    make_task(session, "task-2", sequence=2, **PARALLEL)
    make_task(session, "task-3", sequence=3, **PARALLEL)
    assert claimed_key(api, session) == "task-1"
    details = refusal(api, session)
    assert (details["reason"], details["in_progress"]) == ("at_capacity", ["task-1"])
    Task.objects.filter(key="task-1").update(status="completed")
    assert [claimed_key(api, session) for _ in range(2)] == ["task-2", "task-3"]


def test_a_sequential_task_waits_until_nothing_else_runs_while_parallel_ones_go_ahead(api: APIClient) -> None:
    session = make_session(max_concurrency=5)
    make_task(session, "task-1", sequence=1, **PARALLEL)
    make_task(session, "task-2", sequence=2)  # sequential, next in line
    make_task(session, "task-3", sequence=3, **PARALLEL)
    assert claimed_key(api, session) == "task-1"
    assert claimed_key(api, session) == "task-3"  # task-2 may not run beside task-1
    details = refusal(api, session)
    assert (details["reason"], details["ready"]) == ("at_capacity", ["task-2"])
    Task.objects.filter(key__in=["task-1", "task-3"]).update(status="completed")
    assert claimed_key(api, session) == "task-2"


def test_a_skipped_dependency_counts_as_satisfied(api: APIClient) -> None:
    session = make_session()
    skipped = make_task(session, "task-1", status="skipped")
    make_task(session, "task-2", depends_on=(skipped,))
    assert claimed_key(api, session) == "task-2"


@pytest.mark.parametrize("failed_status", ["failed", "cancelled", "blocked"])
def test_a_failed_dependency_blocks_its_dependents_transitively(api: APIClient, failed_status: str) -> None:
    session = make_session()
    root = make_task(session, "task-1", status=failed_status)
    middle = make_task(session, "task-2", depends_on=(root,))
    make_task(session, "task-3", depends_on=(middle,))
    make_task(session, "task-4", status="completed")
    details = refusal(api, session)
    assert details["reason"] == "blocked"
    expected = [{"task": "task-2", "because": ["task-1"]}, {"task": "task-3", "because": ["task-1"]}]
    assert details["blocked"] == expected
    progress = api.get(f"/api/v1/sessions/{session.pk}/progress/").json()
    assert progress["blocked"] == expected


def test_waiting_means_work_in_progress_will_unblock_more(api: APIClient) -> None:
    session = make_session()
    first = make_task(session, "task-1")
    make_task(session, "task-2", depends_on=(first,))
    assert claimed_key(api, session) == "task-1"
    details = refusal(api, session)
    assert (details["reason"], details["in_progress"], details["unfinished"]) == ("waiting", ["task-1"], 2)
    Task.objects.filter(key="task-1").update(status="review_pending", lease_expires_at=None)
    assert refusal(api, session)["reason"] == "waiting"  # a review will complete (or fail) it


def test_a_failed_branch_does_not_hide_work_in_progress(api: APIClient) -> None:
    session = make_session(max_concurrency=3)
    broken = make_task(session, "task-1", status="failed")
    make_task(session, "task-2", depends_on=(broken,))
    make_task(session, "task-3", **PARALLEL)
    assert claimed_key(api, session) == "task-3"
    details = refusal(api, session)
    assert details["reason"] == "waiting"
    assert details["blocked"] == [{"task": "task-2", "because": ["task-1"]}]


def test_all_done_once_every_task_has_ended(api: APIClient) -> None:
    session = make_session()
    for index, status in enumerate(["completed", "skipped", "failed", "cancelled"]):
        make_task(session, f"task-{index}", status=status)
    details = refusal(api, session)
    assert (details["reason"], details["unfinished"]) == ("all_done", 0)
    assert refusal(api, make_session())["reason"] == "all_done"  # no task at all


def test_a_finished_session_says_so_in_the_same_shape(api: APIClient) -> None:
    session = make_session(status="stopped", ended_at=timezone.now())
    make_task(session, "task-1")
    assert refusal(api, session) == {"reason": "session_finished", "session": session.pk, "status": "stopped"}


def test_the_refusal_costs_a_constant_number_of_queries(api: APIClient, django_assert_num_queries) -> None:
    session = make_session()
    previous = make_task(session, "task-0", status="failed")
    for index in range(1, 4):
        previous = make_task(session, f"task-{index}", depends_on=(previous,))
    # auth, session, limits (locked), a holding stop or pause, expired leases, running, candidates, then the
    # outlook: tasks, edges, ready; and the claim's savepoint, rolled back and released (the test runs inside a
    # transaction)
    with django_assert_num_queries(13):
        assert refusal(api, session)["reason"] == "blocked"
    for index in range(4, 40):
        previous = make_task(session, f"task-{index}", depends_on=(previous,))
    with django_assert_num_queries(13):
        assert len(refusal(api, session)["blocked"]) == 39


# -- waves, release, review -----------------------------------------------------------------------


def test_post_waves_writes_each_tasks_wave(api: APIClient) -> None:
    session = make_session()
    one = make_task(session, "task-1", wave=7)
    two = make_task(session, "task-2", depends_on=(one,))
    make_task(session, "task-3", depends_on=(one, two))
    computed = api.get(f"/api/v1/sessions/{session.pk}/waves/").json()
    assert set(Task.objects.values_list("wave", flat=True)) == {7, None}  # GET only computes
    stored = api.post(f"/api/v1/sessions/{session.pk}/waves/").json()
    assert stored == computed == [{"wave": 1, "tasks": ["task-1"]}, {"wave": 2, "tasks": ["task-2"]},
                                  {"wave": 3, "tasks": ["task-3"]}]
    assert dict(Task.objects.values_list("key", "wave")) == {"task-1": 1, "task-2": 2, "task-3": 3}


def test_release_gives_the_task_back_to_nobody(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    claimed = claim(api, session).json()
    released = api.post(f"/api/v1/tasks/{claimed['id']}/release/", {"agent": "exec-1", "claim": claimed["claim"]},
                        format="json").json()
    assert (released["status"], released["claimed_by"], released["assigned_agent"]) == ("not_started", "", "")


@pytest.mark.parametrize(("verdict", "status"), [("qualified", "completed"), ("failed", "in_progress")])
def test_review_with_complete_completes_the_task_on_a_qualified_verdict(
        api: APIClient, verdict: str, status: str, events: list[dict[str, Any]]) -> None:
    session = make_session()
    make_task(session, "task-1")
    claimed = claim(api, session).json()
    task_id = claimed["id"]
    assert api.post(f"/api/v1/tasks/{task_id}/report/", {"implementation_report": "done", "claim": claimed["claim"]},
                    format="json").status_code == 201
    reviewed = api.post(f"/api/v1/tasks/{task_id}/review/", {"review_report": "r", "verdict": verdict,
                                                             "complete": True, "agent": "reviewer"}, format="json")
    assert reviewed.status_code == 200, reviewed.content
    assert reviewed.json()["review_verdict"] == verdict
    task = Task.objects.get(pk=task_id)
    assert task.status == status
    if status == "completed":
        assert task.completed_at is not None and task.claimed_by == ""
        assert events[-1]["event_type"] == "task_status_changed" and events[-1]["agent"] == "reviewer"
    assert TaskAttempt.objects.get(task_id=task_id).review_verdict == verdict


# -- under concurrent claimers ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_claimers_never_exceed_max_concurrency(token: MintedToken) -> None:
    session = make_session(key="capacity", max_concurrency=3)
    for index in range(20):
        make_task(session, f"task-{index:02}", **PARALLEL)
    statuses: Counter[str] = Counter()
    lock = threading.Lock()

    def work(client: APIClient, index: int) -> None:
        for _ in range(3):
            response = claim(client, session, f"agent-{index}")
            outcome = "claimed" if response.status_code == 200 else response.json()["details"]["reason"]
            with lock:
                statuses[outcome] += 1

    api_in_threads(8, token, work)
    assert statuses == {"claimed": 3, "at_capacity": 21}
    assert Task.objects.filter(status="in_progress").count() == 3
