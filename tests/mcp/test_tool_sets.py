"""`/mcp/?tools=<set>`: an agent's context carries only its role's tools (issue #30 §5)."""

import json
from collections.abc import Callable
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from ralphsite.agents.mcp.tools import TOOLS
from ralphsite.agents.mcp.toolsets import TOOL_SETS
from tests.mcp.conftest import Reply
from tests.mcp.test_protocol import rpc
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)

ROLES = ("orchestrator", "planner", "questioner", "executor", "reviewer")


def listed_bytes(names: set[str]) -> int:
    """What a set's tools/list entries weigh on the wire (compact JSON, as the server sends them)."""
    return len(json.dumps([TOOLS[name].definition(session_argument=True) for name in names],
                          separators=(",", ":"), ensure_ascii=False).encode())


def test_every_tool_is_in_a_role_set_and_every_set_names_real_tools() -> None:
    assert set().union(*TOOL_SETS.values()) <= set(TOOLS)
    assert set().union(*(TOOL_SETS[role] for role in ROLES)) | TOOL_SETS["memory"] == set(TOOLS)
    whole = listed_bytes(set(TOOLS))
    for name, names in TOOL_SETS.items():
        assert listed_bytes(set(names)) < whole * 0.6, name


@pytest.mark.parametrize("tools", [*TOOL_SETS, "executor,memory"])
def test_a_set_lists_exactly_its_tools(connect: Callable[..., Any], tools: str) -> None:
    with connect(tools=tools) as agent:
        listed = [tool.name for tool in agent.list_tools()]
    expected = set().union(*(TOOL_SETS[name] for name in tools.split(",")))
    assert set(listed) == expected
    assert listed == [name for name in TOOLS if name in expected]  # the table's order


def test_all_or_no_set_lists_every_tool(connect: Callable[..., Any]) -> None:
    for tools in (None, "all"):
        with connect(tools=tools) as agent:
            assert len(agent.list_tools()) == len(TOOLS)


def test_a_tool_outside_the_set_is_not_callable(connect: Callable[..., Any]) -> None:
    session = make_session(key="sets")
    make_task(session, "task-1")
    with connect(tools="reviewer") as agent:
        assert agent.ok("get_task", session="sets", task="task-1")["key"] == "task-1"
        with pytest.raises(MCPError, match="not in the tool set"):
            agent.portal.call(agent.client.call_tool, "claim_task", {"session": "sets", "agent": "a"})


def test_an_unknown_set_is_a_400_naming_the_known_ones(post: Callable[..., Reply], mcp_url: str) -> None:
    reply = post(rpc("tools/list"), path="/mcp/?tools=executor,janitor")
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == -32600 and "janitor" in error["message"]
    assert error["data"] == {"unknown": ["janitor"], "known": [*TOOL_SETS, "all"]}
