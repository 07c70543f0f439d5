"""MCP tests: the official `mcp` SDK client against the live test server, over real HTTP."""

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from ralphsite.tokens.services import MintedToken


class McpAgent:
    """A connected SDK client driven from synchronous test code (its event loop runs in a portal thread,
    so the test can read the database between calls). Remembers which tools it called."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self.portal, self.client = portal, client
        self.called: set[str] = set()

    @property
    def protocol_version(self) -> str:
        return self.client.protocol_version

    def list_tools(self) -> list[Any]:
        return self.portal.call(self.client.list_tools).tools

    def result(self, name: str, **arguments: Any) -> tuple[bool, Any]:
        """(isError, the JSON its text holds) of one tools/call."""
        self.called.add(name)
        answer = self.portal.call(self.client.call_tool, name, arguments)
        [content] = answer.content
        return bool(answer.is_error), json.loads(content.text)

    def ok(self, name: str, **arguments: Any) -> Any:
        is_error, payload = self.result(name, **arguments)
        assert not is_error, f"{name} failed: {payload}"
        return payload

    def error(self, name: str, **arguments: Any) -> dict[str, Any]:
        is_error, payload = self.result(name, **arguments)
        assert is_error, f"{name} succeeded: {payload}"
        return payload


@contextmanager
def mcp_agent(url: str, token: str, *, mode: str = "auto", scheme: str = "Token") -> Iterator[McpAgent]:
    """`mode`: "auto" (the SDK's default: server/discover, 2026-07-28) or "legacy" (initialize)."""
    with start_blocking_portal() as portal:
        http = create_mcp_http_client(headers={"Authorization": f"{scheme} {token}"})
        with portal.wrap_async_context_manager(http) as http_client:
            client = Client(streamable_http_client(url, http_client=http_client), mode=mode)
            with portal.wrap_async_context_manager(client) as connected:
                yield McpAgent(portal, connected)


@pytest.fixture
def mcp_url(live_server) -> str:
    return f"{live_server.url}/mcp/"


@pytest.fixture
def connect(mcp_url: str, token: MintedToken) -> Callable[..., Any]:
    """`with connect(mode=…, secret=…, scheme=…) as agent:` an SDK client on the live server (by default with
    the test user's global token)."""

    def make(*, mode: str = "auto", secret: str | None = None, scheme: str = "Token") -> Any:
        return mcp_agent(mcp_url, secret or token.secret, mode=mode, scheme=scheme)

    return make
