"""The upkeep thread (jobs, deployment-wide exclusive jobs, SQLite WAL checkpoints): real threads, real connections.

Which job runs at which tick is checked by calling the thread's `tick` with the clock's reading given, so
the outcome never depends on how the machine schedules threads; the started thread is checked for what it
does (checkpoints, jobs run, failures survived), waiting on a counter with a deadline that only bounds a hang."""

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection

from conversations_app.models import Chat
from ralphsite.core import upkeep_jobs
from ralphsite.core.db.locks import deployment_lock_try
from ralphsite.core.upkeep_jobs import UpkeepJob
from ralphsite.server import upkeep
from ralphsite.server.upkeep import UpkeepThread, WorkerActivity, upkeep_start, upkeep_stop
from tests.concurrency import on_own_connection

pytestmark = pytest.mark.django_db(transaction=True)
needs_sqlite = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite write-ahead log")
SQLITE_DEFAULT_AUTOCHECKPOINT = 1000


def _pragma(name: str) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA {name}")
        return cursor.fetchone()


@pytest.fixture
def stop_upkeep() -> Iterator[None]:
    # The last connection to close checkpoints the whole log itself: keep this thread's open.
    connection.ensure_connection()
    yield
    upkeep_stop()


@needs_sqlite
def test_it_turns_automatic_checkpoints_off_only_while_it_runs(stop_upkeep: None) -> None:
    assert on_own_connection(lambda: _pragma("wal_autocheckpoint")) == (SQLITE_DEFAULT_AUTOCHECKPOINT,)
    upkeep_thread = upkeep_start(interval=60)
    assert upkeep_thread is not None and upkeep_thread.is_alive()
    assert upkeep_start(interval=60) is upkeep_thread  # one per process and database
    assert on_own_connection(lambda: _pragma("wal_autocheckpoint")) == (0,)

    upkeep_stop()
    assert not upkeep_thread.is_alive()
    assert on_own_connection(lambda: _pragma("wal_autocheckpoint")) == (SQLITE_DEFAULT_AUTOCHECKPOINT,)


@needs_sqlite
def test_it_copies_the_log_back_while_writers_skip_checkpoints(stop_upkeep: None) -> None:
    upkeep_thread = upkeep_start(interval=0.02)

    def write_chats() -> int:
        for i in range(50):
            Chat.objects.create(title=f"chat {i}")
        return _pragma("wal_autocheckpoint")[0]

    assert on_own_connection(write_chats) == 0
    _wait_until(lambda: upkeep_thread.checkpoints > 0)

    # Nothing written since: a checkpoint now finds every frame of the log already copied. The thread
    # is stopped first, or its own checkpoint at that moment would make ours report busy.
    upkeep_stop()
    busy, log_frames, copied = _pragma("wal_checkpoint(PASSIVE)")
    assert (busy, copied) == (0, log_frames)
    assert Chat.objects.count() == 50


@needs_sqlite
def test_it_keeps_checkpointing_after_a_failed_checkpoint(stop_upkeep: None, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    original = UpkeepThread.checkpoint_once
    failures: list[int] = []

    def fail_once(self: Any) -> tuple[int, int, int]:
        if not failures:
            failures.append(1)
            raise OSError("disk hiccup")
        return original(self)

    # Before the thread starts: its very first checkpoint fails, whatever was in the log already.
    monkeypatch.setattr(UpkeepThread, "checkpoint_once", fail_once)
    upkeep_thread = upkeep_start(interval=0.02)
    on_own_connection(lambda: Chat.objects.create(title="after the failure"))
    _wait_until(lambda: upkeep_thread.checkpoints > 0)
    assert failures == [1] and "WAL checkpoint failed" in caplog.text
    assert upkeep_thread.is_alive()


class _Clock:
    """The upkeep module's `time.monotonic`, read from `now` (the worker's activity is stamped with it)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


def _ticking(monkeypatch: pytest.MonkeyPatch, *jobs: UpkeepJob) -> tuple[UpkeepThread, _Clock, WorkerActivity]:
    """An upkeep thread never started (the test calls its `tick`), these jobs only, a clock of the test's."""
    clock, activity = _Clock(1000.0), WorkerActivity()
    monkeypatch.setattr(upkeep, "time", clock)
    monkeypatch.setattr(upkeep, "worker_activity", activity)
    monkeypatch.setattr(upkeep_jobs, "_jobs", {})
    for job in jobs:
        upkeep_jobs.upkeep_job_register(job)
    return UpkeepThread(interval=60), clock, activity


def _tick(thread: UpkeepThread, clock: _Clock, now: float) -> None:
    clock.now = now
    thread.tick(now)


def test_it_runs_idle_only_jobs_only_while_the_worker_is_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    thread, clock, activity = _ticking(monkeypatch, UpkeepJob(name="record", run=lambda: calls.append(clock.now)))
    activity.request_started()
    _tick(thread, clock, 1000.0)
    assert calls == [1000.0]  # a job that never ran is overdue: the first tick runs it, mid-request too
    for now in (1000.5, 1001.0, 1000.0 + upkeep.MAX_JOB_DELAY_SECONDS - 0.5):
        _tick(thread, clock, now)
    assert calls == [1000.0]  # a request in flight: no upkeep
    _tick(thread, clock, 1000.0 + upkeep.MAX_JOB_DELAY_SECONDS)
    assert calls == [1000.0, 1000.0 + upkeep.MAX_JOB_DELAY_SECONDS]  # under constant load, once overdue

    clock.now = 1006.0
    activity.request_finished()
    assert activity.last_finished == 1006.0
    _tick(thread, clock, 1006.0 + upkeep.IDLE_SECONDS / 2)
    assert len(calls) == 2  # a request just finished: another may follow
    _tick(thread, clock, 1006.0 + upkeep.IDLE_SECONDS * 1.5)
    assert len(calls) == 3 and calls[-1] - activity.last_finished >= upkeep.IDLE_SECONDS
    activity.request_started()
    _tick(thread, clock, 1008.0)
    assert len(calls) == 3  # busy again


def test_it_runs_a_job_no_more_often_than_it_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    thread, clock, _activity = _ticking(monkeypatch, UpkeepJob(name="rare", run=lambda: calls.append("rare"),
                                                               every_seconds=3600, idle_only=False))
    for now in (1000.0, 1001.0, 1000.0 + 3599):
        _tick(thread, clock, now)
    assert calls == ["rare"] and thread.job_runs == {"rare": 1}
    _tick(thread, clock, 1000.0 + 3600)
    assert calls == ["rare", "rare"] and thread.job_runs == {"rare": 2}


def test_it_runs_a_job_at_most_every_few_seconds_and_survives_its_failures(
        stop_upkeep: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []

    def flaky() -> None:
        calls.append("run")
        if len(calls) == 1:
            raise OSError("disk hiccup")

    monkeypatch.setattr(upkeep_jobs, "_jobs", {})
    upkeep_jobs.upkeep_job_register(UpkeepJob(name="flaky", run=flaky, idle_only=False))
    upkeep_jobs.upkeep_job_register(UpkeepJob(name="rare", run=lambda: calls.append("rare"), every_seconds=3600,
                                         idle_only=False))
    thread = upkeep_start(interval=0.01)
    _wait_until(lambda: thread.job_runs.get("flaky", 0) >= 2)  # counted once run() has returned
    upkeep_stop()  # no run in flight while the counts are compared
    assert "Upkeep job flaky failed" in caplog.text
    assert calls.count("rare") == 1 and thread.job_runs["rare"] == 1
    assert thread.job_runs["flaky"] == calls.count("run") - 1  # the failed run is not counted


def test_an_exclusive_job_skips_its_turn_while_another_process_runs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    thread, clock, _activity = _ticking(monkeypatch, UpkeepJob(name="sweep", run=lambda: calls.append("sweep"),
                                                               idle_only=False, exclusive=True))
    held, release = threading.Event(), threading.Event()

    def other_process() -> None:
        try:
            with deployment_lock_try(connection, "upkeep-sweep"):
                held.set()
                release.wait(60)
        finally:
            connection.close()

    other = threading.Thread(target=other_process)
    other.start()
    try:
        assert held.wait(60)
        for now in (1000.0, 1001.0, 1002.0):  # on this thread's connection: another one holds the lock
            _tick(thread, clock, now)
        assert calls == [] and thread.job_runs.get("sweep") is None
    finally:
        release.set()
        other.join()
    _tick(thread, clock, 1003.0)
    assert calls == ["sweep"] and thread.job_runs == {"sweep": 1}


def _wait_until(condition: Callable[[], Any]) -> None:
    deadline = time.monotonic() + 60  # only bounds a hang: a loaded machine may not schedule the thread for a while
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


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
    assert activity.in_flight == 0 and activity.idle(activity.last_finished + 2 * upkeep.IDLE_SECONDS)
    assert not activity.idle(activity.last_finished)
    activity.request_started()
    assert not activity.idle(time.monotonic() + 60)
