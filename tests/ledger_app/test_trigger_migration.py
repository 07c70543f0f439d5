"""The append-only trigger migration reverses cleanly and re-applies with working triggers (on the
backend the suite runs on: SQLite or PostgreSQL)."""

import json

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from ledger_app.append_only import TABLE, TRIGGER_NAMES, installed_triggers
from ledger_app.models import LedgerEvent
from tests.ledger_app.factories import make_event, make_session

pytestmark = pytest.mark.django_db(transaction=True)

TRIGGER_MIGRATION = ("ledger_app", "0002_ledger_append_only_triggers")


def _applied() -> set[tuple[str, str]]:
    return set(MigrationExecutor(connection).loader.applied_migrations)


def _raw_update(event: LedgerEvent, message: str) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET message = %s WHERE id = %s", [message, event.id])


def _guard_function_exists() -> bool:
    """PostgreSQL's trigger function (SQLite has none: the triggers carry their own bodies)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_proc WHERE proname = 'ledger_append_only_guard'")
        return cursor.fetchone()[0] == 1


@pytest.mark.long
def test_it_migrates_back_past_the_triggers_and_forward_again_with_them_in_place() -> None:
    triggers = TRIGGER_NAMES[connection.vendor]
    event = make_event(make_session())

    call_command("migrate", "ledger_app", "0001", verbosity=0)
    assert TRIGGER_MIGRATION not in _applied()
    assert not triggers & installed_triggers(connection)
    if connection.vendor == "postgresql":
        assert not _guard_function_exists()
    _raw_update(event, "changed while the ledger was unguarded")  # nothing stops it now

    call_command("migrate", "ledger_app", verbosity=0)
    assert TRIGGER_MIGRATION in _applied()
    assert triggers <= installed_triggers(connection)
    if connection.vendor == "postgresql":
        assert _guard_function_exists()
    with pytest.raises(IntegrityError, match="append-only"):
        _raw_update(event, "changed again")
    event.refresh_from_db()
    assert event.message == "changed while the ledger was unguarded"  # the rows survived both ways


CHAIN_MIGRATION = ("ledger_app", "0004_ledger_hash_chain")


def test_it_migrates_the_chain_back_and_forward_and_chains_the_events_there() -> None:
    from ledger_app.chain_verify import chain_verify
    from ledger_app.services import ledger_events_purge

    purged = make_session()
    make_event(purged)
    kept = [make_event(make_session(), n) for n in range(3)]
    ledger_events_purge(session_ids=[purged.id], reason="before the migration went back")

    call_command("migrate", "ledger_app", "0003", verbosity=0)
    assert CHAIN_MIGRATION not in _applied()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {TABLE} ORDER BY id")
        assert [row[0] for row in cursor.fetchall()] == [event.id for event in kept]  # the retention record went

    call_command("migrate", "ledger_app", verbosity=0)
    assert CHAIN_MIGRATION in _applied()
    report = chain_verify()
    assert report.intact and report.events == 3, report.problem
    assert {"ledger_append_only_no_replace"} <= installed_triggers(connection) or connection.vendor == "postgresql"
    assert LedgerEvent.objects.create(session=make_session(), type="x-after").prev_hash == report.head_hash


SHAPES_MIGRATION = ("ledger_app", "0011_event_json_shapes")


def test_it_reshapes_an_event_meta_that_is_not_an_object_and_back_with_the_chain_intact(capsys) -> None:
    """Issue #26 §1: a `meta` stored before the shape was enforced is wrapped (the original kept as a
    quarantine SeedRow), the chain re-linked; going back restores it."""
    from ledger_app.chain_verify import chain_verify
    from ledger_app.migrations.frozen.append_only_v2 import create_all_triggers, drop_all_triggers
    from ralphsite.core.models import SeedRow

    events = [make_event(make_session(), n) for n in range(3)]
    call_command("migrate", "ledger_app", "0010", verbosity=0)
    with connection.schema_editor() as editor:  # an older server stored it; no trigger or CHECK stopped it
        drop_all_triggers(None, editor)
        editor.execute(f"UPDATE {TABLE} SET meta = %s WHERE id = %s", ['"hello"', events[1].id])
        create_all_triggers(None, editor)

    call_command("migrate", "ledger_app", verbosity=0)
    assert "ledger_app.LedgerEvent.meta: 1 stored value(s) did not fit" in capsys.readouterr().out
    assert LedgerEvent.objects.get(pk=events[1].id).meta == {"value": "hello"}
    assert SeedRow.objects.get(kind="quarantine", object_id=str(events[1].id)).extra == {"value": "hello"}
    report = chain_verify()
    assert report.intact and report.events == 3, report.problem
    with pytest.raises(IntegrityError):
        _raw_update(events[0], "the triggers are back")

    call_command("migrate", "ledger_app", "0010", verbosity=0)
    assert SHAPES_MIGRATION not in _applied()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT meta FROM {TABLE} WHERE id = %s", [events[1].id])
        [stored] = cursor.fetchone()
    assert json.loads(stored) == "hello"
    assert not SeedRow.objects.filter(kind="quarantine").exists()
    assert chain_verify().intact
    call_command("migrate", "ledger_app", verbosity=0)
