"""SQLite WAL checkpoints in a background thread, off the request path.

By default SQLite checkpoints inside whichever commit pushes the write-ahead log past 1,000 pages:
that request copies the log back into the database and waits for two fsyncs. On the benchmark
machine that made about one insert in eighty take 5 to 10 ms instead of 2 to 3 (the p99 of every write).

A server process (each gunicorn worker, see `gunicorn_conf.post_worker_init`) starts one
`WalCheckpointer`: while it runs, new connections of that process turn automatic checkpoints off
and the thread runs a PASSIVE checkpoint every `interval` seconds instead. PASSIVE never waits on
readers or writers; Python's sqlite3 releases the GIL while SQLite works, so requests keep running.
Once the log is fully copied SQLite starts it again from the beginning at the next write, and
`journal_size_limit` (see `database.SQLITE_INIT_COMMAND`) truncates the file, so it stays bounded
by what is written between two checkpoints. Without a checkpointer (tests, `manage.py`, a
server that never started one) connections keep SQLite's automatic checkpoints.
"""

import logging
import threading
from typing import Any

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL_SECONDS = 0.5


class WalCheckpointer(threading.Thread):
    def __init__(self, *, alias: str = "default", interval: float = DEFAULT_INTERVAL_SECONDS) -> None:
        super().__init__(name=f"wal-checkpointer-{alias}", daemon=True)
        self.alias = alias
        self.interval = interval
        self.checkpoints = 0  # checkpoints that copied at least one page (for tests and logs)
        self._stopping = threading.Event()

    def run(self) -> None:
        connection = connections[self.alias]
        try:
            while not self._stopping.wait(self.interval):
                try:
                    self.checkpoint_once()
                except Exception:  # a failed checkpoint is retried at the next tick; the log only grows meanwhile
                    logger.exception("WAL checkpoint failed")
                    connection.close()
        finally:
            connection.close()

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
