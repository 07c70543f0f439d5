"""Start and stop the real server for the benchmark, the way `make run` does, on throw-away state.

A fresh RALPH_DATA_DIR under a temp dir, a free loopback port, a copy of a database migrated once per
process (then `manage.py migrate`, which finds nothing to apply), then gunicorn
with ralphsite/server/gunicorn_conf.py. With DATABASE_URL set, a throw-away PostgreSQL database next to the
named one is created first and dropped at the end; the user's database is never touched.
"""

import atexit
import contextlib
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from tests.benchmarks.client import LOOPBACK, BenchClient

REPO_DIR = Path(__file__).resolve().parents[2]
BIN_DIR = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _pg_admin_connect(base_url: str):  # -> psycopg.Connection
    import psycopg

    parts = urlsplit(base_url)
    # CREATE/DROP DATABASE run from the maintenance database, never from the user's one.
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    return psycopg.connect(admin_url, autocommit=True)


@dataclass
class ThrowAwayDatabase:
    """The DATABASE_URL the server and the seeding use, plus how to drop it afterwards."""

    url: str
    vendor: str
    pg_name: str | None = None
    pg_base_url: str | None = None

    @classmethod
    def create(cls, *, data_dir: Path, base_url: str | None,
               template: "ThrowAwayDatabase | None" = None) -> "ThrowAwayDatabase":
        """A new empty database, or a copy of `template` (one of the same kind)."""
        if not base_url:
            path = data_dir / "ralph.db"
            if template is not None:  # SQLite's backup: a consistent copy whatever its journal holds
                with contextlib.closing(sqlite3.connect(urlsplit(template.url).path)) as source, \
                        contextlib.closing(sqlite3.connect(path)) as copy:
                    source.backup(copy)
            return cls(url=f"sqlite:///{path}", vendor="sqlite")
        parts = urlsplit(base_url)
        if not parts.scheme.startswith("postgres"):
            raise SystemExit(f"bench: DATABASE_URL scheme {parts.scheme!r} is not supported (sqlite or postgres)")
        base_name = parts.path.lstrip("/") or "ralph"
        name = f"{base_name}_bench_{os.getpid()}_{secrets.token_hex(3)}"
        with _pg_admin_connect(base_url) as conn:
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template.pg_name}"' if template else ""))
        return cls(url=urlunsplit(parts._replace(path=f"/{name}")), vendor="postgresql", pg_name=name,
                   pg_base_url=base_url)

    def drop(self) -> None:
        if self.pg_name and self.pg_base_url:
            with _pg_admin_connect(self.pg_base_url) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.pg_name}" WITH (FORCE)')


@dataclass
class BenchServer:
    """gunicorn on a throw-away data dir; use as a context manager so it is always stopped.

    The benchmark serves `bench_wsgi` (the project plus an HTTP floor); tests serve the project's
    own `ralphsite.wsgi` with `app=` and may set environment variables with `env_extra=`.
    """

    workers: int | None = None
    threads: int | None = None
    gunicorn_args: list[str] = field(default_factory=list)
    keep: bool = False
    # The database to create (a throw-away one next to it), None for SQLite in the data dir.
    database_url: str | None = field(default_factory=lambda: os.environ.get("DATABASE_URL"))
    # Another server's database, already migrated: this one is a further app host on it (not dropped here).
    shared_database: "ThrowAwayDatabase | None" = None
    app: str = "ralphsite.server.bench_wsgi:application"
    env_extra: dict[str, str] = field(default_factory=dict)
    port: int = 0
    token: str = ""
    temp_dir: Path | None = None
    data_dir: Path | None = None
    database: ThrowAwayDatabase | None = None
    _process: subprocess.Popen | None = None
    _log_path: Path | None = None

    def env(self) -> dict[str, str]:
        assert self.data_dir is not None and self.database is not None
        env = dict(os.environ)
        env.update({
            "RALPH_DATA_DIR": str(self.data_dir),
            "DATABASE_URL": self.database.url,
            "RALPH_HOST": LOOPBACK,
            "RALPH_PORT": str(self.port),
            "DJANGO_SETTINGS_MODULE": "ralphsite.settings",
            "DEBUG": "0",
            "RALPH_ACCESS_LOG": "",
            # One token sends every request: the throttle runs (its count is measured) but never refuses.
            "RALPH_API_THROTTLE_RATE": "100000000/min",
        })
        if self.workers:
            env["RALPH_WORKERS"] = str(self.workers)
        if self.threads:
            env["RALPH_THREADS"] = str(self.threads)
        env.update(self.env_extra)
        return env

    def __enter__(self) -> "BenchServer":
        try:
            self._prepare()
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _prepare(self) -> None:
        self.temp_dir = Path(tempfile.mkdtemp(prefix="ralph-bench-"))
        self.data_dir = self.temp_dir / "data"
        self.data_dir.mkdir()
        self.port = free_port()
        self._log_path = self.temp_dir / "gunicorn.log"
        if self.shared_database is not None:
            self.database = self.shared_database
            _progress(f"bench: data dir {self.data_dir}, shared {self.database.vendor} database, port {self.port}")
            return
        self.database = ThrowAwayDatabase.create(data_dir=self.data_dir, base_url=self.database_url,
                                                 template=_migrated_template(self.database_url))
        _progress(f"bench: data dir {self.data_dir}, database {self.database.vendor}, port {self.port}")
        # On the copy there is nothing left to apply: this gives the data dir its secret key, as `make run` does.
        _migrate(self.env())

    def _start(self) -> None:
        command = [str(BIN_DIR / "gunicorn"), self.app,
                   "--config", "python:ralphsite.server.gunicorn_conf", *self.gunicorn_args]
        with open(self._log_path, "wb") as log:  # type: ignore[arg-type]
            # Own process group: stop() kills gunicorn and every worker with one signal.
            self._process = subprocess.Popen(command, cwd=REPO_DIR, env=self.env(), stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_ready(timeout=60.0)

    def _wait_ready(self, *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self._process.returncode}:\n{self.log_tail()}")
            client = BenchClient(port=self.port, token=None, timeout=2.0)
            try:
                if client.request("GET", "/healthz").status == 200:
                    return
            except OSError:
                pass
            finally:
                client.close()
            time.sleep(0.1)
        raise RuntimeError(f"gunicorn did not answer /healthz within {timeout:.0f}s:\n{self.log_tail()}")

    @property
    def pid(self) -> int | None:
        """gunicorn's master process (its workers are its children)."""
        return self._process.pid if self._process is not None else None

    def admin_token(self) -> str:
        """The API token of the admin user, created the way `make run` does (`admin_bootstrap`)."""
        code = ("import django; django.setup(); from ralphsite.tokens.credentials import admin_bootstrap; "
                "print(admin_bootstrap().token)")
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO_DIR, env=self.env(), check=True,
                              capture_output=True, text=True)
        return done.stdout.strip().splitlines()[-1]

    def log_tail(self, lines: int = 30) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        return "\n".join(self._log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop_process(self) -> None:
        """gunicorn and its workers stopped; the data dir and the database stay (`start_process` serves them again)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
            except ProcessLookupError:
                pass

    def start_process(self) -> None:
        """gunicorn again, on the same port, data dir and database, after `stop_process`."""
        self._start()

    def stop(self) -> None:
        self.stop_process()
        database, self.database = self.database, None
        if database is not None and database is not self.shared_database:
            try:
                database.drop()
            except Exception as exc:  # the report must still print; say what was left behind
                _progress(f"bench: could not drop database {database.pg_name}: {exc}")
        if self.temp_dir is not None and not self.keep:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        elif self.temp_dir is not None:
            _progress(f"bench: kept {self.temp_dir}")


def _migrate(env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "--verbosity", "0"],
                   cwd=REPO_DIR, env=env, check=True)


_TEMPLATES: dict[str | None, ThrowAwayDatabase] = {}


def _migrated_template(base_url: str | None) -> ThrowAwayDatabase:
    """A database migrated once per process and kind, which each server's database copies: applying every
    migration takes seconds (a file copy or PostgreSQL's CREATE DATABASE … TEMPLATE, next to nothing).
    Dropped when the process exits."""
    if base_url not in _TEMPLATES:
        folder = Path(tempfile.mkdtemp(prefix="ralph-template-"))
        template = ThrowAwayDatabase.create(data_dir=folder, base_url=base_url)
        _migrate({**os.environ, "RALPH_DATA_DIR": str(folder), "DATABASE_URL": template.url,
                  "DJANGO_SETTINGS_MODULE": "ralphsite.settings"})
        atexit.register(template.drop)
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _TEMPLATES[base_url] = template
    return _TEMPLATES[base_url]


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
