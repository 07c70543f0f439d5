"""`/api/schema/`, served from memory (see `CachedSchemaView`). Apart from `ralphsite.core.api.schema`, which
drf-spectacular's views import through DRF's settings."""

import gzip
import re
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response


@dataclass(frozen=True)
class _RenderedSchema:
    content: bytes
    gzipped: bytes
    content_type: str
    headers: dict[str, str]


_ACCEPTS_GZIP = re.compile(r"\bgzip\b")
_rendered: dict[tuple[type, str | None], _RenderedSchema] = {}
_rendering = threading.Lock()


class CachedSchemaView(SpectacularAPIView):
    """`/api/schema/`: public, because it is the API's manual for agents before they hold a token and
    names no data. Built once per process, format and language, then served from memory (gzip-compressed
    when the client accepts it): the schema changes only with the code, so nothing invalidates it at
    runtime, and an anonymous client costs no query (no authentication, no throttle) and no rebuild."""

    authentication_classes: ClassVar[list[type]] = []
    throttle_classes: ClassVar[list[type]] = []

    @extend_schema(exclude=True)  # the schema does not describe itself
    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        lang = request.query_params.get("lang")
        key = (type(request.accepted_renderer), lang if lang in dict(settings.LANGUAGES) else None)
        rendered = _rendered.get(key)
        if rendered is None:
            with _rendering:  # concurrent first requests wait for one build instead of each building
                rendered = _rendered.get(key)
                if rendered is None:
                    rendered = _rendered[key] = self._render(super().get(request, *args, **kwargs))
        gzip_ok = _ACCEPTS_GZIP.search(request.headers.get("Accept-Encoding", "")) is not None
        response = HttpResponse(rendered.gzipped if gzip_ok else rendered.content,
                                content_type=rendered.content_type, headers=rendered.headers)
        if gzip_ok:
            response["Content-Encoding"] = "gzip"
        return response

    def _render(self, response: Response) -> _RenderedSchema:
        renderer = self.request.accepted_renderer
        content = renderer.render(response.data, renderer.media_type, self.get_renderer_context())
        content_type = f"{renderer.media_type}; charset={renderer.charset}" if renderer.charset else renderer.media_type
        # The representation differs by Accept and Accept-Encoding; caches may keep it an hour.
        headers = {"Content-Disposition": response["Content-Disposition"], "Vary": "Accept, Accept-Encoding",
                   "Cache-Control": "public, max-age=3600"}
        return _RenderedSchema(content=content, gzipped=gzip.compress(content, mtime=0), content_type=content_type,
                               headers=headers)

    def _get_version_parameter(self, request: Request) -> None:
        return None  # one API version: `?version=` must not make a schema (and a cache entry) per value
