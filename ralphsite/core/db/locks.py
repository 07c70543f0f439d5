"""Locks that hold across every process and host of one deployment, named by what they guard.

PostgreSQL: advisory locks, which every host of the database shares. SQLite: an exclusive `flock`
on a file next to the database (a SQLite database has one host, its processes share the file).
Used where N app hosts must not do the same thing at once: starting together, each runs
`migrate` and `bootstrap` (`deployment_lock`, waits its turn); each worker's upkeep thread runs
its exclusive jobs (`deployment_lock_try`, skips a turn when another process has it).
"""

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ralphsite.core.paths import private_dir_create


def _advisory_key(name: str) -> int:
    """A stable signed 64-bit key for PostgreSQL's advisory locks (Python's hash() varies per process)."""
    return int.from_bytes(hashlib.sha256(f"ralph:{name}".encode()).digest()[:8], "big", signed=True)


def _lock_file(connection: BaseDatabaseWrapper, name: str) -> BinaryIO:
    """The lock's file beside the database, opened (made 0600, in a folder made 0700, before the
    database itself when migrate runs first on a fresh data dir)."""
    path = Path(f"{connection.settings_dict['NAME']}-lock-{name}")
    private_dir_create(path.parent)
    return os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600), "r+b")


@contextlib.contextmanager
def deployment_lock(connection: BaseDatabaseWrapper, name: str) -> Iterator[None]:
    """Hold the lock `name` for the block, waiting for whoever holds it now."""
    if connection.vendor == "postgresql":
        # Session-level: the block may run its own transactions (migrate does). Released below, or by
        # the database when the connection dies with its process.
        key = _advisory_key(name)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [key])
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
        return
    with _lock_file(connection, name) as lock_file:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def deployment_lock_try(connection: BaseDatabaseWrapper, name: str) -> Iterator[bool]:
    """Yield whether this process got the lock `name` without waiting; released on exit."""
    if connection.vendor == "postgresql":
        # Transaction-level: released at COMMIT or ROLLBACK whatever the block does, so a pooled
        # connection never carries a leaked lock back into the pool.
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [_advisory_key(name)])
            yield bool(cursor.fetchone()[0])
        return
    with _lock_file(connection, name) as lock_file:
        try:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)
