"""Scoped tokens on /mcp/: a session token is seed 000's SessionTools.CreateTools(db, sessionId) (every tool
acts on its session, none takes a `session`), read tokens get the reading tools, project tokens see their
project's sessions only, agent-bound tokens act as their agent."""

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from conversations_app.models import Observation
from ralphsite.core.models import TokenPermission, TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session, Task
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)

READING_TOOLS = {"get_plan", "get_task", "get_progress", "get_questions", "get_feedback", "get_waves", "get_state",
                 "search_memory", "get_session"}


@pytest.fixture
def sessions() -> tuple[Session, Session]:
    mine = make_session(key="mine", user_request="Build the widget service", project_path="/srv/widgets")
    other = make_session(key="other", project_path="/srv/gadgets")
    for session in (mine, other):
        make_task(session, "task-1", title=f"Schema of {session.key}")
        Observation.objects.create(session=session, type="note", content=f"PostgreSQL chosen for {session.key}")
    return mine, other


def test_a_session_token_acts_on_its_session_without_naming_it(connect: Callable[..., Any], user,
                                                                sessions: tuple[Session, Session]) -> None:
    mine, other = sessions
    minted = api_token_create(user=user, scope=TokenScope.SESSION, session_id=mine.id, agent="exec-1")
    with connect(secret=minted.secret, scheme="Bearer", mode="legacy") as agent:
        listed = {tool.name: tool for tool in agent.list_tools()}
        assert "record_pattern" not in listed  # global patterns are written by global tokens only
        assert "create_session" not in listed  # a session token creates no session
        assert all("session" not in tool.input_schema["properties"] for tool in listed.values())
        assert "Every tool acts on session mine (Build the widget service)." in \
            agent.client.session.initialize_result.instructions

        assert agent.ok("get_task", task="task-1")["title"] == "Schema of mine"
        claimed = agent.ok("claim_task")["task"]  # the agent comes from the token
        assert (claimed["key"], claimed["claimed_by"]) == ("task-1", "exec-1")
        assert Task.objects.get(session=mine).claimed_by == "exec-1"
        assert Task.objects.get(session=other).claimed_by == ""
        mismatch = agent.error("heartbeat_task", task="task-1", agent="exec-2")
        assert mismatch["code"] == "agent_mismatch"
        assert agent.error("get_task", session="other", task="task-1")["details"] == {
            "session": ["Unknown argument; allowed: task."]}
        found = agent.ok("search_memory", q="PostgreSQL")
        assert [hit["session"] for hit in found["hits"]] == [mine.id]
        refused = agent.error("record_pattern", pattern_type="best_practice", description="x")
        assert refused == {"code": "permission_denied", "message": "Only global tokens change global patterns."}


def test_a_read_token_lists_and_calls_the_reading_tools_only(connect: Callable[..., Any], user,
                                                              sessions: tuple[Session, Session]) -> None:
    mine, _other = sessions
    minted = api_token_create(user=user, scope=TokenScope.SESSION, session_id=mine.id,
                              permission=TokenPermission.READ)
    with connect(secret=minted.secret) as agent:
        assert {tool.name for tool in agent.list_tools()} == READING_TOOLS
        assert agent.ok("get_progress")["total"] == 1
        assert agent.error("set_state", key="phase", value="x") == {
            "code": "permission_denied", "message": "This token is read-only."}
        assert agent.error("claim_task", agent="exec-1")["code"] == "permission_denied"
    assert Task.objects.get(session=mine).status == "not_started"


def test_a_project_token_names_sessions_of_its_project_only(connect: Callable[..., Any], user,
                                                            sessions: tuple[Session, Session]) -> None:
    minted = api_token_create(user=user, scope=TokenScope.PROJECT, project_path="/srv/widgets")
    with connect(secret=minted.secret) as agent:
        assert all("session" in tool.input_schema.get("required", []) for tool in agent.list_tools()
                   if tool.name not in ("search_memory", "create_session"))
        assert agent.ok("get_progress", session="mine")["total"] == 1
        # Another project's session is answered as one that does not exist: no existence leak.
        assert agent.error("get_progress", session="other") == {
            "code": "not_found", "message": "No session 'other' here.", "details": {"session": "other"}}
        assert agent.error("set_state", session="other", key="k", value=1)["code"] == "not_found"
        assert agent.ok("search_memory", q="PostgreSQL")["count"] == 1


def test_the_rest_search_sees_only_the_tokens_sessions(user, sessions: tuple[Session, Session]) -> None:
    mine, _other = sessions
    minted = api_token_create(user=user, scope=TokenScope.SESSION, session_id=mine.id)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {minted.secret}")
    page = client.get("/api/v1/search/", {"q": "PostgreSQL"}).json()
    assert [hit["session"] for hit in page["results"]] == [mine.id]
