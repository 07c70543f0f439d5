"""An agent's HTTP client for the end-to-end tests: the standard library only, one keep-alive connection."""

import http.client
import json
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

# Django's test server writes the headers and the body of a response in two sends; with Nagle on
# its side and delayed ACKs on ours every keep-alive request would wait ~40 ms. Acking at once
# (Linux) keeps the whole e2e folder fast; it changes nothing the server sees.
_QUICKACK = getattr(socket, "TCP_QUICKACK", None)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class Agent:
    """One agent: one keep-alive HTTP/1.1 connection, `Authorization: Token …`, JSON bodies."""

    def __init__(self, base_url: str, token: str) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port
        self.token = token
        self.connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: Any = None, *, params: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> Reply:
        if path.startswith("http"):  # a `next` link from a page
            split = urlsplit(path)
            path = split.path + (f"?{split.query}" if split.query else "")
        elif params:
            path = f"{path}?{urlencode(params, doseq=True)}"
        all_headers = {"Authorization": f"Token {self.token}", "Accept": "application/json", **(headers or {})}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        self.connection.request(method, path, body=payload, headers=all_headers)
        if _QUICKACK is not None and self.connection.sock is not None:
            self.connection.sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
        response = self.connection.getresponse()
        reply = Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        if response.will_close:  # the server said `Connection: close`: open a new one next time
            self.close()
        return reply

    def get(self, path: str, **params: Any) -> Reply:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Reply:
        return self.request("POST", path, {} if body is None else body, **kwargs)

    def put(self, path: str, body: Any, **kwargs: Any) -> Reply:
        return self.request("PUT", path, body, **kwargs)

    def patch(self, path: str, body: Any, **kwargs: Any) -> Reply:
        return self.request("PATCH", path, body, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Reply:
        return self.request("DELETE", path, **kwargs)

    def ok(self, method: str, path: str, body: Any = None, *, expect: int = 200, **params: Any) -> Any:
        """The JSON of a call that must answer `expect` (the error body is in the failure message)."""
        reply = self.request(method, path, body, params=params or None)
        assert reply.status == expect, f"{method} {path} → {reply.status}: {reply.body[:2000]!r}"
        return reply.json()

    def all_pages(self, path: str, **params: Any) -> list[Any]:
        """Every result of a list, following `next` links (page numbers or cursors)."""
        page = self.ok("GET", path, **params)
        results = list(page["results"])
        seen = {path}
        while page["next"]:
            assert page["next"] not in seen, "pagination loops"
            seen.add(page["next"])
            page = self.ok("GET", page["next"])
            results += page["results"]
        return results

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
