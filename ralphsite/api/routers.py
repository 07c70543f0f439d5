from django.urls import URLPattern, URLResolver, include, path
from rest_framework.routers import DefaultRouter, SimpleRouter


class RalphRouter(DefaultRouter):
    """Each app builds one of these in its api/urls.py; the project merges their registries.

    URLs are grouped by resource: `^chats/` is one include holding that resource's routes. Django
    resolves a path by trying patterns in order, so the flat list DRF builds (over 250 patterns,
    doubled by `.json` format suffixes) cost more than a whole detail request's SQL; grouped, a
    request tries one prefix per resource and then only its own resource's few routes. Format
    suffixes are off: agents ask for JSON by `Accept`, and JSON is the only renderer.
    """

    include_format_suffixes = False

    def get_urls(self) -> list[URLPattern | URLResolver]:
        urls: list[URLPattern | URLResolver] = []
        for prefix, viewset, basename in self.registry:
            resource = SimpleRouter(trailing_slash=bool(self.trailing_slash))
            # An empty prefix makes SimpleRouter build the routes relative to the include below.
            resource.register("", viewset, basename=basename)
            urls.append(path(f"{prefix}/", include(resource.urls)))
        if self.include_root_view:
            urls.append(path("", self.get_api_root_view(api_urls=urls), name=self.root_view_name))
        return urls
