"""`POST /mcp/`: one JSON-RPC message per request, authenticated as the REST API authenticates."""

import json
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse
from django.http.request import split_domain_port, validate_host
from rest_framework.parsers import BaseParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from ralphsite.agents.mcp import tools  # noqa: F401  (registers the tools)
from ralphsite.agents.mcp.protocol import INVALID_REQUEST, Answer, RpcError, respond
from ralphsite.agents.mcp.registry import Toolbox
from ralphsite.agents.mcp.toolsets import requested_tools
from ralphsite.core.access import scope_bind
from ralphsite.core.api.permissions import ScopedTokenPermission, request_scope

# The headers the protocol reads (the 2026-07-28 transport mirrors body fields into them).
_HEADERS = {"mcp-protocol-version": "HTTP_MCP_PROTOCOL_VERSION", "mcp-method": "HTTP_MCP_METHOD",
            "mcp-name": "HTTP_MCP_NAME"}


@cache
def server_info() -> dict[str, str]:
    try:
        release = version("ralph-site")
    except PackageNotFoundError:  # running from a checkout that was never installed
        release = "0"
    return {"name": "ralph-site", "title": "Ralph Site", "version": release}


def _send(answer: Answer) -> HttpResponse:
    if answer.message is None:
        return HttpResponse(status=answer.status)
    return HttpResponse(json.dumps(answer.message, ensure_ascii=False, separators=(",", ":")),
                        content_type="application/json", status=answer.status)


def origin_allowed(request: Request) -> bool:
    """The transport's DNS-rebinding guard: a browser's `Origin` must be this server (a host it serves,
    or a trusted origin); clients that are not browsers send none."""
    origin = request.META.get("HTTP_ORIGIN")
    if origin is None or origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    domain, _port = split_domain_port(urlsplit(origin).netloc)
    allowed = settings.ALLOWED_HOSTS or ([".localhost", "127.0.0.1", "[::1]"] if settings.DEBUG else [])
    return bool(domain) and validate_host(domain, allowed)


class McpScopePermission(BasePermission):
    """The API's authentication, with its scope bound for the tools. Every MCP message is a POST, so
    what a token may write is checked per tool (`registry.run_tool`), not per HTTP method: a read
    token lists and calls the reading tools."""

    message = ScopedTokenPermission.message

    def has_permission(self, request: Request, view: Any) -> bool:
        scope = request_scope(request)
        if scope is None:
            return False
        scope_bind(scope)
        return True


class BodyLeftToProtocol(BaseParser):
    """Accepts any body without reading it: the JSON-RPC layer reads `request.body` itself (a parse error
    is its own answer). Declared so that what touches `request.POST` before the view (the CSRF check of
    an admin login) meets no 415 `unsupported_media_type`."""

    media_type = "*/*"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> dict[str, Any]:
        return {}


class McpView(APIView):
    """The MCP endpoint. GET (the handshake era's server-to-client stream) and DELETE (session end)
    answer 405: this server keeps no sessions and sends nothing unasked."""

    permission_classes = [McpScopePermission]
    parser_classes = [BodyLeftToProtocol]
    schema = None  # not a REST resource: the tools describe themselves through tools/list

    def handle_exception(self, exc: Exception) -> HttpResponse:
        """A refusal before any message is read (authentication, permission, throttling, method) keeps the
        API's status and headers, and its body is a JSON-RPC error, which MCP clients show: the HTTP status
        as the code (an application-defined one), the API's {code, message, details} as the data."""
        refusal = super().handle_exception(exc)
        body = refusal.data
        answer = RpcError(refusal.status_code, body["message"], data=body, status=refusal.status_code).answer(None)
        response = _send(answer)
        for header in ("WWW-Authenticate", "Retry-After"):
            if header in refusal:
                response[header] = refusal[header]
        return response

    def post(self, request: Request) -> HttpResponse:
        if not origin_allowed(request):
            return _send(RpcError(INVALID_REQUEST, "Origin not allowed.", status=403).answer(None))
        try:
            body = request.body
        except RequestDataTooBig:
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            return _send(RpcError(INVALID_REQUEST, f"The message is larger than {limit} bytes.", status=413)
                         .answer(None))
        try:
            names = requested_tools(request.query_params.get("tools"))
        except RpcError as refusal:
            return _send(refusal.answer(None))
        headers = {name: request.META[key] for name, key in _HEADERS.items() if key in request.META}
        return _send(respond(body, headers, Toolbox(request, names=names), server_info()))
