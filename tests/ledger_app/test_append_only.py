"""Ledger events are append-only in the database itself; purge_sessions is the one way out."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, DatabaseError, IntegrityError, connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app import services
from ledger_app.append_only import HEAD_TABLE, TABLE, TRIGGER_NAMES, installed_triggers
from ledger_app.models import Checkpoint, Issue, LedgerEvent, RetentionRange, RetentionRun
from sessions_app.models import Session, SessionStatus
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import make_event, make_session

pytestmark = pytest.mark.django_db


def _raw(sql: str, params: list | None = None) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params or [])


def test_it_has_the_triggers_after_all_migrations() -> None:
    assert TRIGGER_NAMES[connection.vendor] <= installed_triggers(connection)


def test_it_rejects_a_raw_update() -> None:
    event = make_event(make_session())
    with pytest.raises(IntegrityError, match="append-only"):
        _raw(f"UPDATE {TABLE} SET message = %s WHERE id = %s", ["rewritten", event.id])
    event.refresh_from_db()
    assert event.message == "event 0"


def test_it_rejects_a_raw_delete() -> None:
    event = make_event(make_session())
    with pytest.raises(IntegrityError, match="append-only"):
        _raw(f"DELETE FROM {TABLE} WHERE id = %s", [event.id])
    assert LedgerEvent.objects.filter(pk=event.id).exists()


def test_it_rejects_an_orm_update_and_delete() -> None:
    event = make_event(make_session())
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEvent.objects.filter(pk=event.id).update(message="x")
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEvent.objects.filter(pk=event.id).delete()
    assert LedgerEvent.objects.get(pk=event.id).message == "event 0"


@pytest.mark.django_db(transaction=True)  # PostgreSQL refuses TRUNCATE with pending FK checks
def test_it_rejects_truncate_on_postgresql_and_delete_all_on_sqlite() -> None:
    make_event(make_session())
    # CASCADE: the retention tables reference events; the trigger refuses before anything is truncated.
    statement = f"TRUNCATE {TABLE} CASCADE" if connection.vendor == "postgresql" else f"DELETE FROM {TABLE}"
    with pytest.raises(IntegrityError, match="append-only"):
        _raw(statement)
    assert LedgerEvent.objects.count() == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "sqlite", reason="another program opening the SQLite file")
def test_it_no_function_a_connection_registers_lets_a_delete_through_on_sqlite() -> None:
    """Issue #28 §3: any SQLite connection could register the old `ralph_ledger_purge_allowed()`."""
    make_event(make_session())  # committed: this test is transactional
    outsider = sqlite3.connect(connection.settings_dict["NAME"])
    outsider.create_function("ralph_ledger_purge_allowed", 0, lambda: 1)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            outsider.execute(f"DELETE FROM {TABLE}")
        with pytest.raises(sqlite3.IntegrityError, match="ledger_chain_head"):
            outsider.execute(f"DELETE FROM {HEAD_TABLE}")
    finally:
        outsider.close()
    assert LedgerEvent.objects.count() == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's settings and roles")
def test_it_no_setting_a_session_makes_lets_a_delete_through_on_postgresql() -> None:
    """Issue #28 §3: any role could `SET LOCAL ralph.ledger_purge = 'on'`; and an application role that
    is not a superuser cannot skip triggers (`session_replication_role`) either."""
    event = make_event(make_session())
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL ralph.ledger_purge = 'on'")
        cursor.execute(f"DELETE FROM {TABLE} WHERE id = %s", [event.id])
    with pytest.raises(IntegrityError, match="ledger_chain_head"), transaction.atomic(), \
            connection.cursor() as cursor:
        cursor.execute("SET LOCAL ralph.ledger_purge = 'on'")
        cursor.execute(f"DELETE FROM {HEAD_TABLE}")
    with connection.cursor() as cursor:  # rolled back with the test's transaction, role included
        cursor.execute("CREATE ROLE ralph_test_application NOLOGIN")
        cursor.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {TABLE}, {HEAD_TABLE} TO ralph_test_application")
    with pytest.raises(DatabaseError, match="permission denied"), transaction.atomic(), \
            connection.cursor() as cursor:
        cursor.execute("SET LOCAL ROLE ralph_test_application")
        cursor.execute("SET LOCAL session_replication_role = replica")
    assert LedgerEvent.objects.filter(pk=event.id).exists()


def test_it_deletes_only_events_the_heads_retention_record_covers() -> None:
    """A purge appends its record and ranges first: the trigger lets the DELETE through for those
    events only, and only while that record is the chain head."""
    purged, kept = make_session(status=SessionStatus.COMPLETED), make_session()
    first = make_event(purged)
    other = make_event(kept)
    later = make_event(purged)
    with transaction.atomic():
        record = services.ledger_events_purge(session_ids=[purged.id], reason="test")
        # Inside the purge's transaction, after it: its record is the head, but covers only its events.
        with pytest.raises(IntegrityError, match="append-only"):
            _raw(f"DELETE FROM {TABLE} WHERE id = %s", [other.id])
    assert not LedgerEvent.objects.filter(pk__in=[first.id, later.id]).exists()
    assert list(record.retention_ranges.values_list("first_id", "last_id")) == [(first.id, first.id),
                                                                                 (later.id, later.id)]
    # A range added to that record later opens nothing once another event is the head.
    make_event(kept)
    RetentionRange.objects.create(retention_event=record, first_id=other.id, last_id=other.id, events=1,
                                  prev_hash=other.prev_hash, last_hash=other.hash)
    with pytest.raises(IntegrityError, match="append-only"):
        _raw(f"DELETE FROM {TABLE} WHERE id = %s", [other.id])
    assert LedgerEvent.objects.filter(pk=other.id).exists()


def test_it_the_api_offers_no_update_or_delete_on_events(api: APIClient) -> None:
    event = make_event(make_session())
    url = f"/api/v1/events/{event.id}/"
    assert_error_shape(api.patch(url, {"message": "x"}, format="json"), 405, "method_not_allowed")
    assert_error_shape(api.put(url, {"message": "x"}, format="json"), 405, "method_not_allowed")
    assert_error_shape(api.delete(url), 405, "method_not_allowed")


def test_it_an_orm_delete_of_a_session_whose_events_were_not_purged_is_refused_by_the_database() -> None:
    """The delete service and purge_sessions purge first (tests/sessions_app/test_deletes.py); the
    foreign key stops any other path."""
    session = make_session(status=SessionStatus.COMPLETED, ended_at=timezone.now())
    make_event(session)
    with pytest.raises(IntegrityError), transaction.atomic():
        Session.objects.filter(pk=session.id).delete()
        connection.check_constraints()  # the check a commit makes (the test's transaction never commits)
    assert LedgerEvent.objects.filter(session=session.id).count() == 1


def test_it_purge_removes_only_old_ended_sessions_and_records_it() -> None:
    now = timezone.now()
    old = make_session(status=SessionStatus.COMPLETED, ended_at=now - timedelta(days=91))
    recent = make_session(status=SessionStatus.COMPLETED, ended_at=now - timedelta(days=10))
    running = make_session(status=SessionStatus.RUNNING)
    for session in (old, recent, running):
        make_event(session, 0)
        make_event(session, 1)
    Issue.objects.create(session=old, task_key="t", kind="lint", signature="s", message="m")
    Checkpoint.objects.create(key="chkpt-old", session=old)
    out = StringIO()
    call_command("purge_sessions", "--older-than", "90d", stdout=out)
    assert "Removed 1 sessions" in out.getvalue()
    assert set(Session.objects.values_list("pk", flat=True)) == {recent.id, running.id}
    assert LedgerEvent.objects.filter(session=old.id).count() == 0
    assert LedgerEvent.objects.exclude(session__isnull=True).count() == 4
    run = RetentionRun.objects.get()
    assert run.sessions_removed == 1 and run.session_ids == [old.id] and run.older_than_days == 90
    assert run.retention_event.data["sessions"] == [old.id]  # the record in the chain (tests/ledger_app/test_chain.py)
    assert run.rows_removed == {"ledger_app.LedgerEvent": 2, "sessions_app.Session": 1, "ledger_app.Issue": 1}
    assert Checkpoint.objects.get().session_id is None  # seed 003 keeps checkpoints without a foreign key


def test_it_after_a_purge_raw_deletes_are_rejected_again() -> None:
    event = make_event(make_session())
    call_command("purge_sessions", "--older-than", "90d", stdout=StringIO())
    with pytest.raises(IntegrityError):
        _raw(f"DELETE FROM {TABLE} WHERE id = %s", [event.id])


def test_it_purge_refuses_a_malformed_age() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="a whole number and a unit"):
        call_command("purge_sessions", "--older-than", "ninety", stdout=StringIO())


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the guard against INSERT OR REPLACE is SQLite's trigger")
def test_it_checks_an_idempotency_key_on_its_index_however_long_the_session() -> None:
    """The no-replace trigger looks the key up on the partial unique index: the work of one keyed
    append (SQLite virtual-machine steps, counted by a progress handler) does not grow with the
    session's events. When the trigger's condition did not match the index's, every append scanned
    the session and a 25,000-event ledger took 20 s per 5,000 appends."""
    session = make_session()
    connection.ensure_connection()
    raw = connection.connection

    def steps_of_one_append(existing: int) -> int:
        have = LedgerEvent.objects.filter(session=session).count()
        LedgerEvent.objects.bulk_create([LedgerEvent(session=session, type="x-note", idempotency_key=f"seed-{n}")
                                         for n in range(have, existing)])
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0
        raw.set_progress_handler(count, 50)
        try:
            LedgerEvent.objects.bulk_create([LedgerEvent(session=session, type="x-note",
                                                         idempotency_key=f"probe-{existing}")])
        finally:
            raw.set_progress_handler(None, 50)
        return steps[0]

    few, many = steps_of_one_append(50), steps_of_one_append(3_000)
    assert many < few * 2, (few, many)


@contextmanager
def _login_role(name: str) -> Iterator[BaseDatabaseWrapper]:
    """A LOGIN role granted exactly what docs/operations.md grants the server (rows of every table, the sequences;
    no ownership, no superuser), created and dropped on a connection of the suite's own (committed: a new login
    must see it), and a connection logged in as it (no password: the test server trusts 127.0.0.1), which is the
    default connection meanwhile, so the services run on it. The role's name is the test database's own (one per
    xdist worker)."""
    suite = connections[DEFAULT_DB_ALIAS]
    admin = type(suite)({**suite.settings_dict, "OPTIONS": _unpooled()}, alias="role_admin")

    def drop(cursor: Any) -> None:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name])
        if cursor.fetchone():
            cursor.execute(f'DROP OWNED BY "{name}"')  # its grants in this database
            cursor.execute(f'DROP ROLE "{name}"')

    with admin.cursor() as cursor:
        drop(cursor)  # one a crashed run left
        cursor.execute(f'CREATE ROLE "{name}" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE')
        cursor.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "{name}"')
        cursor.execute(f'GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "{name}"')
    app = type(suite)({**suite.settings_dict, "USER": name, "PASSWORD": "", "OPTIONS": _unpooled()},
                      alias="role_app")  # an alias of its own: the pool is per alias
    connections[DEFAULT_DB_ALIAS] = app
    try:
        yield app
    finally:
        connections[DEFAULT_DB_ALIAS] = suite
        app.close()
        with admin.cursor() as cursor:
            drop(cursor)
        admin.close()


def _unpooled() -> dict[str, Any]:
    return {name: value for name, value in connection.settings_dict["OPTIONS"].items() if name != "pool"}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's roles")
def test_the_application_role_operations_md_describes_runs_the_ledger_and_cannot_switch_its_guards_off() -> None:
    """Issue #28 §3, the role split for real: logged in as a role granted exactly what docs/operations.md grants the
    server, the services append and purge, and no switch a table's owner or a superuser has turns the ledger's
    guards off: disable or drop a trigger, replace its function, skip triggers (`session_replication_role`), make
    itself a superuser, or SET ROLE to the suite's own login. All of it in one transaction rolled back at the end
    (the role's connection is not the test's, whose transaction would have undone it)."""
    role = f"ralph_app_{connection.settings_dict['NAME']}"[:63]
    suite_user = connection.settings_dict["USER"]
    with _login_role(role) as app, transaction.atomic():
        with app.cursor() as cursor:
            cursor.execute("SELECT current_user, session_user")
            assert cursor.fetchone() == (role, role)
        purged, kept = make_session(status=SessionStatus.COMPLETED, ended_at=timezone.now()), make_session()
        first, other = make_event(purged), make_event(kept)
        services.ledger_events_purge(session_ids=[purged.id], reason="as the application role")
        assert not LedgerEvent.objects.filter(pk=first.id).exists()
        assert LedgerEvent.objects.filter(pk=other.id).exists()
        triggers = TRIGGER_NAMES["postgresql"]
        switches = {
            f"ALTER TABLE {TABLE} DISABLE TRIGGER ALL": "must be owner",
            **{f"ALTER TABLE {TABLE} DISABLE TRIGGER {name}": "must be owner" for name in triggers},
            **{f"DROP TRIGGER {name} ON {TABLE}": "must be owner" for name in triggers},
            "CREATE OR REPLACE FUNCTION ledger_append_only_guard() RETURNS trigger LANGUAGE plpgsql "
            "AS $$ BEGIN RETURN OLD; END $$": "must be owner|permission denied",
            "SET LOCAL session_replication_role = replica": "permission denied",
            f'ALTER ROLE "{role}" SUPERUSER': "permission denied|must be superuser",
            f'SET ROLE "{suite_user}"': "permission denied",
            f"DELETE FROM {TABLE} WHERE id = {other.id}": "append-only",
            f"TRUNCATE {TABLE} CASCADE": "permission denied",  # not granted, and the trigger besides
            f"DELETE FROM {HEAD_TABLE}": "ledger_chain_head",
        }
        for statement, refusal in switches.items():
            with pytest.raises(DatabaseError, match=refusal), transaction.atomic(), app.cursor() as cursor:
                cursor.execute(statement)
        assert installed_triggers(app) >= triggers
        assert LedgerEvent.objects.filter(pk=other.id).exists()
        transaction.set_rollback(True)
