"""Deployment-wide locks: two connections stand for two workers, or two hosts of one PostgreSQL database."""

import fcntl
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import connection

from ralphsite.core.db import locks
from ralphsite.core.db.locks import deployment_lock, deployment_lock_try
from tests.concurrency import on_own_connection

pytestmark = pytest.mark.django_db(transaction=True)


def _try(name: str) -> bool:
    with deployment_lock_try(connection, name) as acquired:
        return acquired


class _Holder:
    """Holds a lock on another connection until released."""

    def __init__(self, name: str) -> None:
        self.held, self.release = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold, args=(name,))

    def _hold(self, name: str) -> None:
        try:
            with deployment_lock(connection, name):
                self.held.set()
                self.release.wait(60)
        finally:
            connection.close()

    def __enter__(self) -> "_Holder":
        self.thread.start()
        assert self.held.wait(60)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.thread.join()


@pytest.fixture
def wait_for_a_waiter(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """`wait_for_a_waiter(name)` returns once a connection waits for the lock `name` that another holds:
    PostgreSQL lists its advisory lock as not granted; on SQLite it found the file lock taken and is
    about to wait in flock. Seen, not guessed from a pause, so no test depends on the machine's speed."""
    if connection.vendor == "postgresql":
        def advisory_waiters(name: str) -> int:
            key = locks._advisory_key(name) & 0xFFFFFFFFFFFFFFFF  # pg_locks shows it as two unsigned halves
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                               "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                               "AND classid = %s AND objid = %s AND objsubid = 1", [key >> 32, key & 0xFFFFFFFF])
                return cursor.fetchone()[0]

        return lambda name: _wait_until(lambda: advisory_waiters(name) > 0)

    waiting: dict[str, threading.Event] = {}

    def flock(fd: int, operation: int) -> None:
        if operation == fcntl.LOCK_EX:  # a blocking request: see first whether it will wait
            try:
                return fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                name = Path(f"/proc/self/fd/{fd}").readlink().name.rsplit("-lock-", 1)[1]
                waiting.setdefault(name, threading.Event()).set()
        return fcntl.flock(fd, operation)

    monkeypatch.setattr(locks, "fcntl", SimpleNamespace(flock=flock, LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB,
                                                        LOCK_UN=fcntl.LOCK_UN))
    return lambda name: _wait_until(lambda: waiting.get(name) is not None and waiting[name].is_set())


def _wait_until(condition: Callable[[], object]) -> None:
    deadline = time.monotonic() + 60  # only bounds a hang
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


def test_a_held_lock_is_refused_to_a_try_and_to_no_other_name() -> None:
    with _Holder("backup"):
        assert on_own_connection(lambda: _try("backup")) is False
        assert on_own_connection(lambda: _try("another job")) is True
    assert on_own_connection(lambda: _try("backup")) is True  # released when the holder finished


def test_a_waiting_process_gets_the_lock_once_the_holder_releases_it(
        wait_for_a_waiter: Callable[[str], None]) -> None:
    order: list[str] = []
    with _Holder("migrate") as holder:
        waiter = threading.Thread(target=lambda: on_own_connection(lambda: _wait_for("migrate", order)))
        waiter.start()
        wait_for_a_waiter("migrate")
        assert waiter.is_alive() and order == []  # still waiting behind the holder
        order.append("holder released")
        holder.release.set()
        waiter.join(60)
    assert order == ["holder released", "waiter ran"]


def _wait_for(name: str, order: list[str]) -> None:
    with deployment_lock(connection, name):
        order.append("waiter ran")


def test_migrate_waits_for_a_migrate_runningon_own_connection(wait_for_a_waiter: Callable[[str], None]) -> None:
    """Hosts started together each run `make run`'s migrate: one at a time, the later ones find nothing to do."""
    order: list[str] = []
    with _Holder("migrate") as holder:
        migrate = threading.Thread(target=lambda: on_own_connection(
            lambda: (call_command("migrate", verbosity=0), order.append("migrated"))))
        migrate.start()
        wait_for_a_waiter("migrate")
        assert migrate.is_alive() and order == []
        order.append("other host done")
        holder.release.set()
        migrate.join(60)
    assert order == ["other host done", "migrated"]
