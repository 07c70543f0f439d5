"""Upkeep in a background thread per server process, off the request path, on every backend.

Each server process (each gunicorn worker, see `gunicorn_conf.post_worker_init`) starts one
`UpkeepThread`. It ticks every `interval` seconds and runs the jobs apps register with
`ralphsite.core.upkeep_jobs.upkeep_job_register` (the search index's queue, lease expiry, backups, …):

* A job runs at most every `every_seconds`. An `idle_only` job writes, so a request starting a
  transaction meanwhile would wait for it: it runs only when the worker is idle (no request in
  flight, none finished in the last `IDLE_SECONDS`; gunicorn's request hooks report activity) or,
  under constant load, once it is `MAX_JOB_DELAY_SECONDS` overdue. A job must be correct whenever
  it runs, or if it never does (whoever needs its result first does the work itself).
* An `exclusive` job runs in one process of the whole deployment at a time, however many workers
  and hosts there are (`ralphsite.core.db.locks.deployment_lock_try`): a process that finds the job's
  lock taken skips its turn.

On SQLite the thread also checkpoints the write-ahead log. By default SQLite checkpoints inside
whichever commit pushes the log past 1,000 pages: that request copies the log back into the
database and waits for two fsyncs; on the benchmark machine about one insert in eighty took 5 to
10 ms instead of 2 to 3 (the p99 of every write: 7.5 → 4.1 ms once moved here). While the thread
runs, new connections of the process turn automatic checkpoints off and the thread runs a PASSIVE
checkpoint every tick instead. PASSIVE never waits on readers or writers, and Python's sqlite3
releases the GIL while SQLite works. `journal_size_limit` (`ralphsite.core.db.config.SQLITE_INIT_COMMAND`)
truncates the log after a checkpoint. Without the thread (tests, `manage.py`) connections keep
SQLite's automatic checkpoints.
"""

import logging
import threading
import time
from typing import Any

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created

from ralphsite.core.db.locks import deployment_lock_try
from ralphsite.core.upkeep_jobs import UpkeepJob, upkeep_jobs

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL_SECONDS = 0.5
IDLE_SECONDS = 0.05
MAX_JOB_DELAY_SECONDS = 5.0


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


class UpkeepThread(threading.Thread):
    def __init__(self, *, alias: str = "default", interval: float = DEFAULT_INTERVAL_SECONDS) -> None:
        super().__init__(name=f"upkeep-{alias}", daemon=True)
        self.alias = alias
        self.interval = interval
        self.checkpoints = 0  # WAL checkpoints that copied at least one page (for tests and logs)
        self.job_runs: dict[str, int] = {}  # name → completed runs, for tests and logs
        self._last_run: dict[str, float] = {}
        self._stopping = threading.Event()

    @property
    def connection(self) -> BaseDatabaseWrapper:
        return connections[self.alias]

    def run(self) -> None:
        try:
            while not self._stopping.wait(self.interval):
                self.tick(time.monotonic())
        finally:
            self.connection.close()

    def tick(self, now: float) -> None:
        idle = worker_activity.idle(now)
        for job in upkeep_jobs():
            last = self._last_run.get(job.name)
            due_since = 0.0 if last is None else last + job.every_seconds
            if now < due_since:
                continue
            overdue = last is None or now - due_since >= MAX_JOB_DELAY_SECONDS
            if job.idle_only and not idle and not overdue:
                continue
            self._last_run[job.name] = now
            self._run_job(job)
        if self.connection.vendor == "sqlite":
            try:
                self.checkpoint_once()
            except Exception:  # retried at the next tick; the log only grows meanwhile
                logger.exception("WAL checkpoint failed")
                self.connection.close()

    def _run_job(self, job: UpkeepJob) -> None:
        try:
            if job.exclusive:
                with deployment_lock_try(self.connection, f"upkeep-{job.name}") as acquired:
                    if not acquired:
                        return
                    job.run()
            else:
                job.run()
        except Exception:  # retried at a later tick
            logger.exception("Upkeep job %s failed", job.name)
            self.connection.close()
            return
        self.job_runs[job.name] = self.job_runs.get(job.name, 0) + 1

    def checkpoint_once(self) -> tuple[int, int, int]:
        """One PASSIVE checkpoint on this thread's connection: (busy, log frames, frames copied)."""
        with self.connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
            busy, log_frames, copied = cursor.fetchone()
        if copied > 0:
            self.checkpoints += 1
        return busy, log_frames, copied

    def stop(self) -> None:
        self._stopping.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join()


_running: dict[str, UpkeepThread] = {}
_lock = threading.Lock()


def _autocheckpoint_off(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """`connection_created`: a connection of a database whose upkeep thread runs leaves checkpoints to it."""
    if connection.vendor == "sqlite" and connection.alias in _running:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_autocheckpoint=0")


def upkeep_start(*, alias: str = "default", interval: float = DEFAULT_INTERVAL_SECONDS) -> UpkeepThread:
    """Start this process's upkeep thread for `alias` (once; later calls return the running one).

    Call it before the process opens its request connections (gunicorn's `post_worker_init`): a
    SQLite connection opened earlier keeps automatic checkpoints, which is safe, only slower.
    """
    with _lock:
        thread = _running.get(alias)
        if thread is None:
            connection_created.connect(_autocheckpoint_off, dispatch_uid="ralph_wal_autocheckpoint_off")
            thread = _running[alias] = UpkeepThread(alias=alias, interval=interval)
            thread.start()
    return thread


def upkeep_stop(*, alias: str = "default") -> None:
    """Stop the thread; SQLite connections opened from now on checkpoint automatically again."""
    with _lock:
        thread = _running.pop(alias, None)
    if thread is not None:
        thread.stop()
