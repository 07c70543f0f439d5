from typing import Any

from django.urls import URLPattern, URLResolver, include, path, re_path
from rest_framework.routers import DefaultRouter, SimpleRouter

# One path segment naming a row: an id or a key, dots included (`plan-1.2`). DRF stops at a dot for its
# format suffixes (`.json`), which this API does not serve.
PATH_VALUE = "[^/]+"


class ResourceRouter(SimpleRouter):
    """One resource's routes; a viewset with `detail_routes_only` (a nested resource: one row named
    within its parent) gets no list or create route. A row's segment is `PATH_VALUE` unless the
    viewset declares its own `lookup_value_regex`."""

    def get_lookup_regex(self, viewset: type, lookup_prefix: str = "") -> str:
        name = getattr(viewset, "lookup_url_kwarg", None) or getattr(viewset, "lookup_field", "pk")
        return f"(?P<{lookup_prefix}{name}>{getattr(viewset, 'lookup_value_regex', PATH_VALUE)})"

    def get_routes(self, viewset: type) -> list[Any]:
        routes = super().get_routes(viewset)
        return [route for route in routes if route.detail] if getattr(viewset, "detail_routes_only", False) else routes


class RalphRouter(ResourceRouter, DefaultRouter):
    """Each app builds one of these in its api/urls.py; the project merges their registries.

    URLs are grouped by resource: `^chats/` is one include holding that resource's routes. Format
    suffixes are off: agents ask for JSON by `Accept`, and JSON is the only renderer.
    """

    include_format_suffixes = False

    def get_urls(self) -> list[URLPattern | URLResolver]:
        urls: list[URLPattern | URLResolver] = []
        for prefix, viewset, basename in self.registry:
            resource = ResourceRouter(trailing_slash=bool(self.trailing_slash))
            # An empty prefix makes SimpleRouter build the routes relative to the include below.
            resource.register("", viewset, basename=basename)
            # A nested resource's prefix is a regular expression naming its parent (`sessions/(?P<session>…)/tasks`).
            urls.append(re_path(f"^{prefix}/", include(resource.urls)) if "(?P<" in prefix
                        else path(f"{prefix}/", include(resource.urls)))
        if self.include_root_view:
            urls.append(path("", self.get_api_root_view(api_urls=urls), name=self.root_view_name))
        return urls
