"""Claims, signal polls and report numbering under real concurrent threads on the real database."""

from collections import Counter

import pytest
from rest_framework.test import APIClient

from ralphsite.tokens.services import MintedToken
from sessions_app.models import Signal, Task, TaskAttempt
from tests.concurrency import api_in_threads
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 8


def test_eight_agents_claim_fifty_tasks_each_exactly_once(token: MintedToken) -> None:
    session = make_session(key="claims", max_concurrency=50)
    for index in range(50):
        make_task(session, f"task-{index:02}", wave=index % 3, task_type="parallelizable")
    claims: list[tuple[str, str]] = []
    statuses: Counter[int] = Counter()

    def claim_until_empty(client: APIClient, index: int) -> None:
        agent = f"agent-{index}"
        while True:
            response = client.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": agent}, format="json")
            statuses[response.status_code] += 1
            if response.status_code != 200:
                return
            claims.append((response.json()["key"], agent))

    api_in_threads(WORKERS, token, claim_until_empty)
    assert set(statuses) == {200, 409}, statuses
    keys = [key for key, _ in claims]
    assert len(keys) == 50 and len(set(keys)) == 50
    holders = dict(Task.objects.values_list("key", "claimed_by"))
    assert all(holders[key] == agent for key, agent in claims)
    assert not Task.objects.exclude(status="in_progress").exists()


def test_eight_pollers_drain_a_hundred_signals_each_exactly_once(token: MintedToken) -> None:
    session = make_session(key="signals")
    Signal.objects.bulk_create(Signal(session=session, type="info", message=f"m{index}") for index in range(100))
    received: list[str] = []
    statuses: Counter[int] = Counter()

    def poll_until_empty(client: APIClient, index: int) -> None:
        while True:
            response = client.post(f"/api/v1/sessions/{session.pk}/poll-signal/", {"agent": f"p{index}"},
                                   format="json")
            statuses[response.status_code] += 1
            if response.status_code != 200:
                return
            received.append(response.json()["id"])

    api_in_threads(WORKERS, token, poll_until_empty)
    assert set(statuses) == {200, 204}, statuses
    assert len(received) == 100 and len(set(received)) == 100
    assert not Signal.objects.filter(is_processed=False).exists()


def test_concurrent_reports_get_distinct_attempt_numbers(token: MintedToken) -> None:
    task = make_task(make_session(key="reports"), "task-1")
    statuses: list[int] = []

    def report(client: APIClient, index: int) -> None:
        for _ in range(3):
            response = client.post(f"/api/v1/tasks/{task.pk}/report/", {"implementation_report": f"r{index}",
                                                                        "tokens_input": 1, "cost_usd": "0"},
                                   format="json")
            statuses.append(response.status_code)

    api_in_threads(WORKERS, token, report)
    assert statuses == [201] * (WORKERS * 3)
    numbers = sorted(TaskAttempt.objects.filter(task=task).values_list("attempt_number", flat=True))
    assert numbers == list(range(1, WORKERS * 3 + 1))
    assert task.session.__class__.objects.get(pk=task.session_id).total_tokens_input == WORKERS * 3
