"""manage.py backup / restore / backup --verify on the configured backend, with real writers and real files."""

import sqlite3
import threading
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.db import connection
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent
from ralphsite.core import upkeep_jobs
from ralphsite.core.env import env_duration
from ralphsite.moving import backup as backup_module
from ralphsite.moving.backup import backup_when_due, backups_prune
from ralphsite.tokens.services import MintedToken
from sessions_app.models import Session
from tests.concurrency import api_in_threads
from tests.ledger_app.factories import make_event, make_session

WRITERS = 4


def _backup(directory: Path, *args: str) -> Path:
    out = StringIO()
    call_command("backup", "--to", str(directory), *args, stdout=out, stderr=StringIO())
    written = [line for line in out.getvalue().splitlines() if line.startswith("backup written: ")]
    assert len(written) == 1, out.getvalue()
    return Path(written[0].removeprefix("backup written: ").rsplit(" (", 1)[0])


def _verify(path: Path) -> str:
    out = StringIO()
    call_command("backup", "--verify", str(path), stdout=out)
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_it_takes_a_consistent_backup_while_4_writers_append_and_the_backup_verifies(
        token: MintedToken, tmp_path: Path) -> None:
    session = make_session()
    stop = threading.Event()
    # The backup starts once every writer has 3 batches in (the count asserted below), and they go on.
    under_way = threading.Barrier(WRITERS + 1, timeout=30)
    backups: list[Path] = []

    def work(client: APIClient, index: int) -> None:
        if index == WRITERS:  # the backup thread: wait until the writers are under way
            under_way.wait()
            try:
                backups.append(_backup(tmp_path))
            finally:
                stop.set()
            return
        batch_number = 0
        while not stop.is_set() and batch_number < 400:
            batch = [{"session": session.id, "type": "x-load", "tokens_in": 1, "cost_usd": "0",
                      "data": {"w": index, "i": i},
                      "idempotency_key": f"w{index}-b{batch_number}-{i}"} for i in range(10)]
            response = client.post("/api/v1/events/", batch, format="json")
            assert response.status_code == 201, response.content
            batch_number += 1
            if batch_number == 3:
                under_way.wait()

    api_in_threads(WRITERS + 1, token, work)
    [path] = backups
    assert path.name.startswith("ralph-") and path.stat().st_size > 0
    report = _verify(path)
    assert "ledger chain intact" in report and "ok" in report
    assert LedgerEvent.objects.filter(session=session).count() >= 4 * 3 * 10
    if connection.vendor == "sqlite":  # the copy holds a prefix of what the writers wrote, whole batches only
        with sqlite3.connect(path) as copy:
            copied = copy.execute("SELECT count(*) FROM ledger_app_ledgerevent WHERE type = 'x-load'").fetchone()[0]
        assert copied % 10 == 0 and 0 < copied <= LedgerEvent.objects.filter(session=session).count()


@pytest.mark.django_db(transaction=True)
def test_it_restores_only_over_an_empty_database_unless_forced(tmp_path: Path) -> None:
    kept = make_session(key="in-the-backup")
    make_event(kept, 1)
    path = _backup(tmp_path)
    make_session(key="after-the-backup")

    with pytest.raises(CommandError, match=r"already has data.*--force"):
        call_command("restore", str(path), stdout=StringIO(), stderr=StringIO())
    assert Session.objects.filter(key="after-the-backup").exists()

    call_command("restore", str(path), "--force", stdout=StringIO(), stderr=StringIO())
    assert list(Session.objects.values_list("key", flat=True)) == ["in-the-backup"]
    assert LedgerEvent.objects.filter(session_id=kept.id).count() == 1
    out = StringIO()
    call_command("ledger_verify", stdout=out, stderr=StringIO())
    assert "intact" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_it_refuses_files_that_are_not_backups(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    for command in (["restore", str(text)], ["backup", "--verify", str(text)]):
        with pytest.raises(CommandError, match="is not a Ralph Site backup"):
            call_command(*command, stdout=StringIO(), stderr=StringIO())
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    if connection.vendor == "sqlite":
        with pytest.raises(CommandError, match="not a Ralph Site one"):
            call_command("backup", "--verify", str(other), stdout=StringIO())
    else:
        with pytest.raises(CommandError, match="is a sqlite backup; this server's database is postgresql"):
            call_command("restore", str(other), stdout=StringIO())
    with pytest.raises(CommandError, match="is not a file"):
        call_command("backup", "--verify", str(tmp_path / "missing.sqlite3"), stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_it_finds_a_ledger_event_changed_inside_a_backup(tmp_path: Path) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("edits the SQLite backup file in place; a pg_dump archive is binary")
    session = make_session()
    for index in range(3):
        make_event(session, index)
    path = _backup(tmp_path)
    with sqlite3.connect(path) as db:
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            db.execute(f'DROP TRIGGER "{name}"')
        db.execute("UPDATE ledger_app_ledgerevent SET message = 'rewritten' WHERE task_key = 'task-1'")
    with pytest.raises(CommandError, match="BROKEN"):
        _verify(path)


def test_it_prunes_only_backups_older_than_the_kept_days(tmp_path: Path) -> None:
    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    names = ["ralph-20261110-120000.sqlite3", "ralph-20261118-115959.pgdump", "ralph-20261118-120001.sqlite3",
             "ralph-20261125-110000-1.sqlite3", "ralph-20261101-000000.txt", "notes.sqlite3"]
    for name in names:
        (tmp_path / name).write_text("x")
    removed = backups_prune(directory=tmp_path, keep_days=7, now=now)
    assert sorted(path.name for path in removed) == names[:2]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(names[2:])
    assert backups_prune(directory=tmp_path, keep_days=0, now=now) == []


@pytest.mark.django_db(transaction=True)
def test_it_prunes_old_backups_after_taking_one(tmp_path: Path) -> None:
    (tmp_path / "ralph-20200101-000000.sqlite3").write_text("old")
    out = StringIO()
    call_command("backup", "--to", str(tmp_path), "--keep-days", "7", stdout=out, stderr=StringIO())
    assert "removed backup older than 7 days" in out.getvalue()
    assert not (tmp_path / "ralph-20200101-000000.sqlite3").exists()
    assert len(list(tmp_path.glob("ralph-*"))) == 1


@pytest.mark.django_db(transaction=True)
def test_it_says_what_to_install_when_pg_dump_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite backups need no client tool")
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without the PostgreSQL client tools
    with pytest.raises(CommandError, match="pg_dump is not installed: install the PostgreSQL client tools"):
        call_command("backup", "--to", str(tmp_path / "out"), stdout=StringIO())


@pytest.mark.django_db(transaction=True)
def test_the_upkeep_job_backs_up_when_the_newest_backup_is_old_enough(
        tmp_path: Path, settings, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.RALPH_BACKUP_DIR, settings.RALPH_BACKUP_EVERY, settings.RALPH_BACKUP_KEEP_DAYS = str(tmp_path), 3600, 7
    (tmp_path / "ralph-20200101-000000.sqlite3").write_text("old")
    first = backup_when_due()
    assert first is not None and first.exists()
    assert backup_when_due() is None  # the folder's newest backup is minutes old
    assert [path.name for path in tmp_path.glob("ralph-*")] == [first.name]  # the 2020 one was pruned

    monkeypatch.setattr(upkeep_jobs, "_jobs", {})
    apps.get_app_config("ralphsite").ready()
    job = upkeep_jobs._jobs["backup"]
    assert job.exclusive and job.run is backup_module.backup_when_due


@pytest.mark.parametrize(("raw", "seconds"), [("24h", 86400), ("30min", 1800), ("7d", 604800), ("90", 90),
                                              ("off", None), ("", None)])
def test_it_reads_backup_periods(raw: str, seconds: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RALPH_BACKUP_EVERY", raw)
    assert env_duration("RALPH_BACKUP_EVERY", "off") == seconds


@pytest.mark.parametrize("raw", ["24x", "h", "-1h", "0h", "1.5h"])
def test_it_refuses_a_period_it_cannot_read(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RALPH_BACKUP_EVERY", raw)
    with pytest.raises(ImproperlyConfigured, match="RALPH_BACKUP_EVERY"):
        env_duration("RALPH_BACKUP_EVERY", "off")
