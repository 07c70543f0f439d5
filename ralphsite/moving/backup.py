"""Backups of the whole database (`manage.py backup`, `restore`, `backup --verify`, the upkeep job).

SQLite: an online copy with SQLite's backup API from a connection that first pins a read snapshot
(BEGIN + a read): in WAL mode writers go on meanwhile, and the copy is the database as of that
snapshot, taken in steps so a progress line can be drawn (without the pinned snapshot SQLite would
restart the copy whenever another connection commits). PostgreSQL: `pg_dump --format=custom`, which
reads one repeatable-read snapshot; when the client tools are not installed the operator is told so.

A backup is written under a temporary name and renamed when complete, so a file named like a backup
(`ralph-YYYYMMDD-HHMMSS.sqlite3` / `.pgdump`) is always whole; pruning only touches such names.
"""

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from django.apps import apps
from django.conf import settings
from django.db import connection

from ralphsite.core.paths import private_dir_create

BACKUP_NAME = re.compile(r"^ralph-(\d{8}-\d{6})(?:-\d+)?\.(sqlite3|pgdump)$")
DATA_APPS = ("sessions_app", "ledger_app", "conversations_app")
STEP_PAGES = 1024  # 4 MiB per step at SQLite's default page size

ProgressCallback = Callable[[int, int], None]  # (done, total) in pages or bytes


class BackupError(Exception):
    """A backup, restore or verification that cannot be done, in one line for the operator."""


@dataclass(frozen=True)
class VerifyReport:
    integrity: str
    ledger: str


def backup_default_dir() -> Path:
    return Path(settings.RALPH_BACKUP_DIR)


def _backup_path(directory: Path, now: datetime, suffix: str) -> Path:
    stem = f"ralph-{now.astimezone(UTC):%Y%m%d-%H%M%S}"
    path, extra = directory / f"{stem}.{suffix}", 1
    while path.exists():  # two backups within one second
        path, extra = directory / f"{stem}-{extra}.{suffix}", extra + 1
    return path


def backup_create(*, directory: Path, progress: ProgressCallback | None = None,
                  now: datetime | None = None) -> Path:
    """Write a consistent copy of the database into `directory`; return its path."""
    private_dir_create(directory)  # the default, backups/ in the data dir, may be the data dir's first file
    now = now or datetime.now(UTC)
    if connection.vendor == "sqlite":
        target = _backup_path(directory, now, "sqlite3")
        _sqlite_backup(Path(connection.settings_dict["NAME"]), target, progress)
    else:
        target = _backup_path(directory, now, "pgdump")
        _pg_dump(target)
    return target


def _sqlite_backup(source: Path, target: Path, progress: ProgressCallback | None) -> None:
    partial = target.with_name(f".{target.name}.partial")
    try:
        with closing(sqlite3.connect(source, isolation_level=None, timeout=30)) as src, \
                closing(sqlite3.connect(partial)) as dst:
            src.execute("BEGIN")
            src.execute("SELECT count(*) FROM sqlite_master").fetchone()  # pins the read snapshot
            src.backup(dst, pages=STEP_PAGES,
                       progress=(lambda _status, remaining, total: progress(total - remaining, total))
                       if progress else None)
            src.execute("COMMIT")
            dst.execute("PRAGMA journal_mode=DELETE")  # a single self-contained file
        partial.chmod(0o600)
        partial.rename(target)
    finally:
        partial.unlink(missing_ok=True)


def _pg_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BackupError(f"{name} is not installed: install the PostgreSQL client tools (Debian: apt-get "
                          f"install postgresql-client) matching the server's version, or back up with the "
                          f"database's own tooling")
    return path


def _pg_environment(database: str | None = None) -> dict[str, str]:
    """libpq's variables for the configured database (the password travels in the environment, not argv)."""
    config = connection.settings_dict
    env = dict(os.environ)
    for variable, value in (("PGHOST", config.get("HOST")), ("PGPORT", config.get("PORT")),
                            ("PGUSER", config.get("USER")), ("PGPASSWORD", config.get("PASSWORD")),
                            ("PGDATABASE", database or config["NAME"])):
        if value:
            env[variable] = str(value)
    return env


def _run_tool(argv: list[str], env: dict[str, str]) -> None:
    result = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[0]
        raise BackupError(f"{Path(argv[0]).name} failed: {message}")


def _pg_dump(target: Path) -> None:
    partial = target.with_name(f".{target.name}.partial")
    try:
        _run_tool([_pg_tool("pg_dump"), "--format=custom", "--no-owner", f"--file={partial}"], _pg_environment())
        partial.chmod(0o600)
        partial.rename(target)
    finally:
        partial.unlink(missing_ok=True)


def backups_prune(*, directory: Path, keep_days: int, now: datetime | None = None) -> list[Path]:
    """Delete the backups in `directory` older than `keep_days` (by the time in their name); 0 keeps all."""
    if keep_days <= 0 or not directory.is_dir():
        return []
    cutoff = (now or datetime.now(UTC)) - timedelta(days=keep_days)
    removed = []
    for path in sorted(directory.iterdir()):
        match = BACKUP_NAME.match(path.name)
        if match and datetime.strptime(match.group(1), "%Y%m%d-%H%M%S").replace(tzinfo=UTC) < cutoff:
            path.unlink()
            removed.append(path)
    return removed


def backup_latest_time(directory: Path) -> datetime | None:
    """When the newest backup in `directory` was taken (by its name), or None."""
    times = [datetime.strptime(match.group(1), "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
             for match in map(BACKUP_NAME.match, os.listdir(directory) if directory.is_dir() else []) if match]
    return max(times, default=None)


def backup_when_due() -> Path | None:
    """The upkeep job: a backup when the newest one in RALPH_BACKUP_DIR is RALPH_BACKUP_EVERY old.

    Due-ness is read from the folder, not kept in the process, so a restart or another worker does not
    take an extra backup; the job is exclusive, so two processes never take one at the same time."""
    directory, now = backup_default_dir(), datetime.now(UTC)
    latest = backup_latest_time(directory)
    if latest is not None and now - latest < timedelta(seconds=settings.RALPH_BACKUP_EVERY):
        return None
    path = backup_create(directory=directory, now=now)
    backups_prune(directory=directory, keep_days=settings.RALPH_BACKUP_KEEP_DAYS, now=now)
    return path


def database_has_data() -> bool:
    """Whether any table of the data apps (sessions, ledger, conversations) has a row."""
    tables = set(connection.introspection.table_names())
    return any(model._meta.db_table in tables and model._default_manager.exists()
               for app in DATA_APPS for model in apps.get_app_config(app).get_models())


def _backup_kind(path: Path) -> str:
    if not path.is_file():
        raise BackupError(f"{path} is not a file")
    with open(path, "rb") as file:
        header = file.read(16)
    if header == b"SQLite format 3\x00":
        return "sqlite"
    if header.startswith(b"PGDMP"):
        return "postgresql"
    raise BackupError(f"{path} is not a Ralph Site backup (neither a SQLite database nor a pg_dump archive)")


def _sqlite_integrity(path: Path) -> str:
    try:
        with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)) as db:
            problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                raise BackupError(f"{path} fails SQLite's integrity check: {problems[0]}")
            broken = db.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise BackupError(f"{path} has {len(broken)} rows whose foreign key points nowhere "
                                  f"(first in table {broken[0][0]})")
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'django_migrations'").fetchone():
                raise BackupError(f"{path} is a SQLite database but not a Ralph Site one (no django_migrations)")
    except sqlite3.DatabaseError as error:
        raise BackupError(f"{path} is not a readable SQLite database: {error}") from None
    return "SQLite integrity_check ok, foreign_key_check ok"


def backup_restore(*, path: Path, force: bool, progress: ProgressCallback | None = None) -> None:
    """Replace the configured database's content with the backup's; refuse a database with data unless `force`."""
    kind = _backup_kind(path)
    if kind != connection.vendor:
        raise BackupError(f"{path} is a {kind} backup; this server's database is {connection.vendor}")
    if database_has_data() and not force:
        raise BackupError("the database already has data (sessions, events or conversations): stop the server "
                          "and pass --force to replace it with the backup")
    if kind == "sqlite":
        _sqlite_integrity(path)
        target = connection.settings_dict["NAME"]
        connection.close()
        with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)) as src, \
                closing(sqlite3.connect(target, timeout=30)) as dst:
            src.backup(dst, pages=STEP_PAGES,
                       progress=(lambda _status, remaining, total: progress(total - remaining, total))
                       if progress else None)
    else:
        connection.close()
        _run_tool([_pg_tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--single-transaction",
                   "--exit-on-error", f"--dbname={connection.settings_dict['NAME']}", str(path)], _pg_environment())


@contextmanager
def _scratch_database(kind: str, path: Path) -> Iterator[str]:
    """A throwaway database holding the backup's content; yields its DATABASE_URL."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="ralph-verify-") as scratch:
            copy = Path(scratch) / "verify.sqlite3"
            shutil.copyfile(path, copy)
            yield f"sqlite:///{copy}"
        return
    config = connection.settings_dict
    name = f"{config['NAME']}_verify_{os.getpid()}"
    quoted = connection.ops.quote_name(name)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {quoted}")
        cursor.execute(f"CREATE DATABASE {quoted}")
    try:
        _run_tool([_pg_tool("pg_restore"), "--no-owner", "--exit-on-error", f"--dbname={name}", str(path)],
                  _pg_environment(name))
        credentials = quote(config.get("USER") or "", safe="")
        if config.get("PASSWORD"):
            credentials += ":" + quote(config["PASSWORD"], safe="")
        yield (f"postgres://{credentials}@{config.get('HOST') or 'localhost'}:{config.get('PORT') or 5432}/"
               f"{quote(name, safe='')}")
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)")


def backup_verify(*, path: Path) -> VerifyReport:
    """Restore the backup into a scratch database, check its integrity and walk its ledger chain."""
    kind = _backup_kind(path)
    if kind == "sqlite":
        integrity = _sqlite_integrity(path)
    elif connection.vendor != "postgresql":
        raise BackupError(f"{path} is a PostgreSQL backup: verify it from a server configured for PostgreSQL")
    else:
        # pg_restore recreates every constraint after loading the data: a row that breaks one fails it.
        integrity = "pg_restore into a scratch database ok (every constraint re-checked)"
    with _scratch_database(kind, path) as url:
        # The chain walk runs in its own process against the scratch database (settings read DATABASE_URL),
        # without the anchors: they describe the live ledger, which has moved on since the backup.
        result = subprocess.run([sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), "ledger_verify",
                                 "--no-anchors"],
                                env={**os.environ, "DATABASE_URL": url}, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        problem = (result.stderr.strip().splitlines() or ["ledger_verify failed"])[-1]
        raise BackupError(f"{path}: {problem}")
    return VerifyReport(integrity=integrity, ledger=result.stdout.strip().splitlines()[-1])
