"""MCP tests: the official `mcp` SDK client against the live test server, over real HTTP."""

import http.client
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import jsonschema
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
        self._output_schemas: dict[str, dict[str, Any]] = {}

    @property
    def protocol_version(self) -> str:
        return self.client.protocol_version

    def list_tools(self) -> list[Any]:
        return self.portal.call(self.client.list_tools).tools

    def result(self, name: str, **arguments: Any) -> tuple[bool, Any]:
        """(isError, the JSON its text holds) of one tools/call. A result's structuredContent is the same JSON
        and conforms to the tool's listed outputSchema (the SDK client checks it too); an error has none."""
        self.called.add(name)
        answer = self.portal.call(self.client.call_tool, name, arguments)
        [content] = answer.content
        payload = json.loads(content.text)
        if answer.is_error:
            assert answer.structured_content is None, answer
        else:
            assert answer.structured_content == payload
            jsonschema.Draft202012Validator(self.output_schema(name)).validate(payload)
        return bool(answer.is_error), payload

    def output_schema(self, name: str) -> dict[str, Any]:
        if name not in self._output_schemas:
            self._output_schemas.update({tool.name: tool.output_schema for tool in self.list_tools()})
        return self._output_schemas[name]

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
    """`with connect(mode=…, secret=…, scheme=…, tools=…) as agent:` an SDK client on the live server (by default
    with the test user's global token and every tool; `tools` asks for a tool set, `?tools=`)."""

    def make(*, mode: str = "auto", secret: str | None = None, scheme: str = "Token", tools: str | None = None) -> Any:
        url = mcp_url if tools is None else f"{mcp_url}?tools={tools}"
        return mcp_agent(url, secret or token.secret, mode=mode, scheme=scheme)

    return make


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


@pytest.fixture
def post(mcp_url: str, token: MintedToken) -> Callable[..., Reply]:
    """POST a raw body (a dict is sent as JSON) to /mcp/ with the test user's token, unless told otherwise."""
    parts = urlsplit(mcp_url)

    def send(body: Any, *, headers: dict[str, str] | None = None, method: str = "POST",
             path: str = parts.path, auth: str | None = f"Token {token.secret}") -> Reply:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                       **({"Authorization": auth} if auth else {}), **(headers or {})}
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            connection.request(method, path, body=payload if method == "POST" else None, headers=all_headers)
            response = connection.getresponse()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()

    return send
