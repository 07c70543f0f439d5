"""Django's SQLite backend, with writers queued on a file lock instead of SQLite's busy handler.

Every transaction here begins IMMEDIATE (it takes SQLite's write lock at BEGIN; see
`ralphsite.core.db.config.database_config`). When another connection holds that lock, SQLite's busy handler polls
with sleeps of 1, 2, 5, 10, 15, 20, 25, 50 and 100 ms: a write that waited behind a 1 ms transaction
often slept 25 ms or more, which was the p99 of concurrent appends (40-110 ms). Here a connection
first takes an exclusive `flock` on `<database>-writelock`, held from BEGIN to COMMIT or ROLLBACK, and
polls for it at most 1 ms apart, so a writer starts within a millisecond of the previous commit,
in any thread or process. SQLite's own lock is then free whenever BEGIN runs, except against a
writer that does not use this backend (a `sqlite3` shell, an autocommit statement outside a
transaction), which the busy timeout still covers. A writer that waits longer than the database's
`timeout` gets SQLite's own error, "database is locked", as it would have from the busy handler.
"""

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import Any

from django.db.backends.sqlite3 import base, creation

from ralphsite.core.money import EXACT_SUM, UsdUnitsSum
from ralphsite.core.paths import private_dir_create

WAIT_FIRST_SECONDS = 0.00005
WAIT_MAX_SECONDS = 0.001

WRITE_LOCK_SUFFIX = "-writelock"


class DatabaseCreation(creation.DatabaseCreation):
    def _destroy_test_db(self, test_database_name: str, verbosity: int) -> None:
        super()._destroy_test_db(test_database_name, verbosity)
        if test_database_name and not self.is_in_memory_db(test_database_name):
            # The write lock, and migrate's and bootstrap's deployment locks (ralphsite/core/db/locks.py).
            name = Path(test_database_name)
            for path in [name.with_name(f"{name.name}{WRITE_LOCK_SUFFIX}"), *name.parent.glob(f"{name.name}-lock-*")]:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._write_lock_fd: int | None = None
        self._write_lock_held = False

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        # Created readable by its owner only (0600), in a folder made 0700 if missing (the data dir: the
        # settings do not create it); SQLite gives its -wal and -shm files the same mode.
        if not self.is_in_memory_db():
            name = Path(self.settings_dict["NAME"])
            private_dir_create(name.parent)
            with contextlib.suppress(FileExistsError):
                os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        connection = super().get_new_connection(conn_params)
        connection.create_aggregate(EXACT_SUM, 2, UsdUnitsSum)  # money sums past 64 bits (ralphsite.core.money)
        return connection

    def _write_lock_path(self) -> str | None:
        name = str(self.settings_dict["NAME"])
        return None if self.is_in_memory_db() else f"{name}{WRITE_LOCK_SUFFIX}"

    def _write_lock_acquire(self) -> None:
        if self._write_lock_fd is None:
            path = self._write_lock_path()
            if path is None:
                return
            # One open file per connection: flock excludes other open files, threads of this process too.
            self._write_lock_fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if not self._write_lock_try():
            self._write_lock_wait()
        self._write_lock_held = True

    def _write_lock_try(self) -> bool:
        try:
            fcntl.flock(self._write_lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _write_lock_wait(self) -> None:
        """Poll until the lock is free (a blocking flock could not give up after `timeout`)."""
        deadline = time.monotonic() + float(self.settings_dict["OPTIONS"].get("timeout", 5))
        wait = WAIT_FIRST_SECONDS
        while not self._write_lock_try():
            if time.monotonic() >= deadline:
                with self.wrap_database_errors:  # django.db.OperationalError: the API's 503 database_busy
                    raise self.Database.OperationalError("database is locked")
            time.sleep(wait)
            wait = min(wait * 2, WAIT_MAX_SECONDS)

    def _write_lock_release(self) -> None:
        if self._write_lock_held and (self.connection is None or not self.connection.in_transaction):
            fcntl.flock(self._write_lock_fd, fcntl.LOCK_UN)
            self._write_lock_held = False

    def _start_transaction_under_autocommit(self) -> None:
        self._write_lock_acquire()
        try:
            super()._start_transaction_under_autocommit()
        finally:
            self._write_lock_release()  # kept only while the transaction is open

    def _commit(self) -> Any:
        try:
            return super()._commit()
        finally:
            self._write_lock_release()

    def _rollback(self) -> Any:
        try:
            return super()._rollback()
        finally:
            self._write_lock_release()

    def _close(self) -> Any:
        try:
            return super()._close()
        finally:
            if self._write_lock_fd is not None:
                os.close(self._write_lock_fd)  # closing the file releases a lock still held
                self._write_lock_fd, self._write_lock_held = None, False
