"""A keep-alive HTTP/1.1 client for the benchmark: one TCP connection, token auth, loopback only."""

import http.client
import json
import socket
import time
from dataclasses import dataclass
from typing import Any

LOOPBACK = "127.0.0.1"


class _NoDelayConnection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        # Small request/response pairs must not wait on Nagle + delayed ACK.
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    elapsed_ns: int

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def excerpt(self, limit: int = 300) -> str:
        text = self.body.decode("utf-8", "replace")
        return text if len(text) <= limit else text[:limit] + "…"


class BenchClient:
    """Sends requests over one persistent connection and times each one end to end.

    The time covers writing the request and reading the whole body, plus a reconnect when the
    server closed the connection, because that is what an agent pays too. `connects` counts
    TCP connections opened, so a server that does not keep connections alive is visible.
    """

    def __init__(self, *, port: int, token: str | None, cookie: str | None = None, timeout: float = 30.0) -> None:
        self.port = port
        self.timeout = timeout
        self.connects = 0
        self._headers = {"Accept": "application/json", "Connection": "keep-alive"}
        if token:
            self._headers["Authorization"] = f"Token {token}"
        if cookie:  # the admin's pages: a logged-in session instead of a token
            self._headers["Cookie"] = cookie
        self._conn: _NoDelayConnection | None = None

    def _connection(self) -> _NoDelayConnection:
        if self._conn is None or self._conn.sock is None:
            if self._conn is not None:
                self._conn.close()
            # The host is fixed: the benchmark only ever talks to its own server on loopback.
            self._conn = _NoDelayConnection(LOOPBACK, self.port, timeout=self.timeout)
            self._conn.connect()
            self.connects += 1
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: Any = None) -> Response:
        payload = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = dict(self._headers)
        if payload is not None:
            headers["Content-Type"] = "application/json"
        started = time.perf_counter_ns()
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, path, body=payload, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # An idle keep-alive connection the server had already closed (its keepalive timer):
                # retry once on a fresh connection.
                self.close()
                if attempt == 2:
                    raise
                continue
            if resp.will_close:
                self.close()
            return Response(status=resp.status, body=data, elapsed_ns=time.perf_counter_ns() - started)
        raise AssertionError("unreachable")
