"""AlterFieldIndex: a foreign key's own index dropped and restored in place, on the real database."""

import pytest
from django.db import connection, models
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.state import ProjectState

from ledger_app.append_only import TABLE, TRIGGER_NAMES, installed_triggers
from ledger_app.models import LedgerEvent
from ralphsite.core.db.migration_operations import AlterFieldIndex
from sessions_app.models import Session

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = "0002_ledger_append_only_triggers"
AFTER = "0003_foreign_keys_indexed_by_composites"


def _session_column_indexes() -> list[str]:
    """Indexes of the ledger table on session_id alone (PostgreSQL adds a `_like` twin for text keys)."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, TABLE)
    return sorted(name for name, info in constraints.items()
                  if info["index"] and not info["primary_key"] and info["columns"] == ["session_id"])


def _ledger_event_session_index() -> tuple[AlterFieldIndex, ProjectState, ProjectState]:
    """Migration 0003's operation on the ledger's session key, with the project's states around it."""
    loader = MigrationExecutor(connection).loader
    [operation] = [operation for operation in loader.get_migration("ledger_app", AFTER).operations
                   if operation.model_name == "ledgerevent" and operation.name == "session"]
    before = loader.project_state(("ledger_app", BEFORE))
    after = before.clone()
    operation.state_forwards("ledger_app", after)
    return operation, before, after


def test_it_drops_and_restores_the_foreign_key_index_keeping_rows_and_triggers() -> None:
    session = Session.objects.create(key="migrate", user_request="x")
    event = LedgerEvent.objects.create(session=session, type="x-x")
    operation, before, after = _ledger_event_session_index()
    assert _session_column_indexes() == []

    with connection.schema_editor() as editor:
        operation.database_backwards("ledger_app", editor, after, before)
    assert _session_column_indexes() != []
    with connection.schema_editor() as editor:
        operation.database_forwards("ledger_app", editor, before, after)
    assert _session_column_indexes() == []
    # On SQLite a table rebuild would have dropped the append-only triggers with the old table.
    assert installed_triggers(connection) >= TRIGGER_NAMES[connection.vendor]
    assert list(LedgerEvent.objects.values_list("pk", "session_id")) == [(event.pk, session.pk)]


def test_it_refuses_a_change_beyond_db_index() -> None:
    executor = MigrationExecutor(connection)
    before = executor.loader.project_state(("ledger_app", BEFORE))
    operation = AlterFieldIndex(model_name="ledgerevent", name="session", field=models.ForeignKey(
        "sessions_app.Session", on_delete=models.CASCADE, related_name="ledger_events", db_index=False))
    after = before.clone()
    operation.state_forwards("ledger_app", after)

    with connection.schema_editor() as editor, pytest.raises(ValueError, match="more than db_index"):
        operation.database_forwards("ledger_app", editor, before, after)
    assert _session_column_indexes() == []
