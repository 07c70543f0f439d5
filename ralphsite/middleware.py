"""Middleware of our own."""

import os
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.messages.middleware import MessageMiddleware
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.middleware import common
from django.utils.http import escape_leading_slashes
from whitenoise.middleware import WhiteNoiseMiddleware

from ralphsite.core.access import scope_unbound_during
from ralphsite.core.api.errors import payload_too_large_response

# Where agents call: the REST API and the MCP endpoint (`/mcp`, `/mcp/`).
AGENT_PREFIXES = ("/api/", "/mcp")


class PermanentRedirectKeepingMethod(HttpResponsePermanentRedirect):
    status_code = 308


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """Whitenoise, serving what `manage.py collectstatic` wrote into STATIC_ROOT.

    Before collectstatic has run (the tests, a server started by hand) there is no STATIC_ROOT and
    nothing collected to serve; whitenoise would warn `No directory at: …` each time it is set up (every
    test client), and the settings no longer create an empty folder to quiet it. `make run` collects
    first. Outside DEBUG whitenoise reads STATIC_ROOT once, when the middleware is set up; in DEBUG
    (autorefresh) it looks on every request, and never warns."""

    def add_files(self, root: Any, prefix: str | None = None) -> None:
        if not self.autorefresh and root == self.static_root and not os.path.isdir(root):
            return
        super().add_files(root, prefix)


class CommonMiddleware(common.CommonMiddleware):
    """Django's, adding a missing trailing slash by a 308, which keeps the method and the body: its 301
    turned `POST /api/v1/sessions` into a `GET` of the list at a client that follows redirects (a 200
    that created nothing), and in DEBUG it raised instead of redirecting."""

    response_redirect_class = PermanentRedirectKeepingMethod

    def get_full_path_with_slash(self, request: HttpRequest) -> str:
        return escape_leading_slashes(request.get_full_path(force_append_slash=True))


class AdminMessageMiddleware(MessageMiddleware):
    """Django's messages (the admin's one-time notices) for every page but the agents' endpoints.

    An API or MCP response never shows a message, and setting up the message storage (cookie and
    session backends) was measurable on every agent call.
    """

    def process_request(self, request: HttpRequest) -> None:
        if not request.path_info.startswith(AGENT_PREFIXES):
            super().process_request(request)


class ApiScopeMiddleware:
    """Every API or MCP request starts with no scope bound, and ends restoring what was bound before:
    the permission class binds the request's own, and nothing of one request's scope reaches the next
    request served by the same thread."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(AGENT_PREFIXES):
            return scope_unbound_during(self.get_response, request)
        return self.get_response(request)


class RequestBodyLimitMiddleware:
    """A body longer than the limit (RALPH_MAX_BODY_BYTES) is a 413 before anything reads it.

    Django checks the limit only where it reads the body itself (`request.body`, forms), where it
    raised a 500 through DRF; DRF's parsers read the stream with no limit at all. A chunked body
    arrives here with its length already known (`ralphsite.server.chunked_body`).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH")
        if length and length.isdigit() and int(length) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            # JSON on every path (/mcp/ and /admin/ too): a client learns the limit in one shape.
            return payload_too_large_response()
        return self.get_response(request)
class AdminContentSecurityPolicyMiddleware:
    """The admin's Content-Security-Policy (`RALPH_ADMIN_CSP`), the same on Django 5.2 and 6: it loads
    scripts, styles and images from this site only. Only the admin: the API answers JSON, and the
    API docs page (Swagger UI) runs a script of its own inline."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.prefix = "/admin/"

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path_info.startswith(self.prefix) and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = settings.RALPH_ADMIN_CSP
        return response
