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

UPDATE is never allowed, purge or not. On SQLite `INSERT OR REPLACE` / `REPLACE INTO` over an
existing event (its id, or its session's idempotency key) is refused too: REPLACE deletes the old row
without firing delete triggers, so a BEFORE INSERT trigger refuses any insert that would collide.
(PostgreSQL's `INSERT … ON CONFLICT DO UPDATE` is an UPDATE: refused.)

The purge switch is open to any program that registers the SQLite function or any database user that
sets the PostgreSQL setting: what stops a delete past the retention path from going unnoticed is the
hash chain (`ledger_app.chain`), whose gap `manage.py ledger_verify` reports. The chain head
(`ledger_app_ledgerchainhead`, one row) has guards of its own, switch or not: it is inserted only at
the genesis hash when there is none, and moves only forward, from the event it names onto a newer
one linked to it; so the newest events cannot be removed and the head moved back over the hole.
Deleting the head row needs the purge switch (the test suite's flush does it); a chain whose head is
missing, or whose next event starts again at the genesis hash, is reported by `ledger_verify`.
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

HEAD_TABLE = "ledger_app_ledgerchainhead"
_GENESIS = "0" * 64  # ledger_app.chain.GENESIS_HASH (that module imports the models; this one is for migrations)

TRIGGER_NAMES = {
    "sqlite": {"ledger_append_only_update", "ledger_append_only_delete", "ledger_append_only_no_replace"},
    "postgresql": {"ledger_append_only_row", "ledger_append_only_truncate"},
}
HEAD_TRIGGER_NAMES = {
    "sqlite": {"ledger_chain_head_insert", "ledger_chain_head_update", "ledger_chain_head_delete"},
    "postgresql": {"ledger_chain_head_row", "ledger_chain_head_truncate"},
}

_SQLITE_CREATE = [
    f"""CREATE TRIGGER ledger_append_only_update BEFORE UPDATE ON {TABLE}
        BEGIN SELECT RAISE(ABORT, '{_REJECTED}: UPDATE rejected'); END""",
    f"""CREATE TRIGGER ledger_append_only_delete BEFORE DELETE ON {TABLE}
        WHEN NOT {SQLITE_PURGE_FUNCTION}()
        BEGIN SELECT RAISE(ABORT, '{_REJECTED}: DELETE rejected ({_PURGE_HINT})'); END""",
    # Both unique keys of the table: the id and a session's idempotency key. The partial index's
    # condition is repeated word for word as Django wrote it (`NOT (… = '')`): SQLite's planner
    # matches it only so, and with `<> ''` it scanned the session's events on every insert.
    f"""CREATE TRIGGER ledger_append_only_no_replace BEFORE INSERT ON {TABLE}
        WHEN EXISTS (SELECT 1 FROM {TABLE} WHERE id = NEW.id)
          OR (NEW.idempotency_key <> '' AND EXISTS (SELECT 1 FROM {TABLE} WHERE session_id = NEW.session_id
              AND idempotency_key = NEW.idempotency_key AND NOT ("idempotency_key" = '')))
        BEGIN SELECT RAISE(ABORT, '{_REJECTED}: an insert over an existing event rejected'); END""",
]
_SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS ledger_append_only_no_replace",
    "DROP TRIGGER IF EXISTS ledger_append_only_delete",
    "DROP TRIGGER IF EXISTS ledger_append_only_update",
]
_HEAD_REJECTED = "ledger_chain_head: the chain head only moves forward onto the next event"
# The head may move from event OLD.last_id to NEW.last_id only if the event after OLD links to it
# and NEW names an existing event by its hash (ids are given out by the head, one after another).
_HEAD_MOVES_FORWARD = f"""NEW.id = OLD.id AND NEW.last_id > OLD.last_id
    AND EXISTS (SELECT 1 FROM {TABLE} WHERE id = OLD.last_id + 1 AND prev_hash = OLD.last_hash)
    AND EXISTS (SELECT 1 FROM {TABLE} WHERE id = NEW.last_id AND hash = NEW.last_hash)"""
_SQLITE_HEAD_CREATE = [
    f"""CREATE TRIGGER ledger_chain_head_insert BEFORE INSERT ON {HEAD_TABLE}
        WHEN NEW.last_hash <> '{_GENESIS}' OR EXISTS (SELECT 1 FROM {HEAD_TABLE})
        BEGIN SELECT RAISE(ABORT, '{_HEAD_REJECTED}: INSERT rejected'); END""",
    f"""CREATE TRIGGER ledger_chain_head_update BEFORE UPDATE ON {HEAD_TABLE}
        WHEN NOT ({_HEAD_MOVES_FORWARD})
        BEGIN SELECT RAISE(ABORT, '{_HEAD_REJECTED}: UPDATE rejected'); END""",
    f"""CREATE TRIGGER ledger_chain_head_delete BEFORE DELETE ON {HEAD_TABLE}
        WHEN NOT {SQLITE_PURGE_FUNCTION}()
        BEGIN SELECT RAISE(ABORT, '{_HEAD_REJECTED}: DELETE rejected'); END""",
]
_SQLITE_HEAD_DROP = [f"DROP TRIGGER IF EXISTS {name}" for name in sorted(HEAD_TRIGGER_NAMES["sqlite"])]
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
_PG_HEAD_CREATE = [
    f"""CREATE OR REPLACE FUNCTION ledger_chain_head_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                IF NEW.last_hash = '{_GENESIS}' AND NOT EXISTS (SELECT 1 FROM {HEAD_TABLE}) THEN
                    RETURN NEW;
                END IF;
            ELSIF TG_OP = 'UPDATE' THEN
                IF {_HEAD_MOVES_FORWARD} THEN
                    RETURN NEW;
                END IF;
            ELSIF coalesce(current_setting('{PG_PURGE_SETTING}', true), '') = 'on' THEN
                RETURN OLD;
            END IF;
            RAISE EXCEPTION '{_HEAD_REJECTED}: % rejected', TG_OP
                USING ERRCODE = '23000', CONSTRAINT = 'ledger_chain_head';
        END $$""",
    f"""CREATE TRIGGER ledger_chain_head_row BEFORE INSERT OR UPDATE OR DELETE ON {HEAD_TABLE}
        FOR EACH ROW EXECUTE FUNCTION ledger_chain_head_guard()""",
    f"""CREATE TRIGGER ledger_chain_head_truncate BEFORE TRUNCATE ON {HEAD_TABLE}
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_chain_head_guard()""",
]
_PG_HEAD_DROP = [
    f"DROP TRIGGER IF EXISTS ledger_chain_head_truncate ON {HEAD_TABLE}",
    f"DROP TRIGGER IF EXISTS ledger_chain_head_row ON {HEAD_TABLE}",
    "DROP FUNCTION IF EXISTS ledger_chain_head_guard()",
]


def trigger_sql(vendor: str, *, create: bool, head: bool = False) -> list[str]:
    """The statements that create (or drop) the append-only triggers on this backend: those of the
    events table, or (`head`) those of the chain head."""
    statements = {"sqlite": ((_SQLITE_CREATE, _SQLITE_DROP), (_SQLITE_HEAD_CREATE, _SQLITE_HEAD_DROP)),
                  "postgresql": ((_PG_CREATE, _PG_DROP), (_PG_HEAD_CREATE, _PG_HEAD_DROP))}
    if vendor not in statements:
        raise NotImplementedError(f"append-only triggers are not written for {vendor}")
    return statements[vendor][1 if head else 0][0 if create else 1]


def _execute(schema_editor: Any, statements: list[str]) -> None:
    for statement in statements:
        schema_editor.execute(statement, params=None)


def create_triggers(apps: Any, schema_editor: Any) -> None:
    """Migration step (RunPython): later migrations that rebuild the table on SQLite call it again."""
    vendor = schema_editor.connection.vendor
    _execute(schema_editor, trigger_sql(vendor, create=False) + trigger_sql(vendor, create=True))


def drop_triggers(apps: Any, schema_editor: Any) -> None:
    _execute(schema_editor, trigger_sql(schema_editor.connection.vendor, create=False))


def create_all_triggers(apps: Any, schema_editor: Any) -> None:
    """The events table's triggers and the chain head's (migrations from 0004 on)."""
    create_triggers(apps, schema_editor)
    vendor = schema_editor.connection.vendor
    _execute(schema_editor, trigger_sql(vendor, create=False, head=True) + trigger_sql(vendor, create=True, head=True))


def drop_all_triggers(apps: Any, schema_editor: Any) -> None:
    _execute(schema_editor, trigger_sql(schema_editor.connection.vendor, create=False, head=True))
    drop_triggers(apps, schema_editor)


def installed_triggers(connection: BaseDatabaseWrapper, table: str = TABLE) -> set[str]:
    """Names of the triggers on the ledger table (or another) as the database reports them."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [table])
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
                           [table])
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
