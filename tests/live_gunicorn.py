"""The real server for tests that need it: gunicorn with ralphsite/server/gunicorn_conf.py serving
ralphsite.wsgi, on a free loopback port with a throw-away data dir and database (one per test run)."""

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.benchmarks.server import BenchServer

# Small enough that tests send a body past it cheaply.
LIVE_MAX_BODY_BYTES = 1024 * 1024


@dataclass(frozen=True)
class LiveGunicorn:
    port: int
    token: str  # the admin's
    max_body_bytes: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture(scope="session")
def gunicorn_server() -> Iterator[LiveGunicorn]:
    with BenchServer(workers=1, threads=4, app="ralphsite.wsgi:application",
                     env_extra={"RALPH_MAX_BODY_BYTES": str(LIVE_MAX_BODY_BYTES)}) as server:
        yield LiveGunicorn(port=server.port, token=server.admin_token(), max_body_bytes=LIVE_MAX_BODY_BYTES)
