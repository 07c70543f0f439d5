"""Real threads, real connections: sequence numbers, versions and pattern counts stay exact."""

import pytest
from django.db import connection
from rest_framework.test import APIClient

from conversations_app import services
from conversations_app.models import Chat, GlobalPattern, Message, Run
from ralphsite.tokens.services import MintedToken
from tests.concurrency import api_in_threads

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 6


def test_it_numbers_concurrent_appends_uniquely_and_consecutively(token: MintedToken) -> None:
    chat = services.chat_create(data={"title": "busy"})
    run = services.run_create(data={"chat_id": chat.pk})

    def append(client: APIClient, index: int) -> list[int]:
        numbers = []
        for batch in range(3):
            body = [{"role": "user", "content": f"t{index} b{batch} m{i}"} for i in range(5)]
            response = client.post(f"/api/v1/runs/{run.pk}/messages/", body, format="json")
            assert response.status_code == 201, response.content
            numbers += [m["sequence_number"] for m in response.json()]
        return numbers

    results = api_in_threads(THREADS, token, append)
    numbers = sorted(n for result in results for n in result)
    assert numbers == list(range(1, THREADS * 15 + 1))
    for result in results:  # each bulk append got a consecutive block
        for start in range(0, 15, 5):
            block = result[start:start + 5]
            assert block == list(range(block[0], block[0] + 5))
    assert Run.objects.get(pk=run.pk).message_count == THREADS * 15
    assert Message.objects.filter(run=run).count() == THREADS * 15


def test_it_numbers_concurrent_runs_of_one_chat_uniquely(token: MintedToken) -> None:
    chat = services.chat_create(data={"title": "many runs"})
    results = api_in_threads(
        THREADS, token,
        lambda client, _: client.post("/api/v1/runs/", {"chat": chat.pk}, format="json").json()["sequence_number"])
    assert sorted(results) == list(range(1, THREADS + 1))


def test_it_lets_exactly_one_of_concurrent_same_version_updates_win(token: MintedToken) -> None:
    chat = services.chat_create(data={"title": "contested"})

    def update(client: APIClient, index: int) -> int:
        return client.patch(f"/api/v1/chats/{chat.pk}/", {"title": f"writer {index}", "version": 1},
                            format="json").status_code

    statuses = api_in_threads(THREADS, token, update)
    assert sorted(statuses) == [200] + [409] * (THREADS - 1)
    chat = Chat.objects.get(pk=chat.pk)
    assert chat.version == 2 and chat.title == f"writer {statuses.index(200)}"


def test_it_counts_concurrent_recordings_of_one_pattern(token: MintedToken) -> None:
    def record(client: APIClient, index: int) -> int:
        body = {"pattern_type": "error_fix", "description": "database is locked → retry", "project": f"p{index % 3}"}
        return client.post("/api/v1/patterns/record/", body, format="json").status_code

    statuses = api_in_threads(THREADS, token, record)
    assert sorted(statuses) == [200] * (THREADS - 1) + [201]
    pattern = GlobalPattern.objects.get()
    assert pattern.frequency == THREADS
    assert sorted(pattern.source_projects) == ["p0", "p1", "p2"]


def test_concurrent_searches_and_appends_index_every_row_once(token: MintedToken) -> None:
    chat = services.chat_create(data={"title": "searched while written"})
    run = services.run_create(data={"chat_id": chat.pk})

    def append_then_search(client: APIClient, index: int) -> list[int]:
        counts = []
        for batch in range(4):
            body = [{"role": "user", "content": f"pelican{index} batch{batch}"}]
            assert client.post(f"/api/v1/runs/{run.pk}/messages/", body, format="json").status_code == 201
            response = client.get("/api/v1/search/", {"q": f"pelican{index}"})
            assert response.status_code == 200, response.content
            counts.append(response.json()["count"])
        return counts

    results = api_in_threads(THREADS, token, append_then_search)
    # Each searcher sees its own committed rows, whoever indexed them (SQLite's queue is shared).
    assert results == [[1, 2, 3, 4]] * THREADS
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT COUNT(*), COUNT(DISTINCT rowid) FROM conv_search_words")
            assert cursor.fetchone() == (THREADS * 4, THREADS * 4)
