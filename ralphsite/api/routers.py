"""The API's routers: one include per resource, resolved by its first path segment.

Fast path `resolver` (`ralphsite.db.fast_paths`): `ResourceResolver` picks a resource's include with a
dict lookup. With it off, Django's URLResolver tries the includes in order. Measured gain: GAINS_RESOLVER.
Private Django names it touches: `RoutePattern._route`, `URLResolver.url_patterns`, `default_kwargs`.
"""

from typing import Any

from django.urls import URLPattern, URLResolver, include, path, re_path
from django.urls.resolvers import ResolverMatch, RoutePattern
from rest_framework.routers import DefaultRouter, SimpleRouter

from ralphsite.db.fast_paths import fast_paths_on


class ResourceRouter(SimpleRouter):
    """One resource's routes; a viewset with `detail_routes_only` (a nested resource: one row named
    within its parent) gets no list or create route."""

    def get_routes(self, viewset: type) -> list[Any]:
        routes = super().get_routes(viewset)
        return [route for route in routes if route.detail] if getattr(viewset, "detail_routes_only", False) else routes


class RalphRouter(ResourceRouter, DefaultRouter):
    """Each app builds one of these in its api/urls.py; the project merges their registries.

    URLs are grouped by resource: `^chats/` is one include holding that resource's routes, so a
    request only ever tries its own resource's few routes (see `ResourceResolver`). Format
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


class ResourceResolver(URLResolver):
    """An include that picks its sub-pattern by the path's first segment, with a dict lookup (a fast
    path, `ralphsite.db.fast_paths`; it reads the private `RoutePattern._route`).

    Django tries an include's patterns in order, and every include that does not match raises
    and records a Resolver404: with 47 resources, resolving `/api/v1/stats/…` cost more than the
    request's SQL. Patterns whose route is one literal segment (`chats/`) are indexed by it;
    any other pattern (the API root, a route with a converter) is kept, in order, beside every
    candidate. Resolution itself stays Django's: it runs over the candidates only, and a miss
    falls back to the full list so a 404 reports what Django would.
    """

    def resolve(self, path: str) -> ResolverMatch:
        path = str(path)
        match = self.pattern.match(path)
        if match:
            head = match[0].split("/", 1)[0]
            narrow = self._narrow_resolvers.get(head)
            if narrow is not None:
                return narrow.resolve(path)
        return super().resolve(path)

    @property
    def _narrow_resolvers(self) -> dict[str, URLResolver]:
        narrow = self.__dict__.get("_narrow")
        if narrow is None:
            indexed: dict[str, URLPattern | URLResolver] = {}
            for pattern in self.url_patterns:
                route = getattr(pattern.pattern, "_route", None)
                if isinstance(pattern, URLResolver) and isinstance(pattern.pattern, RoutePattern) \
                        and route.count("/") == 1 and route.endswith("/") and "<" not in route:
                    indexed.setdefault(route[:-1], pattern)
            narrow = {
                head: URLResolver(
                    self.pattern,
                    [p for p in self.url_patterns if p is candidate or p not in indexed.values()],
                    self.default_kwargs, self.app_name, self.namespace,
                )
                for head, candidate in indexed.items()
            }
            self.__dict__["_narrow"] = narrow  # built once; a race only builds it twice
        return narrow


def resource_include(route: str, urlconf: str) -> URLResolver:
    """`path(route, include(urlconf))`, resolved by `ResourceResolver` when the fast paths are on."""
    resolver_class = ResourceResolver if fast_paths_on("resolver") else URLResolver
    return resolver_class(RoutePattern(route, is_endpoint=False), urlconf)
