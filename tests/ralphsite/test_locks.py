"""Deployment-wide locks: two connections stand for two workers, or two hosts of one PostgreSQL database."""

import threading

import pytest
from django.core.management import call_command
from django.db import connection

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
                self.release.wait(10)
        finally:
            connection.close()

    def __enter__(self) -> "_Holder":
        self.thread.start()
        assert self.held.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.thread.join()


def test_a_held_lock_is_refused_to_a_try_and_to_no_other_name() -> None:
    with _Holder("backup"):
        assert on_own_connection(lambda: _try("backup")) is False
        assert on_own_connection(lambda: _try("another job")) is True
    assert on_own_connection(lambda: _try("backup")) is True  # released when the holder finished


def test_a_waiting_process_gets_the_lock_once_the_holder_releases_it() -> None:
    order: list[str] = []
    with _Holder("migrate") as holder:
        waiter = threading.Thread(target=lambda: on_own_connection(lambda: _wait_for("migrate", order)))
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive() and order == []  # still waiting behind the holder
        order.append("holder released")
        holder.release.set()
        waiter.join(10)
    assert order == ["holder released", "waiter ran"]


def _wait_for(name: str, order: list[str]) -> None:
    with deployment_lock(connection, name):
        order.append("waiter ran")


def test_migrate_waits_for_a_migrate_runningon_own_connection() -> None:
    """Hosts started together each run `make run`'s migrate: one at a time, the later ones find nothing to do."""
    order: list[str] = []
    with _Holder("migrate") as holder:
        migrate = threading.Thread(target=lambda: on_own_connection(
            lambda: (call_command("migrate", verbosity=0), order.append("migrated"))))
        migrate.start()
        migrate.join(0.5)
        assert migrate.is_alive() and order == []
        order.append("other host done")
        holder.release.set()
        migrate.join(30)
    assert order == ["other host done", "migrated"]
