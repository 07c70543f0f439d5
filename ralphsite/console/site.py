"""The admin site people browse: its titles, and the dashboard as its index page, live."""

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.template.loader import render_to_string
from django.urls import URLPattern, URLResolver, path

from ralphsite.console.dashboard import dashboard_context, dashboard_etag


class RalphAdminSite(admin.AdminSite):
    site_header = "Ralph Site"
    site_title = "Ralph Site"
    index_title = "Sessions, conversations and the ledger"
    # The site has no public front page: the admin is what people browse.
    site_url = None
    # The dashboard (running sessions, what needs attention, usage charts) above the usual app list;
    # app index pages keep Django's own template.
    index_template = "admin/dashboard.html"

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        # How often a live page (the dashboard, a session's console) asks for news: live.js reads it.
        return {**super().each_context(request), "live_poll_ms": settings.RALPH_CONSOLE_POLL_MS}

    def get_urls(self) -> list[URLPattern | URLResolver]:
        return [path("live/", self.admin_view(self.live_view), name="dashboard_live"), *super().get_urls()]

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        etag = dashboard_etag(request)  # before the reads: a change between them is fetched by the next poll
        return super().index(request, {**dashboard_context(request), "dashboard_etag": etag,
                                       **(extra_context or {})})

    def live_view(self, request: HttpRequest) -> HttpResponse:
        """The dashboard's poll: its body as the page draws it now, or 304 while nothing changed."""
        etag = dashboard_etag(request)
        if etag in request.headers.get("If-None-Match", ""):
            response: HttpResponse = HttpResponseNotModified()
        else:
            response = JsonResponse({"regions": {"dashboard": render_to_string(
                "admin/dashboard_body.html", dashboard_context(request), request)}})
        response["ETag"] = etag  # admin_view adds Cache-Control: no-store (no cache but the page's own)
        return response
