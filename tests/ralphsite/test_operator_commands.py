"""Operator commands that behave (issue #15 §5): one --older-than syntax with --dry-run for the
retention commands, one line instead of a traceback on an unmigrated database, a reset hint that
works when pasted, and `make run`'s "ready" line with first-run credentials after it."""

import os
import shlex
import sqlite3
import subprocess
import sys
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.utils import timezone

from conversations_app.models import Chat, SyncStatus
from ledger_app.models import LedgerEvent
from ralphsite.management.base import parse_age
from ralphsite.server import gunicorn_conf
from sessions_app.models import Session, SessionStatus
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


def test_every_command_on_a_missing_database_says_so_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    for command in COMMANDS:
        done = _manage(tmp_path, *command)
        assert done.returncode == 1, (command, done.stderr)
        assert done.stderr.count("\n") == 1 and "No database at" in done.stderr, (command, done.stderr)
        assert "manage.py migrate" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.glob("*.db*"))


def test_a_command_on_an_unmigrated_database_says_so_and_writes_nothing(tmp_path: Path) -> None:
    database = tmp_path / "empty.db"
    sqlite3.connect(database).close()
    done = _manage(tmp_path, "purge_sessions", "--older-than", "30d", database_url=f"sqlite:///{database}")
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "is not migrated" in done.stderr and "migrations to apply" in done.stderr
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT name FROM sqlite_master").fetchall() == []


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
