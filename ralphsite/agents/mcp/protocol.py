"""The Model Context Protocol's JSON-RPC layer for a tools-only server over Streamable HTTP.

Both eras of the protocol are served on one endpoint, statelessly (every POST stands alone, no
`Mcp-Session-Id` is minted, answers are `application/json`, never SSE):

* handshake era (2025-03-26, 2025-06-18, 2025-11-25): `initialize` negotiates a version;
  `notifications/initialized` is accepted; `ping`, `tools/list`, `tools/call`;
* 2026-07-28 (per-request `_meta`, no handshake): `server/discover`, `tools/list`, `tools/call`, with
  the transport's header checks (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), `resultType` and
  cache hints on results.

A request carrying `io.modelcontextprotocol/protocolVersion` in its `_meta` (or `server/discover`)
is served by the 2026-07-28 rules; anything else by the handshake era's. The official Python SDK
client probes with `server/discover` and falls back to `initialize` on any other answer.
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = HANDSHAKE_VERSIONS + MODERN_VERSIONS
# What a handshake-era request without `MCP-Protocol-Version` speaks (the header came with 2025-06-18).
HEADERLESS_VERSION = "2025-03-26"

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION = -32020, -32022

# How long a client may reuse `tools/list` and `server/discover` (2026-07-28 cache hints): tools change
# only with a new release; "private" because the list depends on the caller's token.
CACHE_HINTS = {"ttlMs": 3_600_000, "cacheScope": "private"}


class Toolbox(Protocol):
    """The tools as one caller (one token) sees them."""

    instructions: str

    def definitions(self) -> list[dict[str, Any]]: ...

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


@dataclass
class Answer:
    """What the HTTP layer sends: a status and a JSON-RPC message, or no body (202)."""

    status: int
    message: dict[str, Any] | None = None


class RpcError(Exception):
    def __init__(self, code: int, message: str, *, data: Any = None, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.data, self.status = code, message, data, status

    def answer(self, request_id: Any) -> Answer:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return Answer(self.status, {"jsonrpc": "2.0", "id": request_id, "error": error})


@dataclass
class Request:
    """One JSON-RPC request, read by the era's rules."""

    id: str | int
    method: str
    params: dict[str, Any]
    version: str
    modern: bool


def respond(body: bytes, headers: Mapping[str, str], toolbox: Toolbox, server_info: dict[str, str]) -> Answer:
    """Answer one POSTed JSON-RPC message. `headers` are the HTTP headers, keys lower-case."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as error:
        return RpcError(PARSE_ERROR, f"Parse error: {error}", status=400).answer(None)
    if isinstance(message, list):
        return RpcError(INVALID_REQUEST, "Batches are not supported: send one message per POST.",
                        status=400).answer(None)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return RpcError(INVALID_REQUEST, 'Invalid Request: a JSON-RPC 2.0 object is expected ("jsonrpc": "2.0").',
                        status=400).answer(None)
    if "method" not in message:
        if "result" in message or "error" in message:
            return Answer(202)  # a response to a server request; this server sends none, so nothing to do
        return RpcError(INVALID_REQUEST, "Invalid Request: no method.", status=400).answer(_id_of(message))
    if "id" not in message:
        return Answer(202)  # a notification (notifications/initialized, …): accepted, never answered
    request_id = message["id"]
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return RpcError(INVALID_REQUEST, "Invalid Request: the id must be a string or an integer.",
                        status=400).answer(None)
    try:
        request = _read(message, headers)
        result = _dispatch(request, toolbox, server_info)
    except RpcError as error:
        return error.answer(request_id)
    if request.modern:
        result = {"resultType": "complete", **result, "_meta": {META_SERVER_INFO: server_info}}
    return Answer(200, {"jsonrpc": "2.0", "id": request_id, "result": result})


def _id_of(message: dict[str, Any]) -> Any:
    request_id = message.get("id")
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def _read(message: dict[str, Any], headers: Mapping[str, str]) -> Request:
    method, params = message["method"], message.get("params", {})
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, "Invalid Request: the method must be a string.", status=400)
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object.", status=400)
    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    header_version = headers.get("mcp-protocol-version")
    if META_VERSION in meta or method == "server/discover":
        version = _modern_checks(method, params, meta, headers)
        return Request(message["id"], method, params, version, modern=True)
    version = header_version or HEADERLESS_VERSION
    if method != "initialize" and version not in HANDSHAKE_VERSIONS:
        raise RpcError(INVALID_REQUEST, f"Unsupported MCP-Protocol-Version {version!r}; this server speaks "
                       f"{', '.join(SUPPORTED_VERSIONS)}.", data={"supported": list(SUPPORTED_VERSIONS),
                                                                  "requested": version}, status=400)
    return Request(message["id"], method, params, version, modern=False)


def _modern_checks(method: str, params: dict[str, Any], meta: dict[str, Any], headers: Mapping[str, str]) -> str:
    """2026-07-28: the request's `_meta` and the transport headers that mirror it."""
    version = meta.get(META_VERSION)
    if not isinstance(version, str) or META_CAPABILITIES not in meta:
        raise RpcError(INVALID_PARAMS, f"Invalid params: _meta needs {META_VERSION} and {META_CAPABILITIES}.",
                       status=400)
    if version not in MODERN_VERSIONS:
        raise RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                       data={"supported": list(SUPPORTED_VERSIONS), "requested": version}, status=400)
    mirrored = {"mcp-protocol-version": version, "mcp-method": method}
    if method == "tools/call":
        mirrored["mcp-name"] = params.get("name")
    for header, expected in mirrored.items():
        sent = _decoded_header(headers.get(header))
        if sent != expected:
            raise RpcError(HEADER_MISMATCH, f"Header mismatch: {header} is {sent!r}, the body says {expected!r}.",
                           status=400)
    return version


def _decoded_header(value: str | None) -> str | None:
    """A header value, its `=?base64?…?=` form decoded (for names that are not plain ASCII)."""
    if value is not None and value.startswith("=?base64?") and value.endswith("?="):
        import base64
        import binascii

        try:
            return base64.b64decode(value[9:-2], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


def _dispatch(request: Request, toolbox: Toolbox, server_info: dict[str, str]) -> dict[str, Any]:
    handlers: dict[str, Callable[[], dict[str, Any]]] = {
        "tools/list": lambda: {"tools": toolbox.definitions(), **(CACHE_HINTS if request.modern else {})},
        "tools/call": lambda: _call_tool(request.params, toolbox),
    }
    if request.modern:
        handlers["server/discover"] = lambda: {
            "supportedVersions": list(SUPPORTED_VERSIONS), "capabilities": {"tools": {"listChanged": False}},
            "instructions": toolbox.instructions, **CACHE_HINTS}
    else:
        handlers["initialize"] = lambda: _initialize(request.params, toolbox, server_info)
        handlers["ping"] = dict
    handler = handlers.get(request.method)
    if handler is None:
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}", status=404 if request.modern else 200)
    return handler()


def _initialize(params: dict[str, Any], toolbox: Toolbox, server_info: dict[str, str]) -> dict[str, Any]:
    """The handshake: the client's version when this server speaks it, else the newest handshake version
    (the client then decides whether it can continue). Nothing is kept: the server stays stateless."""
    requested = params.get("protocolVersion")
    version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {"protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": server_info, "instructions": toolbox.instructions}


def _call_tool(params: dict[str, Any], toolbox: Toolbox) -> dict[str, Any]:
    name, arguments = params.get("name"), params.get("arguments", {})
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: tools/call needs the tool's name.")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: arguments must be an object.")
    return toolbox.call(name, arguments)
