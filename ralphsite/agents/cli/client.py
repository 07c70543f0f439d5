"""The REST API over one HTTP connection, standard library only."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

if TYPE_CHECKING:
    import http.client

API_ROOT = "/api/v1/"


class Unreachable(Exception):
    """The server could not be reached (refused, timed out, not HTTP)."""


class Refused(Exception):
    """The API answered with an error: its status, code and message (the API's error shape)."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.status, self.code, self.message, self.details = status, code, message, details

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class Reply:
    def __init__(self, status: int, data: Any) -> None:
        self.status = status
        self.data = data  # the decoded JSON body, or None for an empty body (204)


def path_of(*segments: str) -> str:
    """An API path from its segments, each quoted (keys may hold any character): `sessions/S/plan/`."""
    return API_ROOT + "".join(quote(segment, safe="") + "/" for segment in segments)


class Api:
    """Calls of the REST API with `Authorization: Token …`; one keep-alive connection per command."""

    def __init__(self, *, url: str, token: str, timeout: float) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"RALPH_URL must be an http:// or https:// URL, not {url!r}")
        self._scheme, self._host, self._port = parts.scheme, parts.hostname, parts.port
        self._prefix = parts.path.rstrip("/")  # a server mounted below a path prefix
        self._token = token
        self._timeout = timeout
        self._connection: http.client.HTTPConnection | None = None  # opened by the first call

    def call(self, method: str, path: str, body: Any = None, *, query: dict[str, Any] | None = None) -> Reply:
        """One request; an error answer raises Refused, a network failure Unreachable."""
        import http.client  # ~15 ms: paid by commands that call the server, not by `--help`

        target = self._prefix + path + (f"?{urlencode(query, doseq=True)}" if query else "")
        headers = {"Accept": "application/json", "User-Agent": "ralph-cli"}
        if self._token:
            headers["Authorization"] = f"Token {self._token}"
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            connection = self._connect()
            connection.request(method, target, body=payload, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise Unreachable(f"{self._scheme}://{self._host}:{self._port or ''}: {error}") from error
        data = _decoded(raw, response.getheader("Content-Type", ""))
        if response.status >= 400:
            raise _refusal(response.status, data)
        return Reply(response.status, data)

    def _connect(self) -> http.client.HTTPConnection:
        import http.client

        if self._connection is None:
            if self._scheme == "https":
                self._connection = http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout)
            else:
                self._connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _decoded(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    if "json" not in content_type:
        return raw.decode(errors="replace")
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


def _refusal(status: int, data: Any) -> Refused:
    if isinstance(data, dict) and "code" in data:
        return Refused(status, str(data["code"]), str(data.get("message", "")), data.get("details"))
    # Not the API's error shape: a proxy's page, or a server that is not Ralph Site.
    text = data if isinstance(data, str) else json.dumps(data)
    return Refused(status, f"http_{status}", (text or "").strip()[:500])
