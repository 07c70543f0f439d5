"""A conversation recorded over real HTTP: chat → run → messages, read back, searched, deleted, restored."""

import pytest

from tests.e2e.client import Agent

pytestmark = pytest.mark.django_db(transaction=True)

V1 = "/api/v1"


def search(agent: Agent, q: str, **params: str) -> dict:
    return agent.ok("GET", f"{V1}/search/", q=q, **params)


def test_it_records_searches_deletes_and_restores_a_conversation(agent: Agent) -> None:
    sid = agent.ok("POST", f"{V1}/sessions/", {"key": "e2e-chat"}, expect=201)["id"]
    chat = agent.ok("POST", f"{V1}/chats/", {"title": "Widget design", "tags": ["design", "widgets"],
                                               "session": sid, "worktree_id": "wt-1"}, expect=201)
    cid = chat["id"]
    assert chat["version"] == 1 and chat["session"] == sid and chat["is_deleted"] is False
    assert sorted(chat["tags"]) == ["design", "widgets"]
    assert [c["id"] for c in agent.ok("GET", f"{V1}/chats/", session=sid)["results"]] == [cid]

    run = agent.ok("POST", f"{V1}/runs/", {"chat": cid}, expect=201)
    rid = run["id"]
    assert run["chat"] == cid and run["sequence_number"] == 1 and run["status"] == "running"
    assert agent.ok("GET", f"{V1}/chats/{cid}/latest-run/")["id"] == rid

    # One message, then a bulk append of four; sequence numbers continue gap-free.
    first = agent.ok("POST", f"{V1}/runs/{rid}/messages/",
                     {"role": "user", "content": "Design a flange coupling for the widget."}, expect=201)
    assert first["sequence_number"] == 1 and first["run"] == rid
    bulk = agent.ok("POST", f"{V1}/runs/{rid}/messages/", [
        {"role": "assistant", "content": "Reading the spec.",
         "tool_calls": [{"id": "call-1", "name": "read_file", "arguments": {"path": "spec.md"}, "status": "pending"}]},
        {"role": "tool", "content": "spec: the coupling takes 12 bolts"},
        {"role": "assistant", "content": "The flange needs 12 bolts."},
        {"role": "user", "content": "Thanks, ship it."},
    ], expect=201)
    assert [m["sequence_number"] for m in bulk] == [2, 3, 4, 5]
    assert bulk[0]["tool_calls"][0]["name"] == "read_file"
    assert bulk[0]["tool_calls"][0]["arguments"] == {"path": "spec.md"}
    assert agent.ok("GET", f"{V1}/runs/{rid}/")["message_count"] == 5

    # Listed in sequence order through the cursor, two per page.
    listed = agent.all_pages(f"{V1}/messages/", run=rid, page_size=2)
    assert [m["sequence_number"] for m in listed] == [1, 2, 3, 4, 5]
    assert [m["id"] for m in listed] == [first["id"], *(m["id"] for m in bulk)]
    assert listed[0]["content"] == "Design a flange coupling for the widget."
    page = agent.ok("GET", f"{V1}/messages/", run=rid, page_size=2)
    assert "count" not in page and page["previous"] is None and "cursor=" in page["next"]

    # Full-text search finds the word in two messages of this chat.
    hits = search(agent, "flange", chat=cid)
    assert hits["count"] == 2
    assert {h["id"] for h in hits["results"]} == {first["id"], bulk[2]["id"]}
    assert all(h["kind"] == "message" and h["chat"] == cid and h["run"] == rid and h["session"] == sid
               for h in hits["results"])
    assert all("<mark>" in h["snippet"].lower() and "flange" in h["snippet"].lower() for h in hits["results"])
    assert search(agent, "flange", role="user")["count"] == 1
    assert search(agent, "nonexistentword")["count"] == 0

    # Versioned writes: a stale version is refused, never silently lost.
    renamed = agent.patch(f"{V1}/chats/{cid}/", {"title": "Widget coupling design", "version": 1})
    assert renamed.status == 200 and renamed.json()["version"] == 2 and renamed.headers["etag"] == '"2"'
    stale_body = agent.patch(f"{V1}/chats/{cid}/", {"title": "lost update", "version": 1})
    assert stale_body.status == 409, stale_body.body
    stale_header = agent.patch(f"{V1}/chats/{cid}/", {"title": "lost update"}, headers={"If-Match": '"1"'})
    assert stale_header.status == 412 and stale_header.json()["code"] == "precondition_failed"
    assert agent.ok("GET", f"{V1}/chats/{cid}/")["title"] == "Widget coupling design"

    # Soft delete: gone from lists, details and search; readable on request; restorable.
    etag = agent.get(f"{V1}/chats/{cid}/").headers["etag"]
    assert etag == '"2"'
    stale = agent.delete(f"{V1}/chats/{cid}/", headers={"If-Match": '"7"'})
    assert stale.status == 412 and stale.json()["code"] == "precondition_failed"
    assert agent.delete(f"{V1}/chats/{cid}/", headers={"If-Match": etag}).status == 204
    gone = agent.get(f"{V1}/chats/{cid}/")
    assert gone.status == 404 and gone.json()["code"] == "ACODE-CONV-DATA-001"
    assert agent.ok("GET", f"{V1}/chats/", session=sid)["results"] == []
    assert agent.ok("GET", f"{V1}/messages/", run=rid)["results"] == []
    assert search(agent, "flange")["count"] == 0
    tombstone = agent.ok("GET", f"{V1}/chats/{cid}/", include_deleted="true")
    assert tombstone["is_deleted"] is True and tombstone["deleted_at"] is not None
    assert agent.post(f"{V1}/runs/{rid}/messages/", {"role": "user", "content": "late"}).status == 404

    restored = agent.ok("POST", f"{V1}/chats/{cid}/restore/")
    assert restored["is_deleted"] is False and restored["deleted_at"] is None
    assert restored["version"] > tombstone["version"]
    assert [m["sequence_number"] for m in agent.all_pages(f"{V1}/messages/", run=rid)] == [1, 2, 3, 4, 5]
    assert search(agent, "flange", chat=cid)["count"] == 2
