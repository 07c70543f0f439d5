from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularSwaggerView

from ralphsite.agents.mcp.views import McpView
from ralphsite.core.api.schema_view import CachedSchemaView
from ralphsite.views import healthz

urlpatterns = [
    # Agents call /api/v1/ on every step: first, so it is the first pattern tried. People land on the admin.
    path("api/v1/", include("ralphsite.api_urls")),
    # MCP clients are configured with a URL by hand: /mcp answers as /mcp/ (a redirect would lose the POST).
    re_path(r"^mcp/?$", McpView.as_view(), name="mcp"),
    path("", RedirectView.as_view(pattern_name="admin:index"), name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/schema/", CachedSchemaView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
]

handler400 = "ralphsite.views.bad_request"
handler404 = "ralphsite.views.not_found"
handler500 = "ralphsite.views.internal_error"
