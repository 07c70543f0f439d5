"""The ledger's append-only triggers as migrations 0002 to 0009 created them (v1), frozen: DELETE
passed while a purge switch was on (SQLite: a connection-registered function
`ralph_ledger_purge_allowed()`; PostgreSQL: `SET LOCAL ralph.ledger_purge = 'on'`), which any
connection could turn on. `ledger_app.append_only` holds the current triggers (migration 0010 on);
these are only for the migrations before it, forwards and backwards.
"""

from typing import Any

TABLE = "ledger_app_ledgerevent"
SQLITE_PURGE_FUNCTION = "ralph_ledger_purge_allowed"
PG_PURGE_SETTING = "ralph.ledger_purge"
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
