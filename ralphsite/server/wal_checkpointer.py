"""SQLite WAL checkpoints in a background thread, off the request path.

By default SQLite checkpoints inside whichever commit pushes the write-ahead log past 1,000 pages:
that request copies the log back into the database and waits for two fsyncs. On the benchmark
machine that made about one insert in eighty take 5 to 10 ms instead of 2 to 3 (the p99 of every write).

A server process (each gunicorn worker, see `gunicorn_conf.post_worker_init`) starts one
`WalCheckpointer`: while it runs, new connections of that process turn automatic checkpoints off
and the thread runs a PASSIVE checkpoint every `interval` seconds instead. PASSIVE never waits on
readers or writers; Python's sqlite3 releases the GIL while SQLite works, so requests keep running.
Once the log is fully copied SQLite starts it again from the beginning at the next write, and
`journal_size_limit` (see `ralphsite.db.config.SQLITE_INIT_COMMAND`) truncates the file, so it stays bounded
by what is written between two checkpoints. Without a checkpointer (tests, `manage.py`, a
server that never started one) connections keep SQLite's automatic checkpoints.

Apps give the same thread other deferrable upkeep with `background_task_register` (the search
index's queue, see conversations_app/search/indexing.py). Tasks write, so a request starting a
transaction meanwhile would wait in SQLite's busy handler, whose sleeps are far longer than the
task: they run only when the worker is idle (no request in flight, none finished in the last
`IDLE_SECONDS`; gunicorn's request hooks report activity) or, under constant load, at most
`MAX_TASK_DELAY_SECONDS` apart, then before the tick's checkpoint. A task must be correct
whenever it runs, or if it never does.
"""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL_SECONDS = 0.5
IDLE_SECONDS = 0.05
MAX_TASK_DELAY_SECONDS = 5.0

_background_tasks: list[Callable[[], Any]] = []


def background_task_register(task: Callable[[], Any]) -> None:
    """Run `task` (no arguments, on the checkpointer's connection) at the checkpointer's idle ticks."""
    if task not in _background_tasks:
        _background_tasks.append(task)


class WorkerActivity:
    """Requests in flight in this process and when the last one finished (gunicorn's hooks report them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.last_finished = 0.0

    def request_started(self) -> None:
        with self._lock:
            self.in_flight += 1

    def request_finished(self) -> None:
        with self._lock:
            self.in_flight -= 1
            self.last_finished = time.monotonic()

    def idle(self, now: float) -> bool:
        return self.in_flight <= 0 and now - self.last_finished >= IDLE_SECONDS


worker_activity = WorkerActivity()


class WalCheckpointer(threading.Thread):
    def __init__(self, *, alias: str = "default", interval: float = DEFAULT_INTERVAL_SECONDS) -> None:
        super().__init__(name=f"wal-checkpointer-{alias}", daemon=True)
        self.alias = alias
        self.interval = interval
        self.checkpoints = 0  # checkpoints that copied at least one page (for tests and logs)
        self.tasks_ran_at = 0.0
        self._stopping = threading.Event()

    def run(self) -> None:
        connection = connections[self.alias]
        try:
            while not self._stopping.wait(self.interval):
                now = time.monotonic()
                if worker_activity.idle(now) or now - self.tasks_ran_at >= MAX_TASK_DELAY_SECONDS:
                    self.tasks_ran_at = now
                    self._run_tasks()
                try:
                    self.checkpoint_once()
                except Exception:  # a failed checkpoint is retried at the next tick; the log only grows meanwhile
                    logger.exception("WAL checkpoint failed")
                    connection.close()
        finally:
            connection.close()

    def _run_tasks(self) -> None:
        for task in list(_background_tasks):
            try:
                task()
            except Exception:  # retried at a later tick; whoever needs it first runs it meanwhile
                logger.exception("Background task %s failed", getattr(task, "__name__", task))
                connections[self.alias].close()

    def checkpoint_once(self) -> tuple[int, int, int]:
        """One PASSIVE checkpoint on this thread's connection: (busy, log frames, frames copied)."""
        with connections[self.alias].cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
            busy, log_frames, copied = cursor.fetchone()
        if copied > 0:
            self.checkpoints += 1
        return busy, log_frames, copied

    def stop(self) -> None:
        self._stopping.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join()


_running: dict[str, WalCheckpointer] = {}
_lock = threading.Lock()


def _autocheckpoint_off(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """`connection_created`: a connection of a database with a running checkpointer leaves checkpoints to it."""
    if connection.vendor == "sqlite" and connection.alias in _running:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint=0")


def wal_checkpointer_start(*, alias: str = "default",
                           interval: float = DEFAULT_INTERVAL_SECONDS) -> WalCheckpointer | None:
    """Start this process's checkpointer for `alias`; None on a database that is not SQLite.

    Call it before the process opens its request connections (gunicorn's `post_worker_init`):
    a connection opened earlier keeps automatic checkpoints, which is safe, only slower.
    """
    if connections[alias].vendor != "sqlite":
        return None
    with _lock:
        checkpointer = _running.get(alias)
        if checkpointer is None:
            connection_created.connect(_autocheckpoint_off, dispatch_uid="ralph_wal_autocheckpoint_off")
            checkpointer = _running[alias] = WalCheckpointer(alias=alias, interval=interval)
            checkpointer.start()
    return checkpointer


def wal_checkpointer_stop(*, alias: str = "default") -> None:
    """Stop the checkpointer; connections opened from now on checkpoint automatically again."""
    with _lock:
        checkpointer = _running.pop(alias, None)
    if checkpointer is not None:
        checkpointer.stop()
