"""WSGI entry used only by `make bench`: the Django application plus an HTTP floor.

`GET /__floor__` answers a fixed small JSON body without entering Django, so the benchmark can
measure what gunicorn + the loopback socket + the client cost on their own, on the same server,
in the same run. Every other path goes to the real application unchanged.
"""

from collections.abc import Callable, Iterable
from typing import Any

FLOOR_PATH = "/__floor__"
FLOOR_BODY = b'{"status":"ok"}'
_FLOOR_HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(FLOOR_BODY)))]

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def floor_wrap(app: WSGIApp) -> WSGIApp:
    """Answer FLOOR_PATH itself and pass every other request to `app`."""

    def floor_app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == FLOOR_PATH:
            # Drain any request body so a keep-alive connection stays in a clean state.
            length = environ.get("CONTENT_LENGTH") or "0"
            if length.isdigit() and int(length) > 0:
                environ["wsgi.input"].read(int(length))
            start_response("200 OK", list(_FLOOR_HEADERS))
            return [FLOOR_BODY]
        return app(environ, start_response)

    return floor_app


def _application_load() -> WSGIApp:
    from ralphsite.wsgi import application as django_application

    return floor_wrap(django_application)


application = _application_load()
