"""The database enforces that ledger events are append-only; purge is the one way around it.

Backend-specific SQL lives here and only here:

* PostgreSQL: one PL/pgSQL function behind a BEFORE UPDATE OR DELETE row trigger and a BEFORE
  TRUNCATE statement trigger. It raises SQLSTATE 23000 (integrity constraint violation, constraint
  `ledger_append_only`), so Django sees an IntegrityError and the API answers 409. DELETE and
  TRUNCATE pass only while the setting `ralph.ledger_purge` is 'on' for the transaction
  (`SET LOCAL`, see `ledger_purge_transaction`).
* SQLite: BEFORE UPDATE and BEFORE DELETE triggers that `RAISE(ABORT, …)` (a constraint error, so
  also an IntegrityError). DELETE passes only when `ralph_ledger_purge_allowed()` returns 1: an
  application-defined function registered on every Django connection (`connection_created`) that
  reads a flag on that connection's wrapper, so it is true only for the thread running a purge.
  Any other client (the sqlite3 shell, another program) has no such function, so its DELETE fails.

UPDATE is never allowed, purge or not.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

TABLE = "ledger_app_ledgerevent"
SQLITE_PURGE_FUNCTION = "ralph_ledger_purge_allowed"
PG_PURGE_SETTING = "ralph.ledger_purge"
_FLAG = "ralph_ledger_purge"
_REJECTED = "ledger_append_only: ledger events are append-only"
_PURGE_HINT = "manage.py purge_sessions removes ended sessions"

TRIGGER_NAMES = {
    "sqlite": {"ledger_append_only_update", "ledger_append_only_delete"},
    "postgresql": {"ledger_append_only_row", "ledger_append_only_truncate"},
}

_SQLITE_CREATE = [
    f"""CREATE TRIGGER ledger_append_only_update BEFORE UPDATE ON {TABLE}
        BEGIN SELECT RAISE(ABORT, '{_REJECTED}: UPDATE rejected'); END""",
    f"""CREATE TRIGGER ledger_append_only_delete BEFORE DELETE ON {TABLE}
        WHEN NOT {SQLITE_PURGE_FUNCTION}()
        BEGIN SELECT RAISE(ABORT, '{_REJECTED}: DELETE rejected ({_PURGE_HINT})'); END""",
]
_SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS ledger_append_only_delete",
    "DROP TRIGGER IF EXISTS ledger_append_only_update",
]
_PG_CREATE = [
    f"""CREATE OR REPLACE FUNCTION ledger_append_only_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('DELETE', 'TRUNCATE')
               AND coalesce(current_setting('{PG_PURGE_SETTING}', true), '') = 'on' THEN
                RETURN OLD;
            END IF;
            RAISE EXCEPTION '{_REJECTED}: % rejected', TG_OP
                USING ERRCODE = '23000', CONSTRAINT = 'ledger_append_only',
                      HINT = '{_PURGE_HINT}';
        END $$""",
    f"""CREATE TRIGGER ledger_append_only_row BEFORE UPDATE OR DELETE ON {TABLE}
        FOR EACH ROW EXECUTE FUNCTION ledger_append_only_guard()""",
    f"""CREATE TRIGGER ledger_append_only_truncate BEFORE TRUNCATE ON {TABLE}
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only_guard()""",
]
_PG_DROP = [
    f"DROP TRIGGER IF EXISTS ledger_append_only_truncate ON {TABLE}",
    f"DROP TRIGGER IF EXISTS ledger_append_only_row ON {TABLE}",
    "DROP FUNCTION IF EXISTS ledger_append_only_guard()",
]


def trigger_sql(vendor: str, *, create: bool) -> list[str]:
    """The statements that create (or drop) the append-only triggers on this backend."""
    statements = {"sqlite": (_SQLITE_CREATE, _SQLITE_DROP), "postgresql": (_PG_CREATE, _PG_DROP)}
    if vendor not in statements:
        raise NotImplementedError(f"append-only triggers are not written for {vendor}")
    return statements[vendor][0 if create else 1]


def create_triggers(apps: Any, schema_editor: Any) -> None:
    """Migration step (RunPython): later migrations that rebuild the table on SQLite call it again."""
    for statement in trigger_sql(schema_editor.connection.vendor, create=True):
        schema_editor.execute(statement, params=None)


def drop_triggers(apps: Any, schema_editor: Any) -> None:
    for statement in trigger_sql(schema_editor.connection.vendor, create=False):
        schema_editor.execute(statement, params=None)


def installed_triggers(connection: BaseDatabaseWrapper) -> set[str]:
    """Names of the triggers on the ledger table as the database reports them."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [TABLE])
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
                           [TABLE])
        return {row[0] for row in cursor.fetchall()}


def register_sqlite_purge_function(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """`connection_created` receiver: give each SQLite connection the purge check its trigger calls."""
    if connection.vendor != "sqlite":
        return
    connection.connection.create_function(
        SQLITE_PURGE_FUNCTION, 0, lambda: 1 if getattr(connection, _FLAG, False) else 0)


def set_purge_switch(connection: BaseDatabaseWrapper, *, on: bool) -> None:
    """Let (or stop letting) this connection delete ledger rows until switched back.

    Session-wide on PostgreSQL: for the test suite's flush between transactional tests only.
    Purges use `ledger_purge_transaction`, which is scoped to one transaction.
    """
    setattr(connection, _FLAG, on)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, %s, false)", [PG_PURGE_SETTING, "on" if on else "off"])


@contextmanager
def ledger_purge_transaction(using: str = "default") -> Iterator[None]:
    """One transaction in which this connection, and only it, may delete ledger rows."""
    connection = connections[using]
    with transaction.atomic(using=using):
        _set_pg_transaction_setting(connection, "on")
        setattr(connection, _FLAG, True)
        try:
            yield
        finally:
            setattr(connection, _FLAG, False)
        # Inside an outer transaction SET LOCAL would outlive this block: switch it off again. On an
        # exception the savepoint's rollback reverts the setting by itself.
        _set_pg_transaction_setting(connection, "off")


def _set_pg_transaction_setting(connection: BaseDatabaseWrapper, value: str) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, %s, true)", [PG_PURGE_SETTING, value])
