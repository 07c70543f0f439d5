"""The lookup a message append locks its run with: precompiled, and the ORM's with the fast path
`lookups` off (each test runs both ways)."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from conversations_app import selectors, services

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True, params=["compiled", "orm"])
def lookups(request: pytest.FixtureRequest, settings) -> None:
    settings.RALPH_FAST_PATHS_OFF = frozenset() if request.param == "compiled" else frozenset({"lookups"})


def test_it_finds_a_live_run_with_its_sequence_state(make_run, append) -> None:
    run = make_run()
    append(run, "first", "second")
    with transaction.atomic():
        found = selectors.run_for_append(run_id=run.pk)
    assert (found.pk, found.message_count, found.chat_id) == (run.pk, 2, run.chat_id)


def test_it_finds_no_run_of_a_tombstoned_chat_or_an_unknown_id(make_run) -> None:
    run = make_run()
    services.chat_soft_delete(chat=run.chat)
    with transaction.atomic():
        assert selectors.run_for_append(run_id=run.pk) is None
        assert selectors.run_for_append(run_id="01ARZ3NDEKTSV4RRFFQ69G5FAV") is None


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's")
def test_it_locks_the_run_row_on_postgresql(make_run) -> None:
    run = make_run()
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        selectors.run_for_append(run_id=run.pk)
    [query] = queries.captured_queries
    assert 'FOR NO KEY UPDATE OF "conversations_app_run"' in query["sql"]
