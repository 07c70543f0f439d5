"""JSON shapes live in the domain (issue #26 §1, §2): the service every door calls refuses a value of
another shape, the database refuses one written past the services, the importer reshapes or sets aside,
and the read path renders whatever a row holds."""

import json
from pathlib import Path
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from rest_framework.test import APIClient

from conversations_app import services as conversations
from conversations_app.models import Message, Run
from ledger_app.models import LedgerEvent
from ralphsite.core.errors import InvalidInput
from ralphsite.core.models import SeedRow
from ralphsite.core.shapes import JSONList, JSONString, stored_values_check
from sessions_app.models import Task
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import make_event, make_session
from tests.seed_io.helpers import import_seed, seed_database

pytestmark = pytest.mark.django_db
NOT_OBJECTS = ["hello", [1, 2], 5, True]
CALL = {"id": "call_1", "name": "read_file", "arguments": {"path": "a.py"}, "status": "completed"}


@pytest.fixture
def run(db) -> Run:
    return conversations.run_create(data={"chat_id": conversations.chat_create(data={"title": "t"}).pk})


@pytest.mark.parametrize("meta", NOT_OBJECTS)
def test_it_refuses_an_event_whose_meta_or_data_is_not_an_object_and_stores_nothing(api: APIClient, meta: Any) -> None:
    session = make_session()
    for name in ("meta", "data"):
        response = api.post("/api/v1/events/", {"session": session.id, "type": "x-test", name: meta}, format="json")
        body = assert_error_shape(response, 400, "validation_error")
        assert body["details"] == {name: [f"Must be a JSON object, not {_kind(meta)}."]}
    bulk = api.post("/api/v1/events/", [{"session": session.id, "type": "x-test", "meta": meta},
                                        {"session": session.id, "type": "x-test", "meta": {"ok": 1}}], format="json")
    assert [item["status"] for item in bulk.json()] == ["invalid", "created"]
    assert LedgerEvent.objects.filter(session=session).count() == 1
    for url in (f"/api/v1/events/?session={session.id}", "/api/v1/events/?ordering=-id"):
        assert api.get(url).status_code == 200


def _kind(value: Any) -> str:
    return {str: "a string", list: "a list", int: "a number", bool: "a boolean"}[type(value)]


@pytest.mark.parametrize("meta", NOT_OBJECTS)
def test_the_database_refuses_an_event_meta_that_is_not_an_object(meta: Any) -> None:
    session = make_session()
    with pytest.raises(IntegrityError), transaction.atomic():
        make_event(session, meta=meta)


@pytest.mark.parametrize("tool_calls", [
    [{"id": "c", "name": "n", "arguments": {}}],                                   # no status
    [{"Id": "c", "Name": "n", "Arguments": {}, "Status": "completed", "Extra": 1}],  # a key no spelling maps
    CALL,                                                                          # one call, not a list
    "not json",
    [None],
])
def test_it_refuses_tool_calls_of_another_shape_through_the_service(run: Run, tool_calls: Any) -> None:
    with pytest.raises(InvalidInput) as refused:
        conversations.message_append(run_id=run.pk, items=[{"role": "assistant", "tool_calls": tool_calls}])
    assert list(refused.value.details) == ["tool_calls"]
    assert not Message.objects.filter(run=run).exists()


def test_the_database_refuses_tool_calls_that_are_not_a_list(run: Run) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(run=run, role="assistant", sequence_number=1, tool_calls=CALL)


def test_a_stored_tool_call_missing_keys_is_read_as_stored(api: APIClient, run: Run) -> None:
    """Written past the services (an older import): the list is a list, its items miss keys."""
    stored = [{"id": "c", "name": "n"}, {"Id": "x"}, 5]
    message = Message.objects.create(run=run, role="assistant", sequence_number=1, tool_calls=stored)
    detail = api.get(f"/api/v1/messages/{message.pk}/")
    assert detail.status_code == 200 and detail.json()["tool_calls"] == stored
    for query in ({"page_size": 100}, {"role": "assistant"}):
        listed = api.get("/api/v1/messages/", query)
        assert listed.status_code == 200 and listed.json()["results"][0]["tool_calls"] == stored


def test_import_reshapes_tool_calls_it_can_and_sets_aside_the_rest(tmp_path: Path, api: APIClient) -> None:
    """Finding §2: Acode messages with PascalCase keys, a single object, a missing key, text not JSON."""
    pascal = {"Id": "call_2", "Name": "grep", "Arguments": {"q": "x"}, "Status": "completed"}
    calls = [json.dumps([pascal]), json.dumps(CALL), json.dumps([{"id": "c", "name": "n", "arguments": {}}]),
             "{not json", json.dumps([CALL])]
    run_id = "01JH2000000000000000000000"
    path = seed_database(tmp_path / "conversations.db", "conversations", {
        "chats": [{"id": "01JH1000000000000000000001", "title": "t", "tags": None, "worktree_id": None,
                   "is_deleted": 0, "deleted_at": None, "created_at": "2026-01-01T10:00:00Z",
                   "updated_at": "2026-01-01T10:00:00Z", "sync_status": "pending", "version": 1}],
        "runs": [{"id": run_id, "chat_id": "01JH1000000000000000000001", "status": "completed",
                  "started_at": "2026-01-01T10:00:00Z", "completed_at": None, "tokens_used": 0,
                  "sequence_number": 1, "sync_status": "pending"}],
        "messages": [{"id": f"01JH30000000000000000000{n:02d}", "run_id": run_id, "role": "assistant",
                      "content": "", "tool_calls": value, "created_at": f"2026-01-01T10:00:{n:02d}Z",
                      "sequence_number": n + 1, "sync_status": "pending"} for n, value in enumerate(calls)],
    })
    output = import_seed("conversations", path)
    assert output.count("messages: 1 value(s) set aside") == 2, output
    messages = list(Message.objects.filter(run_id=run_id).order_by("sequence_number"))
    assert [m.tool_calls for m in messages] == [
        [{"id": "call_2", "name": "grep", "arguments": {"q": "x"}, "status": "completed"}], [CALL], None, None,
        [CALL]]
    kept = SeedRow.objects.get(source_table="messages", source_key="01JH3000000000000000000002").extra
    assert kept["tool_calls"] == calls[2]  # as the tool wrote it
    assert api.get("/api/v1/messages/", {"page_size": 100}).status_code == 200
    for message in messages:
        stored_values_check(message)


def test_an_imported_ralphy_ledger_whose_meta_is_not_json_is_read(tmp_path: Path, api: APIClient) -> None:
    path = seed_database(tmp_path / "ralphy.db", "ralphy", {
        "runs": [{"id": "run-1", "started_at": 1767261600, "status": "running", "config_json": "{}"}],
        "ledger": [{"id": 1, "run_id": "run-1", "ts": 1767261601, "type": "run_started",
                    "meta_json": "{not json"},
                   {"id": 2, "run_id": "run-1", "ts": 1767261602, "type": "run_started",
                    "meta_json": "[1, 2]"}],
    })
    output = import_seed("ralphy", path)
    assert output.count("ledger: 1 value(s) set aside") == 2, output
    assert sorted(json.dumps(e.meta) for e in LedgerEvent.objects.all()) == ["{}", "{}"]
    assert api.get("/api/v1/events/", {"ordering": "-id"}).status_code == 200


def test_task_success_criteria_are_a_list_of_strings(api: APIClient) -> None:
    session = make_session()
    response = api.post("/api/v1/tasks/", {"session": session.id, "key": "t-1", "title": "T",
                                           "success_criteria": ["passes"]}, format="json")
    assert response.status_code == 201, response.content
    with pytest.raises(InvalidInput):
        stored_values_check(Task(session=session, key="t-2", success_criteria="one"))
    assert JSONList(JSONString()).problem(["a", 1]) == "Item 1: Must be a string, not a number."
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Task._meta.db_table} SET success_criteria = %s", ['"one"'])
