"""Operator commands that behave (issue #15 §5): one --older-than syntax with --dry-run for the
retention commands, one line instead of a traceback on an unmigrated database, a reset hint that
works when pasted, and `make run`'s "ready" line with first-run credentials after it."""

import os
import queue
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
import urllib.request
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.utils import timezone

from conversations_app.models import Chat, SyncStatus
from ledger_app.models import LedgerEvent
from ralphsite.core.management import parse_age
from ralphsite.server import gunicorn_conf
from sessions_app.models import Session, SessionStatus
from tests.benchmarks.server import free_port
from tests.ledger_app.factories import make_event, make_session

REPO = Path(settings.BASE_DIR)
COMMANDS = [["purge_sessions", "--older-than", "30d"], ["purge_deleted", "--older-than", "30d"],
            ["ledger_verify"], ["bootstrap"], ["reset_credentials"]]


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(("text", "expected"), [
    ("30d", timedelta(days=30)), ("12h", timedelta(hours=12)), ("90m", timedelta(minutes=90)),
    (" 7d ", timedelta(days=7)), ("36500d", timedelta(days=36_500))])
def test_it_reads_one_age_syntax(text: str, expected: timedelta) -> None:
    assert parse_age(text) == expected


@pytest.mark.django_db
@pytest.mark.parametrize("command", ["purge_sessions", "purge_deleted"])
@pytest.mark.parametrize(("age", "message"), [
    ("99999999d", "must be between 1d and 36500d"), ("52560001m", "must be between 1m and 36500d"),
    ("0h", "must be between 1h"), ("30", "use a whole number and a unit"), ("1w", "use a whole number"),
    ("9" * 40 + "d", "use a whole number")])
def test_both_retention_commands_refuse_absurd_ages_with_a_message(command: str, age: str, message: str) -> None:
    with pytest.raises(CommandError, match=message):
        _run(command, "--older-than", age)


@pytest.mark.django_db
def test_purge_sessions_dry_run_prints_what_it_would_remove_and_removes_nothing() -> None:
    old = make_session(status=SessionStatus.COMPLETED, ended_at=timezone.now() - timedelta(hours=13))
    make_event(old)
    kept = make_session(status=SessionStatus.COMPLETED, ended_at=timezone.now() - timedelta(hours=11))
    output = _run("purge_sessions", "--older-than", "12h", "--dry-run")
    assert output.startswith("Would remove 1 sessions") and "dry run: nothing removed" in output
    assert f"  {old.pk}" in output and kept.pk not in output and "ledger_app.LedgerEvent: 1" in output
    assert Session.objects.count() == 2 and LedgerEvent.objects.count() == 1
    output = _run("purge_sessions", "--older-than", "720m")
    assert output.startswith("Removed 1 sessions") and f"  {old.pk}" in output
    assert list(Session.objects.values_list("pk", flat=True)) == [kept.pk]


@pytest.mark.django_db
def test_purge_deleted_keeps_unsynced_tombstones_unless_told_and_has_a_dry_run() -> None:
    long_ago = timezone.now() - timedelta(days=40)
    synced = Chat.objects.create(title="synced", is_deleted=True, deleted_at=long_ago, sync_status=SyncStatus.SYNCED)
    unsynced = Chat.objects.create(title="unsynced", is_deleted=True, deleted_at=long_ago)
    assert unsynced.sync_status == SyncStatus.PENDING
    output = _run("purge_deleted", "--older-than", "30d", "--dry-run")
    assert output.startswith("Would purge 1 chat(s)") and synced.pk in output and unsynced.pk not in output
    assert Chat.objects.count() == 2
    assert synced.pk in _run("purge_deleted", "--older-than", "30d")
    assert list(Chat.objects.values_list("pk", flat=True)) == [unsynced.pk]
    assert unsynced.pk in _run("purge_deleted", "--older-than", "30d", "--include-unsynced")
    assert not Chat.objects.exists()


def _manage(data_dir: Path, *args: str, database_url: str | None = None) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["RALPH_DATA_DIR"] = str(data_dir)
    if database_url:
        env["DATABASE_URL"] = database_url
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.smoke
@pytest.mark.sqlite_only  # a data dir with no DATABASE_URL
def test_every_command_on_a_missing_database_says_so_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    for command in COMMANDS:
        done = _manage(tmp_path / "data", *command)
        assert done.returncode == 1, (command, done.stderr)
        assert done.stderr.count("\n") == 1 and "No database at" in done.stderr, (command, done.stderr)
        assert "manage.py migrate" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "data").exists()  # not even the data dir


@pytest.mark.smoke
@pytest.mark.sqlite_only  # an empty SQLite file
def test_a_command_on_an_unmigrated_database_says_so_and_writes_nothing(tmp_path: Path) -> None:
    database = tmp_path / "empty.db"
    sqlite3.connect(database).close()
    done = _manage(tmp_path, "purge_sessions", "--older-than", "30d", database_url=f"sqlite:///{database}")
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "is not migrated" in done.stderr and "migrations to apply" in done.stderr
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT name FROM sqlite_master").fetchall() == []


@pytest.mark.smoke
@pytest.mark.django_db
def test_the_reset_hint_runs_when_pasted(settings, tmp_path: Path) -> None:
    settings.DATA_DIR = tmp_path
    _run("bootstrap")
    hint = _run("bootstrap").split("To get new ones: ", 1)[1].strip()
    python, manage, command = shlex.split(hint)
    assert command == "reset_credentials" and Path(manage).resolve() == REPO / "manage.py"
    assert Path(python).resolve() == Path(sys.executable).resolve()
    done = subprocess.run(f"{hint} --help", shell=True, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "a new random password" in done.stdout, done.stderr


@pytest.mark.django_db
def test_make_run_prints_ready_then_the_first_run_credentials_once(settings, tmp_path: Path, capsys) -> None:
    settings.DATA_DIR = tmp_path
    bootstrap = _run("bootstrap", "--show-when-ready")
    assert "API token: " not in bootstrap and "once it is ready" in bootstrap
    gunicorn_conf._ready_announce()
    first = capsys.readouterr().out.splitlines()
    assert first[0].startswith("Ralph Site ready at http://")
    assert "Ralph Site credentials" in first[1] and any("API token: " in line for line in first[2:])
    gunicorn_conf._ready_announce()  # a later start: the ready line only
    assert capsys.readouterr().out.splitlines() == first[:1]


def _make_run_commands(venv: Path) -> list[str]:
    """The commands `make run` runs, read from the Makefile (`make -n`, its install step taken as done:
    the suite runs in the installed virtualenv)."""
    done = subprocess.run(["make", "--no-print-directory", "-s", "-n", "-o", f"{venv}/.installed-run", "run",
                           f"VENV={venv}"], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip().splitlines()


class _Output:
    """A process's stdout, line by line, read by a thread: a test waits for a line without sleeping."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next(self) -> str | None:
        return self.lines.get(timeout=120)


def _serve_as_make_run(commands: list[str], env: dict[str, str]) -> tuple[str, list[str]]:
    """Run `make run`'s commands: the output of the ones before the server, then the server's first
    lines until it is stopped. The ready line must come once the port serves: /healthz answers at
    the moment it is read."""
    *setup, serve = commands
    before = "".join(subprocess.run(command, shell=True, cwd=REPO, env=env, capture_output=True, text=True,
                                    timeout=300, check=True).stdout for command in setup)
    server = subprocess.Popen(serve, shell=True, cwd=REPO, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        output = _Output(server)
        ready = output.next()
        assert ready is not None and ready.startswith("Ralph Site ready at http://"), ready
        url = f"http://{env['RALPH_HOST']}:{env['RALPH_PORT']}/healthz"
        with urllib.request.urlopen(url, timeout=30) as health:
            assert health.status == 200
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    return before, [ready, *iter(output.next, None)]


@pytest.mark.smoke
@pytest.mark.sqlite_only  # `make run` on a data dir with no DATABASE_URL
@pytest.mark.long
def test_make_run_serves_then_prints_ready_and_the_credentials_and_a_second_run_the_reset_hint(
        tmp_path: Path) -> None:
    venv = Path(sys.executable).parent.parent
    commands = _make_run_commands(venv)
    assert [shlex.split(command)[1:3] for command in commands] == [
        ["manage.py", "migrate"], ["manage.py", "collectstatic"], ["manage.py", "bootstrap"],
        ["ralphsite.wsgi:application", "--config"]], commands
    env = {name: value for name, value in os.environ.items() if name != "DATABASE_URL"}  # SQLite in the data dir
    env |= {"RALPH_DATA_DIR": str(tmp_path / "data"), "RALPH_HOST": "127.0.0.1", "RALPH_PORT": str(free_port()),
            "RALPH_WORKERS": "1", "RALPH_THREADS": "1"}

    before, served = _serve_as_make_run(commands, env)
    assert "API token: " not in before and "once it is ready" in before
    assert served[0] == f"Ralph Site ready at http://127.0.0.1:{env['RALPH_PORT']}/ (admin " \
                        f"http://127.0.0.1:{env['RALPH_PORT']}/admin/, API http://127.0.0.1:{env['RALPH_PORT']}/api/v1/)"
    assert served[1] == "Ralph Site credentials (shown once; keep them safe):"
    assert any(line.startswith("  API token: ") for line in served[2:])

    before, served = _serve_as_make_run(commands, env)
    assert len(served) == 1 and served[0].startswith("Ralph Site ready at http://")  # no credentials again
    hint = before.split("To get new ones: ", 1)[1].strip()
    reset = subprocess.run(hint, shell=True, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert reset.returncode == 0 and "API token: " in reset.stdout, reset.stderr
