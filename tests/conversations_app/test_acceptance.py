"""Seed 002's acceptance criteria AC-001…AC-031, one test each, through the API where there is one.

The seed's "repositories" are this server's REST resources; its SQLite and PostgreSQL "providers"
are the two databases the suite runs on (a provider criterion runs on its own backend and is skipped,
saying so, on the other). AC-022 (async/cancellation): the server is synchronous; what a cancelled
or timed-out client can observe is that a request's writes commit whole or not at all, and that a
retry with the same client ids returns the stored rows instead of writing twice.
"""

import json
from datetime import datetime
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder
from rest_framework.test import APIClient

from conversations_app.models import Chat, Message, Run
from conversations_app.search_sources import SEARCH_SOURCES
from ralphsite.core.search.schema import trigger_names
from ralphsite.core.ulid import ulid_normalize
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db

CHATS, RUNS, MESSAGES = "/api/v1/chats/", "/api/v1/runs/", "/api/v1/messages/"
MISSING = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def _post(api: APIClient, url: str, body: object) -> dict:
    response = api.post(url, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _hierarchy(api: APIClient) -> tuple[dict, dict, dict]:
    chat = _post(api, CHATS, {"title": "AC chat", "tags": ["a", "b"]})
    run = _post(api, RUNS, {"chat": chat["id"]})
    message = _post(api, f"{RUNS}{run['id']}/messages/", {"role": "user", "content": "hello"})
    return chat, run, message


def _is_ulid(value: str) -> bool:
    return ulid_normalize(value) == value


def _crud_cycle(api: APIClient) -> None:
    chat, _run, message = _hierarchy(api)
    assert api.get(f"{CHATS}{chat['id']}/").json()["title"] == "AC chat"
    assert api.patch(f"{CHATS}{chat['id']}/", {"title": "renamed"}, format="json").status_code == 200
    assert api.patch(f"{MESSAGES}{message['id']}/", {"content": "edited"}, format="json").status_code == 200
    assert api.delete(f"{CHATS}{chat['id']}/").status_code == 204
    assert Chat.objects.get(pk=chat["id"]).title == "renamed"
    assert Message.objects.get(pk=message["id"]).content == "edited"


def _provider(vendor: str) -> None:
    if connection.vendor != vendor:
        pytest.skip(f"a {vendor} provider criterion; the suite runs it on {vendor}")


# -- chat entity ------------------------------------------------------------------------------

def test_it_ac_001_chat_id_is_ulid(api: APIClient) -> None:
    assert _is_ulid(_post(api, CHATS, {"title": "t"})["id"])


def test_it_ac_002_title_stored(api: APIClient) -> None:
    chat = _post(api, CHATS, {"title": "x" * 500})
    assert Chat.objects.get(pk=chat["id"]).title == "x" * 500
    assert_error_shape(api.post(CHATS, {"title": "x" * 501}, format="json"), 400, "validation_error")
    assert_error_shape(api.post(CHATS, {}, format="json"), 400, "validation_error")


def test_it_ac_003_timestamps_work(api: APIClient) -> None:
    chat = _post(api, CHATS, {"title": "t"})
    created = datetime.fromisoformat(chat["created_at"])
    assert created.tzinfo is not None
    updated = api.patch(f"{CHATS}{chat['id']}/", {"title": "u"}, format="json").json()
    assert datetime.fromisoformat(updated["updated_at"]) >= created
    assert updated["created_at"] == chat["created_at"]


def test_it_ac_004_tags_stored_as_json(api: APIClient) -> None:
    chat = _post(api, CHATS, {"title": "t", "tags": ["bench", "한국어"]})
    with connection.cursor() as cursor:
        cursor.execute("SELECT tags FROM conversations_app_chat WHERE id = %s", [chat["id"]])
        raw = cursor.fetchone()[0]
    assert (raw if isinstance(raw, list) else json.loads(raw)) == ["bench", "한국어"]
    assert_error_shape(api.post(CHATS, {"title": "t", "tags": "bench"}, format="json"), 400, "validation_error")


def test_it_ac_005_soft_delete_works(api: APIClient) -> None:
    chat, run, _message = _hierarchy(api)
    assert api.delete(f"{CHATS}{chat['id']}/").status_code == 204
    stored = Chat.objects.get(pk=chat["id"])
    assert stored.is_deleted and stored.deleted_at is not None
    assert api.get(MESSAGES, {"run": run["id"]}).json()["results"] == []


def test_it_ac_006_version_increments(api: APIClient) -> None:
    chat = _post(api, CHATS, {"title": "t"})
    assert chat["version"] == 1
    versions = [api.patch(f"{CHATS}{chat['id']}/", {"title": f"v{i}"}, format="json").json()["version"]
                for i in range(3)]
    assert versions == [2, 3, 4]


# -- run entity -------------------------------------------------------------------------------

def test_it_ac_007_run_id_is_ulid(api: APIClient) -> None:
    assert _is_ulid(_hierarchy(api)[1]["id"])


def test_it_ac_008_chat_id_foreign_key(api: APIClient) -> None:
    chat, run, _ = _hierarchy(api)
    assert run["chat"] == chat["id"] and Run.objects.get(pk=run["id"]).chat_id == chat["id"]
    assert_error_shape(api.post(RUNS, {"chat": MISSING}, format="json"), 400, "ACODE-CONV-DATA-004")
    assert_error_shape(api.post(RUNS, {}, format="json"), 400, "validation_error")


def test_it_ac_009_status_enum_works(api: APIClient) -> None:
    _, run, _ = _hierarchy(api)
    for status in ("completed", "failed", "cancelled", "running"):
        assert api.patch(f"{RUNS}{run['id']}/", {"status": status}, format="json").json()["status"] == status
    body = assert_error_shape(api.patch(f"{RUNS}{run['id']}/", {"status": "paused"}, format="json"), 400,
                              "validation_error")
    assert "cancelled" in body["details"]["status"][0]


def test_it_ac_010_timestamps_work(api: APIClient) -> None:
    _, run, _ = _hierarchy(api)
    assert run["started_at"] and run["completed_at"] is None
    done = api.patch(f"{RUNS}{run['id']}/", {"status": "completed"}, format="json").json()
    assert datetime.fromisoformat(done["completed_at"]) >= datetime.fromisoformat(done["started_at"])


def test_it_ac_011_tokens_tracked(api: APIClient) -> None:
    _, run, _ = _hierarchy(api)
    big = 2**40  # 64-bit
    assert api.patch(f"{RUNS}{run['id']}/", {"tokens_used": big}, format="json").json()["tokens_used"] == big
    assert Run.objects.get(pk=run["id"]).tokens_used == big


# -- message entity ---------------------------------------------------------------------------

def test_it_ac_012_message_id_is_ulid(api: APIClient) -> None:
    assert _is_ulid(_hierarchy(api)[2]["id"])


def test_it_ac_013_run_id_foreign_key(api: APIClient) -> None:
    _, run, message = _hierarchy(api)
    assert message["run"] == run["id"]
    assert_error_shape(api.post(MESSAGES, {"run": MISSING, "role": "user", "content": "x"}, format="json"), 400,
                       "ACODE-CONV-DATA-004")


def test_it_ac_014_role_enum_works(api: APIClient) -> None:
    _, run, _ = _hierarchy(api)
    url = f"{RUNS}{run['id']}/messages/"
    roles = [_post(api, url, {"role": role, "content": role})["role"] for role in ("user", "assistant", "system",
                                                                                     "tool")]
    assert roles == ["user", "assistant", "system", "tool"]
    assert_error_shape(api.post(url, {"role": "robot", "content": "x"}, format="json"), 400, "validation_error")


def test_it_ac_015_content_stored(api: APIClient) -> None:
    _, run, _ = _hierarchy(api)
    content = "multi\nline ✓ 세션 " + "x" * 100_000
    message = _post(api, f"{RUNS}{run['id']}/messages/", {"role": "assistant", "content": content})
    assert Message.objects.get(pk=message["id"]).content == content


def test_it_ac_016_tool_calls_as_json(api: APIClient) -> None:
    _, run, _ = _hierarchy(api)
    calls = [{"id": "c1", "name": "read_file", "arguments": {"path": "a.py", "lines": [1, 2]}, "status": "pending"}]
    message = _post(api, f"{RUNS}{run['id']}/messages/", {"role": "assistant", "content": "", "tool_calls": calls})
    assert Message.objects.get(pk=message["id"]).tool_calls == calls
    # The API always shows every tool-call key (an absent result as null).
    assert api.get(f"{MESSAGES}{message['id']}/").json()["tool_calls"] == [calls[0] | {"result": None}]


# -- repository -------------------------------------------------------------------------------

def test_it_ac_017_create_works(api: APIClient) -> None:
    chat, _run, _message = _hierarchy(api)
    assert (Chat.objects.count(), Run.objects.count(), Message.objects.count()) == (1, 1, 1)
    retry = api.post(CHATS, {"id": chat["id"], "title": "AC chat", "tags": ["a", "b"]}, format="json")
    assert retry.status_code == 200 and Chat.objects.count() == 1  # offline-first retry


def test_it_ac_018_get_by_id_works(api: APIClient) -> None:
    chat, run, message = _hierarchy(api)
    assert api.get(f"{CHATS}{chat['id']}/").json()["id"] == chat["id"]
    assert api.get(f"{RUNS}{run['id']}/").json()["id"] == run["id"]
    assert api.get(f"{MESSAGES}{message['id']}/").json() == message
    for url, code in ((CHATS, "001"), (RUNS, "002"), (MESSAGES, "003")):
        assert_error_shape(api.get(f"{url}{MISSING}/"), 404, f"ACODE-CONV-DATA-{code}")


def test_it_ac_019_update_works(api: APIClient) -> None:
    chat, run, message = _hierarchy(api)
    assert api.put(f"{CHATS}{chat['id']}/", {"title": "put", "tags": []}, format="json").json()["tags"] == []
    assert api.patch(f"{RUNS}{run['id']}/", {"tokens_used": 5}, format="json").json()["tokens_used"] == 5
    assert api.patch(f"{MESSAGES}{message['id']}/", {"content": "new"}, format="json").json()["content"] == "new"


def test_it_ac_020_delete_works(api: APIClient) -> None:
    chat, _, _ = _hierarchy(api)
    assert api.delete(f"{CHATS}{chat['id']}/").status_code == 204
    assert_error_shape(api.get(f"{CHATS}{chat['id']}/"), 404, "ACODE-CONV-DATA-001")
    assert_error_shape(api.delete(f"{CHATS}{chat['id']}/"), 404, "ACODE-CONV-DATA-001")


def test_it_ac_021_list_with_pagination(api: APIClient) -> None:
    for i in range(7):
        _post(api, CHATS, {"title": f"c{i}", "worktree_id": "wt"})
    page = api.get(CHATS, {"page_size": 3, "worktree": "wt"}).json()
    assert page["count"] == 7 and len(page["results"]) == 3 and page["next"]
    last = api.get(CHATS, {"page_size": 3, "page": 3, "worktree": "wt"}).json()
    assert len(last["results"]) == 1 and last["next"] is None


def test_it_ac_022_async_cancellation_leaves_no_partial_write(api: APIClient) -> None:
    _, run, _ = _hierarchy(api)
    url = f"{RUNS}{run['id']}/messages/"
    # A request that fails part-way (the 600th message reuses an id) writes none of its messages.
    duplicate = "01J9ZQ6Y8K3V5X7B2N4M6P8R0T"
    body = [{"role": "user", "content": f"m{i}"} for i in range(1000)]
    body[10]["id"] = body[600]["id"] = duplicate
    assert_error_shape(api.post(url, body, format="json"), 409, "conflict")
    assert Message.objects.filter(run_id=run["id"]).count() == 1
    assert Run.objects.get(pk=run["id"]).message_count == 1
    # A client whose request timed out retries with the same ids: no duplicates.
    body = [{"id": "01J9ZQ6Y8K3V5X7B2N4M6P8R0V", "role": "user", "content": "once"}]
    first, retry = api.post(url, body, format="json"), api.post(url, body, format="json")
    assert retry.json() == first.json() and Message.objects.filter(run_id=run["id"]).count() == 2


# -- SQLite provider --------------------------------------------------------------------------

def test_it_ac_023_sqlite_crud_works(api: APIClient) -> None:
    _provider("sqlite")
    _crud_cycle(api)


def test_it_ac_024_wal_mode() -> None:
    _provider("sqlite")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"


def _rollback_check(api: APIClient) -> None:
    _, run, _ = _hierarchy(api)
    bad = [{"role": "user", "content": "fine"}, {"role": "user", "content": "x", "tool_calls": "nope"}]
    assert api.post(f"{RUNS}{run['id']}/messages/", bad, format="json").status_code == 400
    assert Message.objects.filter(run_id=run["id"]).count() == 1


def test_it_ac_025_sqlite_transactions() -> None:
    _provider("sqlite")
    assert connection.settings_dict["OPTIONS"]["transaction_mode"] == "IMMEDIATE"  # writers queue


def test_it_ac_025_sqlite_transactions_roll_back(api: APIClient) -> None:
    _provider("sqlite")
    _rollback_check(api)


# -- PostgreSQL provider ----------------------------------------------------------------------

def test_it_ac_026_postgresql_crud_works(api: APIClient) -> None:
    _provider("postgresql")
    _crud_cycle(api)


def test_it_ac_027_connection_pool() -> None:
    _provider("postgresql")
    pool_options = connection.settings_dict.get("OPTIONS", {}).get("pool")
    if not pool_options:
        pytest.skip("RALPH_DB_POOL_SIZE=0: persistent connections, no pool")
    assert connection.pool is not None
    assert connection.pool.max_size == pool_options["max_size"] == settings.DATABASES["default"]["OPTIONS"][
        "pool"]["max_size"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert connection.pool.get_stats()["pool_size"] >= 1


def test_it_ac_028_postgresql_transactions(api: APIClient) -> None:
    _provider("postgresql")
    _rollback_check(api)


# -- migrations -------------------------------------------------------------------------------

def _pending() -> list:
    executor = MigrationExecutor(connection)
    return executor.migration_plan(executor.loader.graph.leaf_nodes())


def _search_installed() -> bool:
    """This app's part of the search index (the ledger's and the reports' stay with their apps' migrations)."""
    if connection.vendor == "sqlite":
        sql, names = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE %s", trigger_names(
            SEARCH_SOURCES)
    else:
        sql, names = "SELECT indexname FROM pg_indexes WHERE indexname LIKE %s", [
            f"conv_search_{source.kind}_{suffix}" for source in SEARCH_SOURCES for suffix in ("fts", "trgm")]
    with connection.cursor() as cursor:
        cursor.execute(sql, ["conv_search_%"])
        found = {row[0] for row in cursor.fetchall()} & set(names)
    assert found in (set(), set(names)), found  # all of it or none
    return found == set(names)


@pytest.mark.django_db(transaction=True)
def test_it_ac_029_auto_apply_on_start() -> None:
    call_command("migrate", "conversations_app", "zero", verbosity=0)
    assert _pending()
    call_command("migrate", "--noinput", verbosity=0)  # what `make run` does before serving
    assert _pending() == []
    assert Chat.objects.count() == 0 and _search_installed()


def test_it_ac_030_version_tracked() -> None:
    applied = set(MigrationRecorder(connection).applied_migrations())
    assert {("conversations_app", "0001_initial"), ("conversations_app", "0002_search")} <= applied
    out = StringIO()
    call_command("migrate", "conversations_app", stdout=out)
    assert "No migrations to apply" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_it_ac_031_rollback_works(api: APIClient) -> None:
    call_command("migrate", "conversations_app", "0001", verbosity=0)
    assert not _search_installed()
    call_command("migrate", "conversations_app", verbosity=0)
    assert _search_installed()
    _, _run, message = _hierarchy(api)
    assert [h["id"] for h in api.get("/api/v1/search/", {"q": "hello"}).json()["results"]] == [message["id"]]
