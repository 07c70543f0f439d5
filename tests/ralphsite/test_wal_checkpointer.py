"""The background WAL checkpointer: real threads, real connections to the test database file."""

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection

from conversations_app.models import Chat
from ralphsite.server import wal_checkpointer
from ralphsite.server.wal_checkpointer import WorkerActivity, wal_checkpointer_start, wal_checkpointer_stop

pytestmark = pytest.mark.django_db(transaction=True)
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite write-ahead log")
SQLITE_DEFAULT_AUTOCHECKPOINT = 1000


def _in_new_connection(work: Callable[[], Any]) -> Any:
    """Run `work` on a thread of its own, i.e. on a connection opened for it."""
    result: list[Any] = []

    def run() -> None:
        try:
            result.append(work())
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result[0]


def _pragma(name: str) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA {name}")
        return cursor.fetchone()


@pytest.fixture
def stop_checkpointer() -> Iterator[None]:
    # The last connection to close checkpoints the whole log itself: keep this thread's open.
    connection.ensure_connection()
    yield
    wal_checkpointer_stop()


@sqlite_only
def test_it_turns_automatic_checkpoints_off_only_while_it_runs(stop_checkpointer: None) -> None:
    assert _in_new_connection(lambda: _pragma("wal_autocheckpoint")) == (SQLITE_DEFAULT_AUTOCHECKPOINT,)
    checkpointer = wal_checkpointer_start(interval=60)
    assert checkpointer is not None and checkpointer.is_alive()
    assert wal_checkpointer_start(interval=60) is checkpointer  # one per process and database
    assert _in_new_connection(lambda: _pragma("wal_autocheckpoint")) == (0,)

    wal_checkpointer_stop()
    assert not checkpointer.is_alive()
    assert _in_new_connection(lambda: _pragma("wal_autocheckpoint")) == (SQLITE_DEFAULT_AUTOCHECKPOINT,)


@sqlite_only
def test_it_copies_the_log_back_while_writers_skip_checkpoints(stop_checkpointer: None) -> None:
    checkpointer = wal_checkpointer_start(interval=0.02)

    def write_chats() -> int:
        for i in range(50):
            Chat.objects.create(title=f"chat {i}")
        return _pragma("wal_autocheckpoint")[0]

    assert _in_new_connection(write_chats) == 0
    deadline = time.monotonic() + 10
    while checkpointer.checkpoints == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert checkpointer.checkpoints > 0

    # Nothing written since: a checkpoint now finds every frame of the log already copied.
    busy, log_frames, copied = _pragma("wal_checkpoint(PASSIVE)")
    assert (busy, copied) == (0, log_frames)
    assert Chat.objects.count() == 50


@sqlite_only
def test_it_keeps_checkpointing_after_a_failed_checkpoint(stop_checkpointer: None, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    checkpointer = wal_checkpointer_start(interval=0.02)
    original = type(checkpointer).checkpoint_once
    failures: list[int] = []

    def fail_once(self: Any) -> tuple[int, int, int]:
        if not failures:
            failures.append(1)
            raise OSError("disk hiccup")
        return original(self)

    monkeypatch.setattr(type(checkpointer), "checkpoint_once", fail_once)
    _in_new_connection(lambda: Chat.objects.create(title="after the failure"))
    deadline = time.monotonic() + 10
    while checkpointer.checkpoints == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert failures == [1] and "WAL checkpoint failed" in caplog.text
    assert checkpointer.checkpoints > 0 and checkpointer.is_alive()


@pytest.mark.skipif(connection.vendor == "sqlite", reason="databases without a write-ahead log to checkpoint")
def test_it_starts_nothing_on_postgresql() -> None:
    assert wal_checkpointer_start() is None


@sqlite_only
def test_it_runs_upkeep_only_while_the_worker_is_idle(stop_checkpointer: None, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    activity = WorkerActivity()
    monkeypatch.setattr(wal_checkpointer, "_background_tasks", [lambda: calls.append(time.monotonic())])
    monkeypatch.setattr(wal_checkpointer, "worker_activity", activity)
    monkeypatch.setattr(wal_checkpointer, "MAX_TASK_DELAY_SECONDS", 60)
    activity.request_started()
    wal_checkpointer_start(interval=0.01)
    time.sleep(0.1)
    overdue = len(calls)
    assert overdue <= 1  # the first tick finds the upkeep overdue, once
    time.sleep(0.2)
    assert len(calls) == overdue  # a request in flight: no upkeep

    activity.request_finished()
    deadline = time.monotonic() + 10
    while len(calls) == overdue and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(calls) > overdue
    assert calls[-1] - activity.last_finished >= wal_checkpointer.IDLE_SECONDS


def test_it_counts_requests_in_flight_from_many_threads() -> None:
    activity = WorkerActivity()

    def serve() -> None:
        for _ in range(1000):
            activity.request_started()
            activity.request_finished()

    threads = [threading.Thread(target=serve) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert activity.in_flight == 0 and activity.idle(activity.last_finished + 2 * wal_checkpointer.IDLE_SECONDS)
    assert not activity.idle(activity.last_finished)
    activity.request_started()
    assert not activity.idle(time.monotonic() + 60)
