"""The transport and JSON-RPC layer of `/mcp/`, over raw HTTP and through the SDK client: both protocol eras,
authentication, and every kind of malformed message."""

from collections.abc import Callable
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from ralphsite.agents.mcp.protocol import HANDSHAKE_VERSIONS, SUPPORTED_VERSIONS
from ralphsite.agents.mcp.tools import TOOLS
from tests.mcp.conftest import Reply

pytestmark = pytest.mark.django_db(transaction=True)

MODERN = "2026-07-28"
CAPABILITIES = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def rpc(method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def modern(method: str, params: dict[str, Any] | None = None, *, name: str | None = None) -> dict[str, Any]:
    """A 2026-07-28 request and the headers that mirror it."""
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
    return {"body": rpc(method, {**(params or {}), "_meta": dict(CAPABILITIES)}), "headers": headers}


# -- the handshake era -------------------------------------------------------------------------------

@pytest.mark.parametrize("requested", HANDSHAKE_VERSIONS)
def test_initialize_agrees_on_the_clients_version(post: Callable[..., Reply], requested: str) -> None:
    reply = post(rpc("initialize", {"protocolVersion": requested, "capabilities": {},
                                    "clientInfo": {"name": "raw", "version": "1"}}))
    assert reply.status == 200 and reply.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in reply.headers  # stateless: no session is minted
    result = reply.json()["result"]
    assert result["protocolVersion"] == requested
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "ralph-site" and "task-1" in result["instructions"]


def test_initialize_offers_the_newest_handshake_version_for_one_it_does_not_speak(post: Callable[..., Reply]) -> None:
    for requested in ("2024-11-05", MODERN, "1999-01-01"):
        reply = post(rpc("initialize", {"protocolVersion": requested, "capabilities": {}}))
        assert reply.json()["result"]["protocolVersion"] == HANDSHAKE_VERSIONS[-1]


def test_notifications_and_responses_are_accepted_without_an_answer(post: Callable[..., Reply]) -> None:
    for message in ({"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
                    {"jsonrpc": "2.0", "id": 7, "result": {}}):
        reply = post(message, headers={"MCP-Protocol-Version": "2025-06-18"})
        assert (reply.status, reply.body) == (202, b"")


def test_ping_and_tools_list_answer_in_the_handshake_era(post: Callable[..., Reply]) -> None:
    assert post(rpc("ping", request_id="p-1")).json() == {"jsonrpc": "2.0", "id": "p-1", "result": {}}
    listed = post(rpc("tools/list"), headers={"MCP-Protocol-Version": "2025-11-25"}).json()["result"]
    assert "resultType" not in listed and "ttlMs" not in listed and len(listed["tools"]) == len(TOOLS)


def test_an_unsupported_protocol_version_header_is_a_400(post: Callable[..., Reply]) -> None:
    reply = post(rpc("tools/list"), headers={"MCP-Protocol-Version": "2024-01-01"})
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == -32600 and error["data"]["supported"] == list(SUPPORTED_VERSIONS)


def test_an_unknown_method_is_method_not_found(post: Callable[..., Reply]) -> None:
    reply = post(rpc("resources/list"))
    assert reply.status == 200
    assert reply.json() == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601,
                                                                 "message": "Method not found: resources/list"}}


# -- 2026-07-28 ---------------------------------------------------------------------------------------

def test_server_discover_names_the_versions_capabilities_and_cache_hints(post: Callable[..., Reply]) -> None:
    reply = post(**modern("server/discover"))
    assert reply.status == 200
    result = reply.json()["result"]
    assert result["resultType"] == "complete" and result["supportedVersions"] == list(SUPPORTED_VERSIONS)
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "ralph-site"
    assert result["ttlMs"] > 0 and result["cacheScope"] == "private"


def test_modern_requests_are_checked_against_their_headers(post: Callable[..., Reply]) -> None:
    listed = post(**modern("tools/list")).json()["result"]
    assert listed["resultType"] == "complete" and listed["cacheScope"] == "private"
    assert len(listed["tools"]) == len(TOOLS)

    request = modern("tools/call", {"name": "get_plan", "arguments": {"session": "none"}}, name="get_waves")
    mismatch = post(**request)
    assert mismatch.status == 400 and mismatch.json()["error"]["code"] == -32020
    without_header = modern("tools/list")
    del without_header["headers"]["Mcp-Method"]
    assert post(**without_header).json()["error"]["code"] == -32020
    encoded = modern("tools/call", {"name": "get_plan", "arguments": {"session": "none"}},
                     name="=?base64?Z2V0X3BsYW4=?=")
    assert post(**encoded).json()["result"]["isError"] is True  # the name matched; the session does not exist


def test_modern_version_and_meta_errors(post: Callable[..., Reply]) -> None:
    request = modern("tools/list")
    request["body"]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    request["headers"]["MCP-Protocol-Version"] = "2099-01-01"
    unsupported = post(**request)
    assert unsupported.status == 400
    assert unsupported.json()["error"] == {"code": -32022, "message": "Unsupported protocol version", "data": {
        "supported": list(SUPPORTED_VERSIONS), "requested": "2099-01-01"}}

    no_capabilities = modern("tools/list")
    del no_capabilities["body"]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    missing = post(**no_capabilities)
    assert missing.status == 400 and missing.json()["error"]["code"] == -32602

    for method in ("ping", "initialize", "prompts/list"):  # no handshake and no ping in this revision
        reply = post(**modern(method))
        assert reply.status == 404 and reply.json()["error"]["code"] == -32601


# -- malformed messages and HTTP ------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "code"), [
    (b"{not json", -32700),
    (b"[" * 100_000, -32700),
    (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
    (b'"just a string"', -32600),
    (b'{"id": 1, "method": "ping"}', -32600),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1}', -32600),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}', -32602),
])
def test_malformed_json_rpc_is_a_json_rpc_error(post: Callable[..., Reply], body: bytes, code: int) -> None:
    reply = post(body)
    assert reply.status == 400
    answer = reply.json()
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == code


@pytest.mark.parametrize(("params", "message"), [
    ({"arguments": {}}, "Invalid params: tools/call needs the tool's name."),
    ({"name": "get_plan", "arguments": [1]}, "Invalid params: arguments must be an object."),
    ({"name": "no_such_tool"}, "Unknown tool: no_such_tool"),
])
def test_a_bad_tools_call_is_invalid_params(post: Callable[..., Reply], params: dict[str, Any],
                                            message: str) -> None:
    assert post(rpc("tools/call", params)).json()["error"] == {"code": -32602, "message": message}


def test_get_and_delete_are_405_and_the_path_needs_no_slash(post: Callable[..., Reply]) -> None:
    for method in ("GET", "DELETE"):
        reply = post(b"", method=method)
        assert reply.status == 405 and "POST" in reply.headers["allow"]
    assert post(rpc("ping"), path="/mcp").json()["result"] == {}


def test_authentication_is_the_apis_and_its_refusal_a_json_rpc_error(post: Callable[..., Reply]) -> None:
    missing = post(rpc("tools/list"), auth=None)
    assert missing.status == 401 and missing.headers["www-authenticate"] == "Token"
    assert missing.json()["error"]["data"]["code"] == "not_authenticated"
    wrong = post(rpc("tools/list"), auth="Token not-a-token")
    assert wrong.status == 401 and wrong.json() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": 401, "message": "Invalid token.",
        "data": {"code": "not_authenticated", "message": "Invalid token.", "details": {}}}}
    get = post(b"", method="GET", auth=None)
    assert get.status == 401  # authentication comes first, as on every API route


def test_a_foreign_origin_is_refused(post: Callable[..., Reply], live_server) -> None:
    refused = post(rpc("ping"), headers={"Origin": "http://evil.example"})
    assert refused.status == 403 and refused.json()["error"]["code"] == -32600
    assert post(rpc("ping"), headers={"Origin": live_server.url}).status == 200


# -- the SDK client in both eras ------------------------------------------------------------------------

def test_the_sdk_client_speaks_2026_by_default_and_the_handshake_when_asked(connect: Callable[..., Any]) -> None:
    with connect() as agent:
        assert agent.protocol_version == MODERN
        assert agent.client.server_info.name == "ralph-site"
        with pytest.raises(MCPError, match="Unknown tool: nope"):
            agent.portal.call(agent.client.call_tool, "nope", {})
    with connect(mode="legacy") as agent:
        assert agent.protocol_version == HANDSHAKE_VERSIONS[-1]
        with pytest.raises(MCPError, match="Unknown tool"):
            agent.portal.call(agent.client.call_tool, "nope", {})


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_with_a_wrong_token_is_told_why(connect: Callable[..., Any], mode: str) -> None:
    with pytest.raises(ExceptionGroup) as failure, connect(secret="not-a-token", mode=mode):
        pass
    refusal = failure.value
    while isinstance(refusal, ExceptionGroup):
        [refusal] = refusal.exceptions
    assert isinstance(refusal, MCPError) and (refusal.error.code, refusal.error.message) == (401, "Invalid token.")
