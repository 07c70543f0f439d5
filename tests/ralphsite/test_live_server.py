"""The real server (gunicorn + gunicorn_conf.py + ralphsite.wsgi) over raw HTTP: chunked bodies are
read, and what gunicorn or Django refuses before any view still gets the JSON error shape."""

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests.live_gunicorn import LiveGunicorn


def _request(server: LiveGunicorn, method: str, path: str, *, body: Any = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers={
            "Authorization": f"Token {server.token}", "Accept": "application/json", **(headers or {})})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _error(status: int, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    assert headers["content-type"] == "application/json", (status, body)
    error = json.loads(body)
    assert set(error) == {"code", "message", "details"} and error["message"], error
    return error


def _chunks(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


def test_it_reads_a_chunked_body(gunicorn_server: LiveGunicorn) -> None:
    body = json.dumps({"user_request": "sent in chunks " + "x" * 20_000}).encode()
    # An iterable body and no Content-Length: http.client sends Transfer-Encoding: chunked.
    status, _, answer = _request(gunicorn_server, "POST", "/api/v1/sessions/", body=_chunks(body, 1000),
                                 headers={"Content-Type": "application/json"})
    assert status == 201, answer
    assert json.loads(answer)["user_request"] == "sent in chunks " + "x" * 20_000


def test_it_answers_a_chunked_body_past_the_limit_with_a_json_413(gunicorn_server: LiveGunicorn) -> None:
    body = json.dumps({"user_request": "x" * gunicorn_server.max_body_bytes}).encode()
    status, headers, answer = _request(gunicorn_server, "POST", "/api/v1/sessions/", body=_chunks(body, 64 * 1024),
                                       headers={"Content-Type": "application/json"})
    assert status == 413 and _error(status, headers, answer)["code"] == "payload_too_large"


def test_it_answers_a_body_past_the_limit_with_a_json_413(gunicorn_server: LiveGunicorn) -> None:
    body = json.dumps({"user_request": "x" * gunicorn_server.max_body_bytes}).encode()
    status, headers, answer = _request(gunicorn_server, "POST", "/api/v1/sessions/", body=body,
                                       headers={"Content-Type": "application/json"})
    assert status == 413 and _error(status, headers, answer)["code"] == "payload_too_large"


@pytest.mark.parametrize("characters", [444, 900])
def test_it_serves_a_query_string_up_to_the_request_line_limit(gunicorn_server: LiveGunicorn, characters: int) -> None:
    # 9 bytes each once percent-encoded: up to 8,100 bytes.
    status, _, answer = _request(gunicorn_server, "GET", "/api/v1/search/?q=" + quote("세" * characters))
    assert status == 200, answer


@pytest.mark.parametrize("length", [8_200, 100_000])
def test_it_answers_a_request_line_past_the_limit_with_a_json_414(gunicorn_server: LiveGunicorn, length: int) -> None:
    status, headers, answer = _request(gunicorn_server, "GET", "/api/v1/search/?q=" + "a" * length)
    assert status == 414 and _error(status, headers, answer)["code"] == "uri_too_long"


def test_it_answers_headers_past_the_limit_with_a_json_431(gunicorn_server: LiveGunicorn) -> None:
    headers = {f"X-Filler-{i}": "x" for i in range(200)}
    status, answer_headers, answer = _request(gunicorn_server, "GET", "/api/v1/", headers=headers)
    assert status == 431 and _error(status, answer_headers, answer)["code"] == "headers_too_large"


def test_it_answers_a_malformed_request_line_with_a_json_400(gunicorn_server: LiveGunicorn) -> None:
    with socket.create_connection(("127.0.0.1", gunicorn_server.port), timeout=30) as sock:
        sock.sendall(b"GET /api/v1/ HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    headers = dict(line.split(": ", 1) for line in head.decode("latin-1").split("\r\n")[1:])
    assert status == 400 and _error(status, {k.lower(): v for k, v in headers.items()}, body)["code"] == "bad_request"


def test_it_answers_a_host_it_does_not_serve_with_a_json_400(gunicorn_server: LiveGunicorn) -> None:
    status, headers, answer = _request(gunicorn_server, "GET", "/api/v1/sessions/", headers={"Host": "evil.example"})
    assert status == 400 and _error(status, headers, answer)["code"] == "invalid_host"
