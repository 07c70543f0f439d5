"""Hostile input against every conversations/memory endpoint: always a 4xx in the one error shape
({code, message, details}), never a 500 or a database error, and nothing written."""

from typing import Any, NamedTuple

import pytest
from rest_framework.test import APIClient

from conversations_app.models import Chat, GlobalPattern, Message, Observation, Run, SyncMapping
from tests.api_mixins import assert_error_shape

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

MISSING = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
CALL = {"id": "c1", "name": "bash", "status": "pending"}


class Case(NamedTuple):
    method: str
    url: str  # formatted with {chat}, {run}, {message}, {session}
    body: Any = None
    status: int = 400
    code: str = "validation_error"
    headers: dict[str, str] | None = None
    raw: str | None = None  # a body sent as-is (malformed JSON)


def _calls(count: int) -> list[dict[str, Any]]:
    return [CALL | {"id": f"c{i}", "arguments": {}} for i in range(count)]


CASES = {
    # chats
    "chat title too long": Case("post", "/api/v1/chats/", {"title": "x" * 501}),
    "chat title not a string": Case("post", "/api/v1/chats/", {"title": ["a"]}),
    "chat title with NUL": Case("post", "/api/v1/chats/", {"title": "a\x00b"}),
    "chat tags not a list": Case("post", "/api/v1/chats/", {"title": "t", "tags": "a,b"}),
    "chat tag an object": Case("post", "/api/v1/chats/", {"title": "t", "tags": [{}]}),
    "chat 101 tags": Case("post", "/api/v1/chats/", {"title": "t", "tags": [f"t{i}" for i in range(101)]}),
    "chat unknown key": Case("post", "/api/v1/chats/", {"title": "t", "colour": "red"}),
    "chat bad ulid id": Case("post", "/api/v1/chats/", {"id": "not-a-ulid", "title": "t"}),
    "chat body a list": Case("post", "/api/v1/chats/", [{"title": "t"}]),
    "chat malformed json": Case("post", "/api/v1/chats/", raw='{"title": ', code="parse_error"),
    "chat missing session": Case("post", "/api/v1/chats/", {"title": "t", "session": MISSING}),
    "chat version not a number": Case("patch", "/api/v1/chats/{chat}/", {"version": "abc"}),
    "chat version zero": Case("patch", "/api/v1/chats/{chat}/", {"version": 0}),
    "chat huge stale version": Case("patch", "/api/v1/chats/{chat}/", {"title": "x", "version": 2**70}, 409,
                                    "conflict"),
    # One version, as the ETag was sent: anything else is a malformed header, not a failed precondition.
    "chat garbage if-match": Case("patch", "/api/v1/chats/{chat}/", {"title": "x"}, 400, "validation_error",
                                  {"HTTP_IF_MATCH": '"1", "2"'}),
    "chat if-match on delete": Case("delete", "/api/v1/chats/{chat}/", None, 412, "precondition_failed",
                                    {"HTTP_IF_MATCH": '"7"'}),
    "chat bad ulid in url": Case("get", "/api/v1/chats/nope/", status=404, code="ACODE-CONV-DATA-001"),
    "chat restore bad ulid": Case("post", "/api/v1/chats/nope/restore/", status=404, code="ACODE-CONV-DATA-001"),
    "chats bad sync filter": Case("get", "/api/v1/chats/?sync_status=maybe"),
    "chats bad date filter": Case("get", "/api/v1/chats/?updated_after=yesterday"),
    # runs
    "run bad chat ulid": Case("post", "/api/v1/runs/", {"chat": "nope"}),
    "run chat an integer": Case("post", "/api/v1/runs/", {"chat": 5}),
    "run missing chat": Case("post", "/api/v1/runs/", {"chat": MISSING}, code="ACODE-CONV-DATA-004"),
    "run sequence number": Case("post", "/api/v1/runs/", {"chat": "{chat}", "sequence_number": 1}),
    "run bad status": Case("patch", "/api/v1/runs/{run}/", {"status": "paused"}),
    "run negative tokens": Case("patch", "/api/v1/runs/{run}/", {"tokens_used": -1}),
    "run tokens beyond 64 bits": Case("patch", "/api/v1/runs/{run}/", {"tokens_used": 2**63}),
    "run tokens not a number": Case("patch", "/api/v1/runs/{run}/", {"tokens_used": "many"}),
    "run bad started_at": Case("patch", "/api/v1/runs/{run}/", {"started_at": "noon"}),
    "run moved to another chat": Case("patch", "/api/v1/runs/{run}/", {"chat": MISSING}),
    "runs bad status filter": Case("get", "/api/v1/runs/?status=paused"),
    "run bad ulid in url": Case("get", "/api/v1/runs/nope/", status=404, code="ACODE-CONV-DATA-002"),
    # appends
    "append a string": Case("post", "/api/v1/runs/{run}/messages/", "hello"),
    "append a list of numbers": Case("post", "/api/v1/runs/{run}/messages/", [1, 2]),
    "append an empty list": Case("post", "/api/v1/runs/{run}/messages/", []),
    "append 1001 messages": Case("post", "/api/v1/runs/{run}/messages/", [{"role": "user"}] * 1001),
    "append a bad role": Case("post", "/api/v1/runs/{run}/messages/", {"role": 1}),
    "append a bad ulid id": Case("post", "/api/v1/runs/{run}/messages/", {"id": "x", "role": "user"}),
    "append content with NUL": Case("post", "/api/v1/runs/{run}/messages/", {"role": "user", "content": "\x00"}),
    "append NUL in tool arguments": Case("post", "/api/v1/runs/{run}/messages/", {
        "role": "tool", "tool_calls": [CALL | {"arguments": {"cmd": ["ls", "a\x00b"]}}]}),
    "append NUL in a tool argument key": Case("post", "/api/v1/runs/{run}/messages/", {
        "role": "tool", "tool_calls": [CALL | {"arguments": {"a\x00": 1}}]}),
    # A lone surrogate is valid JSON but no text a database stores (PostgreSQL: a 500 before).
    "append a lone surrogate in tool arguments": Case("post", "/api/v1/runs/{run}/messages/", raw=(
        '{"role": "tool", "tool_calls": [{"id": "c1", "name": "bash", "status": "pending", '
        '"arguments": {"cmd": ["ls", "\\ud800"]}}]}')),
    "message tool call with a lone surrogate key": Case("patch", "/api/v1/messages/{message}/", raw=(
        '{"tool_calls": [{"id": "c1", "name": "bash", "status": "pending", "arguments": {"\\udfff": 1}}]}')),
    "append 1001 tool calls": Case("post", "/api/v1/runs/{run}/messages/", {"role": "tool",
                                                                          "tool_calls": _calls(1001)}),
    "append NaN": Case("post", "/api/v1/runs/{run}/messages/", raw='{"role": "user", "content": NaN}',
                       code="parse_error"),
    "append to a bad ulid": Case("post", "/api/v1/runs/nope/messages/", {"role": "user"}, 404,
                                 "ACODE-CONV-DATA-002"),
    # messages
    "message bad run ulid": Case("post", "/api/v1/messages/", {"run": "nope", "role": "user"}),
    "message missing run": Case("post", "/api/v1/messages/", {"run": MISSING, "role": "user"},
                                code="ACODE-CONV-DATA-004"),
    "message moved to another run": Case("patch", "/api/v1/messages/{message}/", {"run": MISSING}),
    "message sequence number": Case("patch", "/api/v1/messages/{message}/", {"sequence_number": 5}),
    "messages bad role filter": Case("get", "/api/v1/messages/?role=robot"),
    "messages junk cursor": Case("get", "/api/v1/messages/?cursor=junk"),
    "message bad ulid in url": Case("get", "/api/v1/messages/nope/", status=404, code="ACODE-CONV-DATA-003"),
    # observations
    "observation importance above 1": Case("post", "/api/v1/observations/", {
        "session": "{session}", "type": "bash", "content": "x", "importance": 1.5}),
    "observation importance NaN": Case("post", "/api/v1/observations/", {
        "session": "{session}", "type": "bash", "content": "x", "importance": "NaN"}),
    "observation bad session": Case("post", "/api/v1/observations/", {"session": "nope", "type": "bash",
                                                                      "content": "x"}),
    "observation bad type": Case("post", "/api/v1/observations/", {"session": "{session}", "type": "thought",
                                                                   "content": "x"}),
    "observation bad embedding": Case("post", "/api/v1/observations/", {
        "session": "{session}", "type": "bash", "content": "x", "embedding": "!!"}),
    "observations bad importance filter": Case("get", "/api/v1/observations/?importance_min=high"),
    # patterns
    "pattern without description": Case("post", "/api/v1/patterns/record/", {"pattern_type": "error_fix"}),
    "pattern bad type": Case("post", "/api/v1/patterns/record/", {"pattern_type": "hack", "description": "d"}),
    "pattern project a list": Case("post", "/api/v1/patterns/record/", {"pattern_type": "error_fix",
                                                                        "description": "d", "project": ["p"]}),
    "pattern unknown key": Case("post", "/api/v1/patterns/record/", {"pattern_type": "error_fix",
                                                                     "description": "d", "count": 3}),
    "patterns bad frequency filter": Case("get", "/api/v1/patterns/?frequency_min=often"),
    # sync
    "mark-synced no items": Case("post", "/api/v1/sync/mark-synced/", {"items": []}),
    "mark-synced items an object": Case("post", "/api/v1/sync/mark-synced/", {"items": {"a": 1}}),
    "mark-synced 1001 items": Case("post", "/api/v1/sync/mark-synced/", {
        "items": [{"entity": "chat", "id": MISSING, "remote_id": "r"}] * 1001}),
    "mark-synced bad ulid": Case("post", "/api/v1/sync/mark-synced/", {
        "items": [{"entity": "chat", "id": "nope", "remote_id": "r"}]}),
    "mark-synced unknown id": Case("post", "/api/v1/sync/mark-synced/", {
        "items": [{"entity": "message", "id": MISSING, "remote_id": "r", "version": 1}]}, 404, "ACODE-CONV-DATA-003"),
    "mark-synced no version": Case("post", "/api/v1/sync/mark-synced/", {
        "items": [{"entity": "message", "id": MISSING, "remote_id": "r"}]}),
    "pending bad limit": Case("get", "/api/v1/sync/pending/?limit=0"),
    # search (odd *text* is never an error; odd *parameters* are a 400)
    "search bad kind": Case("get", "/api/v1/search/?q=x&kind=chat"),
    "search page zero": Case("get", "/api/v1/search/?q=x&page=0"),
    "search page not a number": Case("get", "/api/v1/search/?q=x&page=two"),
    "search bad date": Case("get", "/api/v1/search/?q=x&created_after=today"),
    "search bad chat ulid": Case("get", "/api/v1/search/?q=x&chat=nope"),
}


def _fill(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**ids) if "{" in value else value
    if isinstance(value, list):
        return [_fill(item, ids) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, ids) for key, item in value.items()}
    return value


def _row_counts() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in (Chat, Run, Message, Observation, GlobalPattern, SyncMapping))


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_it_answers_hostile_input_with_a_4xx_error_and_writes_nothing(api: APIClient, make_run, append, session,
                                                                      case: Case) -> None:
    run = make_run()
    ids = {"chat": run.chat_id, "run": run.pk, "message": append(run, "hello")[0].pk, "session": session.pk}
    before = _row_counts()
    request = getattr(api, case.method)
    url = _fill(case.url, ids)
    headers = case.headers or {}
    if case.raw is not None:
        response = request(url, case.raw, content_type="application/json", **headers)
    elif case.method in ("get", "delete"):
        response = request(url, **headers)
    else:
        response = request(url, _fill(case.body, ids), format="json", **headers)
    assert_error_shape(response, case.status, case.code)
    assert _row_counts() == before
    chat = Chat.objects.get(pk=run.chat_id)
    assert (chat.version, chat.is_deleted) == (1, False)
