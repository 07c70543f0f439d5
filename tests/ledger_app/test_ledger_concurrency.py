"""Real threads against the real database: concurrent appends, issue records and dead-letter claims."""

import threading
from datetime import timedelta

import pytest
from django.db.models import Sum
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import DeadLetter, DeadLetterStatus, Issue, LedgerEvent
from ralphsite.tokens.services import MintedToken
from sessions_app.models import Session
from tests.concurrency import api_in_threads
from tests.ledger_app.factories import make_session

pytestmark = pytest.mark.django_db(transaction=True)

WRITERS = 8
EVENTS_PER_WRITER = 500
BATCH = 50


def test_it_8_writers_appending_500_events_each_with_retries_lose_and_duplicate_nothing(token: MintedToken) -> None:
    session = make_session()

    def append(client: APIClient, writer: int) -> None:
        for start in range(0, EVENTS_PER_WRITER, BATCH):
            batch = [{"session": session.id, "type": "x-load", "tokens_in": 2, "tokens_out": 1, "cost_usd": "0",
                      "idempotency_key": f"w{writer}-e{i}", "data": {"i": i}} for i in range(start, start + BATCH)]
            first = client.post("/api/v1/events/", batch, format="json")
            assert first.status_code == 201, first.content
            # Every other batch is retried as after a timeout: all duplicates, the same ids.
            if (start // BATCH) % 2 == 0:
                retry = client.post("/api/v1/events/", batch, format="json")
                assert retry.status_code == 200, retry.content
                assert [item["id"] for item in retry.json()] == [item["id"] for item in first.json()]
                assert {item["status"] for item in retry.json()} == {"duplicate"}

    api_in_threads(WRITERS, token, append)
    events = LedgerEvent.objects.filter(session=session)
    total = WRITERS * EVENTS_PER_WRITER
    assert events.count() == total
    assert events.values("idempotency_key").distinct().count() == total
    session = Session.objects.get(pk=session.id)
    assert session.total_tokens_input == 2 * total == events.aggregate(t=Sum("tokens_in"))["t"]
    assert session.total_tokens_output == total


def test_it_clients_racing_with_the_same_idempotency_keys_create_each_event_once(token: MintedToken) -> None:
    session = make_session()
    batch = [{"session": session.id, "type": "x-race", "tokens_in": 1, "cost_usd": "0", "idempotency_key": f"k{i}"}
             for i in range(20)]
    answers: list[list[dict]] = []

    def append(client: APIClient, _: int) -> None:
        response = client.post("/api/v1/events/", batch, format="json")
        assert response.status_code in (200, 201), response.content
        answers.append(response.json())

    api_in_threads(6, token, append)
    assert LedgerEvent.objects.filter(session=session).count() == 20
    assert len({tuple(item["id"] for item in answer) for answer in answers}) == 1  # every client got the same ids
    assert sum(item["status"] == "created" for answer in answers for item in answer) == 20
    assert Session.objects.get(pk=session.id).total_tokens_input == 20


def test_it_concurrent_records_of_one_signature_end_with_the_exact_count(token: MintedToken) -> None:
    session = make_session()
    threads, records = 8, 5
    body = {"session": session.id, "task_key": "auth-002", "kind": "typecheck",
            "signature": "typecheck:src/api.ts:42:TS2322", "message": "Type 'string' is not assignable"}

    def record(client: APIClient, _: int) -> None:
        for _ in range(records):
            response = client.post("/api/v1/issues/record/", body, format="json")
            assert response.status_code in (200, 201), response.content

    api_in_threads(threads, token, record)
    issue = Issue.objects.get()
    assert issue.count == threads * records
    assert LedgerEvent.objects.filter(type="issue_recorded").count() == threads * records


def test_it_two_workers_never_claim_the_same_dead_letter(token: MintedToken) -> None:
    due = timezone.now() - timedelta(minutes=1)
    items = [DeadLetter.objects.create(operation_type="push", retry_after=due) for _ in range(12)]
    claimed: list[int] = []
    lock = threading.Lock()

    def claim(client: APIClient, _: int) -> None:
        while True:
            response = client.post("/api/v1/dead-letters/claim/", {}, format="json")
            if response.status_code == 204:
                return
            assert response.status_code == 200, response.content
            with lock:
                claimed.append(response.json()["id"])

    api_in_threads(6, token, claim)
    assert sorted(claimed) == sorted(item.id for item in items)
    assert set(DeadLetter.objects.values_list("status", flat=True)) == {DeadLetterStatus.RETRIED}


def test_it_concurrent_appends_claims_and_resumes_make_one_valid_chain(token: MintedToken) -> None:
    """Every kind of writer at once, on one session: bulk and single appends (with usage, so they
    update the session), claims and status changes (audit events after a task lock), resumes (the
    session locked FOR UPDATE first). On PostgreSQL a lock taken after the chain head by one and
    before it by another would deadlock them; on both, the chain must come out whole."""
    from ledger_app.chain_verify import chain_verify
    from ralphsite.core.errors import Conflict
    from sessions_app.services.sessions import session_resume
    from sessions_app.services.tasks import NothingToClaim, task_claim_next, task_release, task_status_set
    from tests.sessions_app.factories import make_task

    session = make_session()
    tasks = [make_task(session, f"task-{n}") for n in range(12)]

    def work(client: APIClient, index: int) -> None:
        kind = index % 4
        for step in range(6):
            if kind == 0:
                batch = [{"session": session.id, "type": "x-bulk", "tokens_in": 3, "cost_usd": "0",
                          "data": {"w": index, "i": i}} for i in range(25)]
                assert client.post("/api/v1/events/", batch, format="json").status_code == 201
            elif kind == 1:
                body = {"session": session.id, "type": "x-one", "tokens_out": 1, "cost_usd": "0.000010"}
                assert client.post("/api/v1/events/", body, format="json").status_code == 201
            elif kind == 2:
                try:
                    claimed = task_claim_next(session=session, agent=f"agent-{index}",
                                              lease_seconds=60)
                except NothingToClaim:  # another claimer holds the one claimable task
                    continue
                try:
                    task_release(task=claimed, agent=f"agent-{index}", claim=claimed.claim)
                except Conflict as overruled:  # the lead blocked this task in between: its claim ended
                    assert overruled.code == "stale_claim" and "blocked" in str(overruled)
            else:
                session_resume(session=session, agent=f"resumer-{index}", force=True)
                # The lead overrules whoever holds the claim (blocks the task), as a person in the console does.
                task_status_set(task=tasks[step], status="blocked", agent="lead", fenced=False)

    api_in_threads(8, token, work)
    report = chain_verify()
    assert report.intact, report.problem
    ids = list(LedgerEvent.objects.order_by("id").values_list("id", flat=True))
    assert ids == list(range(ids[0], ids[0] + len(ids)))  # the head hands out ids one after another
    assert LedgerEvent.objects.filter(type="x-bulk").count() == 2 * 6 * 25
