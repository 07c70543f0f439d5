"""The SQLite backend's write lock: real threads, real connections to the test database file."""

import fcntl
import os
import threading
from collections.abc import Iterator

import pytest
from django.db import OperationalError, connection, transaction

from ralphsite.core.db.sqlite_backend.base import WRITE_LOCK_SUFFIX, DatabaseWrapper
from sessions_app.models import Session

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite backend's lock"),
]


@pytest.fixture
def lock_probe() -> Iterator[int]:
    """A file descriptor of our own on the lock file, to ask whether somebody holds it."""
    fd = os.open(f"{connection.settings_dict['NAME']}{WRITE_LOCK_SUFFIX}", os.O_RDWR | os.O_CREAT, 0o600)
    yield fd
    os.close(fd)


def _held_by_someone(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def test_it_holds_the_lock_from_begin_to_commit(lock_probe: int) -> None:
    assert not _held_by_someone(lock_probe)
    with transaction.atomic():
        Session.objects.create(key="in-transaction", user_request="x")
        assert _held_by_someone(lock_probe)
        with transaction.atomic():  # a savepoint changes nothing
            assert _held_by_someone(lock_probe)
        assert _held_by_someone(lock_probe)
    assert not _held_by_someone(lock_probe)
    Session.objects.create(key="autocommit", user_request="x")  # no transaction, no lock
    assert not _held_by_someone(lock_probe)


def test_it_releases_the_lock_on_rollback(lock_probe: int) -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        Session.objects.create(key="rolled-back", user_request="x")
        raise RuntimeError
    assert not _held_by_someone(lock_probe)
    assert not Session.objects.filter(key="rolled-back").exists()


def test_a_second_writer_waits_for_the_first_to_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    first_wrote, first_may_commit, second_done = threading.Event(), threading.Event(), threading.Event()
    second_refused = threading.Semaphore(0)  # released at each try of the lock that finds it taken
    errors: list[BaseException] = []
    # The second writer polls until the first commits: it must not give up before this test lets the first go.
    monkeypatch.setitem(connection.settings_dict["OPTIONS"], "timeout", 60)
    try_lock = DatabaseWrapper._write_lock_try

    def counted_try(self: DatabaseWrapper) -> bool:
        acquired = try_lock(self)
        if not acquired:
            second_refused.release()
        return acquired

    monkeypatch.setattr(DatabaseWrapper, "_write_lock_try", counted_try)

    def first() -> None:
        try:
            with transaction.atomic():
                Session.objects.create(key="first", user_request="x")
                first_wrote.set()
                first_may_commit.wait(60)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    def second() -> None:
        try:
            first_wrote.wait(60)
            with transaction.atomic():
                Session.objects.create(key="second", user_request="x")
            second_done.set()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    try:
        assert first_wrote.wait(60)
        # The first try and a retry both found the lock taken: the second writer is queued, not failed or through.
        assert second_refused.acquire(timeout=60) and second_refused.acquire(timeout=60)
        assert not second_done.is_set() and errors == []
    finally:
        first_may_commit.set()
        for thread in threads:
            thread.join(60)
    assert errors == [] and second_done.is_set()
    assert set(Session.objects.values_list("key", flat=True)) == {"first", "second"}


def test_a_writer_that_waits_past_the_timeout_gets_database_is_locked(lock_probe: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(connection.settings_dict["OPTIONS"], "timeout", 0.05)
    fcntl.flock(lock_probe, fcntl.LOCK_EX)  # somebody else's transaction, never finishing
    try:
        with pytest.raises(OperationalError, match="database is locked"), transaction.atomic():
            Session.objects.create(key="never", user_request="x")
    finally:
        fcntl.flock(lock_probe, fcntl.LOCK_UN)
    with transaction.atomic():
        Session.objects.create(key="after", user_request="x")
    assert list(Session.objects.values_list("key", flat=True)) == ["after"]
