"""Chunked request bodies (`Transfer-Encoding: chunked`) read, up to the body limit.

Django reads CONTENT_LENGTH bytes of a request's body, and a chunked request has no
Content-Length: its body arrived empty (an agent's POST was refused for a missing field). gunicorn
decodes the chunks; this handler reads the body before Django builds the request, at most one
byte past the limit, and hands Django a body of known length (a longer one is then answered 413 by
`ralphsite.middleware.RequestBodyLimitMiddleware`).
"""

import io
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler


def body_is_chunked(environ: dict[str, Any]) -> bool:
    return not environ.get("CONTENT_LENGTH") and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()


class ChunkedBodyWSGIHandler(WSGIHandler):
    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if body_is_chunked(environ):
            body = environ["wsgi.input"].read(settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return super().__call__(environ, start_response)
