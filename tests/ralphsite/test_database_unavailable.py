"""PostgreSQL unreachable: the real server answers 503 `database_unavailable` quickly, then recovers.

The server is gunicorn in a subprocess on a free loopback port; the database sits behind a small TCP
proxy (loopback only) that the test stops and starts, or is a port where nothing listens.
"""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from django.db import connection

from ralphsite.core.paths import BASE_DIR
from ralphsite.tokens.services import MintedToken

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL: a database server that can go away"),
]

CONNECT_TIMEOUT = 2
ANSWER_WITHIN = 5.0  # seconds: the client gives up after this, so a hang fails the test


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class TcpProxy:
    """Forwards 127.0.0.1:port to the database; stop() closes the listener and every connection."""

    def __init__(self, target_port: int) -> None:
        self.target_port, self.port = target_port, _free_port()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        if self._listener is not None:
            with suppress(OSError):  # wakes the thread blocked in accept(); close() alone would not
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        with self._lock:
            for sock in self._sockets:
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # stopped
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _get(url: str, token: str | None = None) -> tuple[int, dict, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=ANSWER_WITHIN) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


@contextmanager
def _server(database_port: int, tmp_path: Path) -> Iterator[str]:
    settings = connection.settings_dict
    port = _free_port()
    env = {**os.environ, "RALPH_DATA_DIR": str(tmp_path / "data"), "RALPH_DB_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT),
           "DATABASE_URL": f"postgres://{settings['USER']}@127.0.0.1:{database_port}/{settings['NAME']}",
           "RALPH_DB_POOL_SIZE": "2"}
    env.pop("DEBUG", None)
    log = (tmp_path / "gunicorn.log").open("w")
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "ralphsite.wsgi:application",
                               "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "2"],
                              cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # up to 30 s to start: any answer will do
            with suppress(OSError):
                _get(f"{url}/healthz")
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"gunicorn did not start: {(tmp_path / 'gunicorn.log').read_text()}")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _assert_unavailable(answer: tuple[int, dict, dict]) -> None:
    status, headers, body = answer
    assert status == 503, body
    assert body["code"] == "database_unavailable" and set(body) == {"code", "message", "details"}
    assert int(headers["Retry-After"]) >= 1


def test_it_answers_503_quickly_when_nothing_listens_at_the_database_port(tmp_path: Path, token: MintedToken) -> None:
    with _server(_free_port(), tmp_path) as url:
        _assert_unavailable(_get(f"{url}/healthz"))
        _assert_unavailable(_get(f"{url}/api/v1/sessions/", token.secret))


def test_it_answers_503_while_the_database_is_away_and_recovers_by_itself(tmp_path: Path, token: MintedToken) -> None:
    proxy = TcpProxy(int(connection.settings_dict["PORT"] or 5432))
    proxy.start()
    try:
        with _server(proxy.port, tmp_path) as url:
            assert _get(f"{url}/healthz")[0] == 200
            assert _get(f"{url}/api/v1/sessions/", token.secret)[0] == 200

            proxy.stop()  # the database goes away: pooled connections die, new ones are refused
            _assert_unavailable(_get(f"{url}/healthz"))
            _assert_unavailable(_get(f"{url}/api/v1/sessions/", token.secret))

            proxy.start()  # it is back: the very first requests succeed (dead connections were discarded)
            assert _get(f"{url}/api/v1/sessions/", token.secret)[0] == 200
            assert _get(f"{url}/healthz")[0] == 200
    finally:
        proxy.stop()
