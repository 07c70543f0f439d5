"""gunicorn's own error answers in the API's JSON error shape instead of its HTML page.

gunicorn refuses some requests before the application sees them: a request line past
`limit_request_line` (414), too many or too large headers (431), a malformed request line,
header or chunk (400). It writes those answers with `gunicorn.util.write_error`, the one function
every worker class calls for them; each worker replaces it with `write_json_error` (same
signature) when it starts, so an agent parses every answer as JSON.

gunicorn before 27 answers an over-long request line with a 400; it is answered 414 `uri_too_long`
on every version we support, recognised by the message of gunicorn's LimitRequestLine (the same text
from 23 to 27).
"""

import json
from typing import Any

_CODES = {400: "bad_request", 403: "permission_denied", 414: "uri_too_long", 417: "expectation_failed",
          431: "headers_too_large", 500: "server_error", 501: "not_implemented"}


_REQUEST_LINE_TOO_LONG = "Request Line is too large"


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    from gunicorn import util

    if status_int == 400 and mesg.startswith(_REQUEST_LINE_TOO_LONG):
        status_int, reason = 414, "URI Too Long"

    body = json.dumps({"code": _CODES.get(status_int, "bad_request"), "message": mesg or reason,
                       "details": {}}).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    util.write_nonblock(sock, head.encode("latin-1") + body)


def json_errors_install() -> None:
    from gunicorn import util

    util.write_error = write_json_error
