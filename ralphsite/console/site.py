"""The admin site people browse: its titles, and the dashboard as its index page."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from ralphsite.console.dashboard import dashboard_context


class RalphAdminSite(admin.AdminSite):
    site_header = "Ralph Site"
    site_title = "Ralph Site"
    index_title = "Sessions, conversations and the ledger"
    # The site has no public front page: the admin is what people browse.
    site_url = None
    # The dashboard (running sessions, what needs attention, usage charts) above the usual app list;
    # app index pages keep Django's own template.
    index_template = "admin/dashboard.html"

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return super().index(request, {**dashboard_context(request), **(extra_context or {})})
