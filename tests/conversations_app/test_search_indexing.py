"""SQLite's deferred search index: inserts queue rows, searches and the server's thread index them."""

import time

import pytest
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from conversations_app.models import Message
from ralphsite.core.search.indexing import search_index_pending
from ralphsite.core.search.schema import PENDING_TABLE
from ralphsite.server.upkeep import upkeep_start, upkeep_stop

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL indexes rows as they are written")
SEARCH = "/api/v1/search/"


def _queued() -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {PENDING_TABLE}")
        return cursor.fetchone()[0]


def _indexed(word: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM conv_search_words WHERE conv_search_words MATCH %s", [word])
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_it_queues_a_new_row_and_a_search_indexes_it_first(api: APIClient, make_run, append) -> None:
    append(make_run(), "the zeppelin landed")
    assert (_queued(), _indexed("zeppelin")) == (1, 0)
    hits = api.get(SEARCH, {"q": "zeppelin"}).json()
    assert hits["count"] == 1
    assert (_queued(), _indexed("zeppelin")) == (0, 1)
    assert search_index_pending() is False  # nothing left: one read, no write


@pytest.mark.django_db
def test_it_indexes_a_queued_row_with_its_current_text(api: APIClient, make_run, append) -> None:
    [message] = append(make_run(), "first draft about walruses")
    Message.objects.filter(pk=message.pk).update(content="final text about narwhals")
    assert api.get(SEARCH, {"q": "walruses"}).json()["count"] == 0
    assert api.get(SEARCH, {"q": "narwhals"}).json()["count"] == 1


@pytest.mark.django_db
def test_it_forgets_a_queued_row_that_is_deleted(make_run, append) -> None:
    [message] = append(make_run(), "short-lived okapi")
    Message.objects.filter(pk=message.pk).delete()
    assert _queued() == 0
    assert search_index_pending() is False and _indexed("okapi") == 0


@pytest.mark.django_db(transaction=True)
def test_the_server_thread_indexes_the_queue_between_requests(make_run, append) -> None:
    connection.ensure_connection()  # the last connection to close would checkpoint everything itself
    upkeep = upkeep_start(interval=0.02)
    try:
        append(make_run(), "a capybara in the queue")
        deadline = time.monotonic() + 60  # only bounds a hang: a loaded machine may not schedule the thread soon
        while _queued() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _queued() == 0 and _indexed("capybara") == 1
        assert upkeep.is_alive()
    finally:
        upkeep_stop()


@pytest.mark.django_db(transaction=True)
def test_its_migration_reverses_to_index_at_insert_and_back(make_run, append) -> None:
    append(make_run(), "queued before the migration")
    try:
        call_command("migrate", "conversations_app", "0002", verbosity=0)
        assert _indexed("queued") == 1  # the reverse rebuilt the index from the table
        append(make_run(), "indexed at insert")
        # The queue stays (the ledger's events and the reports use it), but no message waits in it.
        assert (_queued(), _indexed("insert")) == (0, 1)
    finally:
        call_command("migrate", "conversations_app", verbosity=0)
    assert (_queued(), _indexed("queued"), _indexed("insert")) == (0, 1, 1)
    append(make_run(), "queued again")
    assert _queued() == 1
