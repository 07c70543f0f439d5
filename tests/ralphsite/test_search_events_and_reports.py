"""GET /api/v1/search/ beyond conversations (issue #31): ledger events and task reports, each app's source
of the one search (ralphsite/core/search): found by word and by Korean substring, kept to a token's scope
and its owner's permissions, and gone from the index with a purge that leaves the chain intact."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from rest_framework.test import APIClient

from ledger_app.chain_verify import chain_verify
from ledger_app.models import LedgerEvent
from ledger_app.services import event_append, ledger_events_purge
from ralphsite.core.models import TokenScope
from ralphsite.core.search.schema import trigger_names
from ralphsite.core.search.sources import search_kinds
from ralphsite.tokens.services import api_token_create
from sessions_app.models import TaskAttempt
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_session, make_task

SEARCH = "/api/v1/search/"
FAILURE = "TypeError: x is undefined"


def _failed_attempt(session, key: str, error: str = FAILURE) -> TaskAttempt:
    task = make_task(session, key)
    return TaskAttempt.objects.create(task=task, session=session, attempt_number=1, status="failed",
                                      implementation_report="Wired the widget list.", error_type="TypeError",
                                      error_message=error)


def _hits(client: APIClient, **params: str) -> list[tuple[str, str]]:
    response = client.get(SEARCH, params)
    assert response.status_code == 200, response.content
    return [(hit["kind"], hit["id"]) for hit in response.json()["results"]]


def _client(user, **scope) -> APIClient:
    minted = api_token_create(user=user, **scope)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {minted.secret}")
    return client


@pytest.mark.django_db
def test_it_finds_a_failure_in_the_ledger_and_in_the_report(api: APIClient) -> None:
    session = make_session()
    event = event_append(session_id=session.pk, type="task_failed", task_key="t-1", message=f"t-1 failed: {FAILURE}")
    event_append(session_id=session.pk, type="task_started", task_key="t-1", message="t-1 started")
    attempt = _failed_attempt(session, "t-1")
    assert set(_hits(api, q="TypeError")) == {("event", str(event.pk)), ("report", attempt.pk)}
    assert _hits(api, q="undefined", kind="event") == [("event", str(event.pk))]
    assert _hits(api, q="widget", kind="report") == [("report", attempt.pk)]
    assert _hits(api, q="task_failed") == [("event", str(event.pk))]  # its type is searched too
    hit = api.get(SEARCH, {"q": "TypeError", "kind": "event"}).json()["results"][0]
    assert (hit["session"], hit["subtype"], hit["chat"], hit["run"]) == (session.pk, "task_failed", None, None)
    assert "<mark>TypeError</mark>" in hit["snippet"]


@pytest.mark.django_db
def test_it_finds_korean_events_and_reports_by_a_three_character_substring(api: APIClient) -> None:
    session = make_session()
    event = event_append(session_id=session.pk, type="error_occurred", message="세션을 다시 시작했습니다")
    attempt = _failed_attempt(session, "t-2", error="검증기가 실패했습니다")
    assert _hits(api, q="시작했") == [("event", str(event.pk))]
    assert _hits(api, q="실패했") == [("report", attempt.pk)]


@pytest.mark.django_db
def test_a_scoped_token_finds_only_its_sessions_events_and_reports(user) -> None:
    mine, other = make_session(), make_session()
    for session in (mine, other):
        event_append(session_id=session.pk, type="task_failed", message=FAILURE)
        _failed_attempt(session, f"t-{session.pk}")
    client = _client(user, scope=TokenScope.SESSION, session_id=mine.pk)
    sessions = {hit["session"] for hit in client.get(SEARCH, {"q": "TypeError"}).json()["results"]}
    assert sessions == {mine.pk}
    assert len(_hits(client, q="TypeError")) == 2
    assert _hits(client, q="TypeError", session=other.pk) == []
    assert len(_hits(_client(user, scope=TokenScope.GLOBAL), q="TypeError")) == 4


@pytest.mark.django_db
def test_it_searches_only_the_kinds_its_owner_may_view(api: APIClient) -> None:
    session = make_session()
    event_append(session_id=session.pk, type="task_failed", message=FAILURE)
    attempt = _failed_attempt(session, "t-3")
    staff = get_user_model().objects.create_user(username="reader", password="reader-password-1", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__in=(
        "view_message", "view_observation", "view_taskattempt")))
    client = _client(staff, scope=TokenScope.GLOBAL)
    assert _hits(client, q="TypeError") == [("report", attempt.pk)]  # no event: it may not view the ledger
    assert_error_shape(client.get(SEARCH, {"q": "TypeError", "kind": "event"}), 403, "permission_denied")
    assert set(search_kinds()) == {"message", "observation", "event", "report"}


@pytest.mark.django_db(transaction=True)
def test_a_purge_takes_its_events_out_of_the_index_and_keeps_the_chain(api: APIClient) -> None:
    gone, kept = make_session(), make_session()
    event_append(session_id=gone.pk, type="task_failed", message=FAILURE)
    survivor = event_append(session_id=kept.pk, type="task_failed", message=FAILURE)
    assert len(_hits(api, q="TypeError")) == 2  # indexed (the queue) before the purge
    ledger_events_purge(session_ids=[gone.pk], reason="retention")
    assert _hits(api, q="TypeError") == [("event", str(survivor.pk))]
    after = event_append(session_id=kept.pk, type="task_failed", message="TypeError again")
    assert set(_hits(api, q="TypeError")) == {("event", str(survivor.pk)), ("event", str(after.pk))}
    assert chain_verify().intact
    assert LedgerEvent.objects.filter(session=kept).count() == 2


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's triggers")
def test_an_append_only_queues_the_event_for_the_index(api: APIClient) -> None:
    """The ledger's append does no FTS5 writing: its trigger queues the event (schema.py's deferred queue)."""
    session = make_session()
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM conv_search_pending")
        event = event_append(session_id=session.pk, type="task_failed", message=FAILURE)
        cursor.execute("SELECT COUNT(*) FROM conv_search_pending")
        assert cursor.fetchone()[0] == 1
        cursor.execute("SELECT COUNT(*) FROM conv_search_words WHERE conv_search_words MATCH 'typeerror'")
        assert cursor.fetchone()[0] == 0
    assert _hits(api, q="TypeError") == [("event", str(event.pk))]  # the search indexes the queue first
    assert {f"conv_search_{kind}_ai" for kind in ("event", "report")} <= set(trigger_names())
