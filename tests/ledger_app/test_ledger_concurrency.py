"""Real threads against the real database: concurrent appends, issue records and dead-letter claims."""

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Sum
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import DeadLetter, DeadLetterStatus, Issue, LedgerEvent
from ralphsite.tokens import MintedToken
from sessions_app.models import Session
from tests.ledger_app.factories import make_session

pytestmark = pytest.mark.django_db(transaction=True)

WRITERS = 8
EVENTS_PER_WRITER = 500
BATCH = 50


def run_threads(count: int, work: Callable[[int, APIClient], None], token: MintedToken) -> list[BaseException]:
    """Start `count` threads together; each gets its own client and closes its connection."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        client = APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}")
        barrier.wait()
        try:
            work(index, client)
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_it_8_writers_appending_500_events_each_with_retries_lose_and_duplicate_nothing(token: MintedToken) -> None:
    session = make_session()

    def append(writer: int, client: APIClient) -> None:
        for start in range(0, EVENTS_PER_WRITER, BATCH):
            batch = [{"session": session.id, "type": "x-load", "tokens_in": 2, "tokens_out": 1,
                      "idempotency_key": f"w{writer}-e{i}", "data": {"i": i}} for i in range(start, start + BATCH)]
            first = client.post("/api/v1/events/", batch, format="json")
            assert first.status_code == 201, first.content
            # Every other batch is retried as after a timeout: all duplicates, the same ids.
            if (start // BATCH) % 2 == 0:
                retry = client.post("/api/v1/events/", batch, format="json")
                assert retry.status_code == 200, retry.content
                assert [item["id"] for item in retry.json()] == [item["id"] for item in first.json()]
                assert {item["status"] for item in retry.json()} == {"duplicate"}

    assert run_threads(WRITERS, append, token) == []
    events = LedgerEvent.objects.filter(session=session)
    total = WRITERS * EVENTS_PER_WRITER
    assert events.count() == total
    assert events.values("idempotency_key").distinct().count() == total
    session = Session.objects.get(pk=session.id)
    assert session.total_tokens_input == 2 * total == events.aggregate(t=Sum("tokens_in"))["t"]
    assert session.total_tokens_output == total


def test_it_clients_racing_with_the_same_idempotency_keys_create_each_event_once(token: MintedToken) -> None:
    session = make_session()
    batch = [{"session": session.id, "type": "x-race", "tokens_in": 1, "idempotency_key": f"k{i}"} for i in range(20)]
    answers: list[list[dict]] = []

    def append(_: int, client: APIClient) -> None:
        response = client.post("/api/v1/events/", batch, format="json")
        assert response.status_code in (200, 201), response.content
        answers.append(response.json())

    assert run_threads(6, append, token) == []
    assert LedgerEvent.objects.filter(session=session).count() == 20
    assert len({tuple(item["id"] for item in answer) for answer in answers}) == 1  # every client got the same ids
    assert sum(item["status"] == "created" for answer in answers for item in answer) == 20
    assert Session.objects.get(pk=session.id).total_tokens_input == 20


def test_it_concurrent_records_of_one_signature_end_with_the_exact_count(token: MintedToken) -> None:
    session = make_session()
    threads, records = 8, 5
    body = {"session": session.id, "task_key": "auth-002", "kind": "typecheck",
            "signature": "typecheck:src/api.ts:42:TS2322", "message": "Type 'string' is not assignable"}

    def record(_: int, client: APIClient) -> None:
        for _ in range(records):
            response = client.post("/api/v1/issues/record/", body, format="json")
            assert response.status_code in (200, 201), response.content

    assert run_threads(threads, record, token) == []
    issue = Issue.objects.get()
    assert issue.count == threads * records
    assert LedgerEvent.objects.filter(type="issue_recorded").count() == threads * records


def test_it_two_workers_never_claim_the_same_dead_letter(token: MintedToken) -> None:
    due = timezone.now() - timedelta(minutes=1)
    items = [DeadLetter.objects.create(operation_type="push", retry_after=due) for _ in range(12)]
    claimed: list[int] = []
    lock = threading.Lock()

    def claim(_: int, client: APIClient) -> None:
        while True:
            response = client.post("/api/v1/dead-letters/claim/", {}, format="json")
            if response.status_code == 204:
                return
            assert response.status_code == 200, response.content
            with lock:
                claimed.append(response.json()["id"])

    assert run_threads(6, claim, token) == []
    assert sorted(claimed) == sorted(item.id for item in items)
    assert set(DeadLetter.objects.values_list("status", flat=True)) == {DeadLetterStatus.RETRIED}
