import io
import json
from wsgiref.util import setup_testing_defaults

import pytest

from ralphsite.server.bench_wsgi import FLOOR_BODY, FLOOR_PATH, application, floor_wrap


def _call(app, path: str, method: str = "GET", body: bytes = b""):
    captured: dict = {}

    def start_response(status, headers, exc_info=None):
        captured["status"], captured["headers"] = status, dict(headers)

    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "CONTENT_LENGTH": str(len(body)),
               "wsgi.input": io.BytesIO(body)}
    setup_testing_defaults(environ)
    chunks = app(environ, start_response)
    return captured["status"], captured["headers"], b"".join(chunks), environ


def test_it_answers_the_floor_path_without_the_inner_app():
    def inner(environ, start_response):
        raise AssertionError("the floor must not reach the application")

    status, headers, body, _ = _call(floor_wrap(inner), FLOOR_PATH)
    assert status == "200 OK"
    assert headers["Content-Type"] == "application/json"
    assert headers["Content-Length"] == str(len(FLOOR_BODY))
    assert json.loads(body) == {"status": "ok"}


def test_it_drains_a_request_body_on_the_floor_path():
    status, _, _, environ = _call(floor_wrap(lambda e, s: []), FLOOR_PATH, method="POST", body=b'{"x": 1}')
    assert status == "200 OK"
    assert environ["wsgi.input"].read() == b""


def test_it_passes_every_other_path_to_the_inner_app():
    def inner(environ, start_response):
        start_response("418 I'm a teapot", [("Content-Type", "text/plain")])
        return [environ["PATH_INFO"].encode()]

    status, _, body, _ = _call(floor_wrap(inner), "/api/v1/sessions/")
    assert status.startswith("418")
    assert body == b"/api/v1/sessions/"


@pytest.mark.django_db
def test_it_serves_the_django_application_beside_the_floor(django_assert_num_queries):
    # The real entry point gunicorn loads: the floor answers, and Django still serves its own paths.
    status, _, body, _ = _call(application, FLOOR_PATH)
    assert status == "200 OK" and body == FLOOR_BODY
    # An anonymous API call runs no query: Django's own 401 in the API error shape. (The database is
    # open because Django's request_started handler checks whatever connection this process holds.)
    with django_assert_num_queries(0):
        status, _, body, _ = _call(application, "/api/v1/sessions/")
    assert status.startswith("401")
    assert set(json.loads(body)) == {"code", "message", "details"}
