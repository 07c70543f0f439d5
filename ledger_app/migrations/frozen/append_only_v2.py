"""The ledger's append-only triggers from migration 0010 on (v2), frozen: no purge switch.

An event may be deleted only while the chain head is a retention record (an event of type
`ledger_purged` without a session, newer than the event) one of whose `RetentionRange`s covers the
event: the purge appends its record and ranges first, then deletes, in one transaction that holds the
head (`ledger_app.services.ledger_events_purge`). So no connection deletes an event without a record
of it in the chain, whatever it sets or registers. The chain head is never deleted; TRUNCATE passes
only on an empty table (losing nothing: the test suite's flush, after the rows went). UPDATE, and SQLite's REPLACE over an existing event, stay refused as in v1.

The ranges of one record are disjoint, so the one that can cover an event is the first, by `last_id`,
that ends at or after it: one step of the (retention_event, last_id) index per deleted row.
"""

from typing import Any

from ledger_app.migrations.frozen import append_only_v1 as v1

TABLE = v1.TABLE
HEAD_TABLE = v1.HEAD_TABLE
RANGES_TABLE = "ledger_app_retentionrange"
TRIGGER_NAMES = v1.TRIGGER_NAMES
HEAD_TRIGGER_NAMES = v1.HEAD_TRIGGER_NAMES
_LEDGER_PURGED = "ledger_purged"  # ledger_app.models.LEDGER_PURGED

# True for the row being deleted (OLD) when the head's retention record covers it.
_PURGED_BY_THE_HEAD = f"""EXISTS (SELECT 1 FROM {HEAD_TABLE} h JOIN {TABLE} r ON r.id = h.last_id
    WHERE h.id = 1 AND r.type = '{_LEDGER_PURGED}' AND r.session_id IS NULL AND OLD.id < r.id
      AND (SELECT g.first_id FROM {RANGES_TABLE} g WHERE g.retention_event_id = r.id AND g.last_id >= OLD.id
           ORDER BY g.last_id LIMIT 1) <= OLD.id)"""
_PURGE_HINT = "only a purge deletes events: manage.py purge_sessions, or deleting a session"

_SQLITE_CREATE = [
    v1._SQLITE_CREATE[0],  # UPDATE rejected
    f"""CREATE TRIGGER ledger_append_only_delete BEFORE DELETE ON {TABLE}
        WHEN NOT {_PURGED_BY_THE_HEAD}
        BEGIN SELECT RAISE(ABORT, '{v1._REJECTED}: DELETE rejected ({_PURGE_HINT})'); END""",
    v1._SQLITE_CREATE[2],  # no INSERT OR REPLACE over an existing event
]
_SQLITE_HEAD_CREATE = [
    *v1._SQLITE_HEAD_CREATE[:2],  # inserted only at genesis, moved only forward
    f"""CREATE TRIGGER ledger_chain_head_delete BEFORE DELETE ON {HEAD_TABLE}
        BEGIN SELECT RAISE(ABORT, '{v1._HEAD_REJECTED}: DELETE rejected'); END""",
]
_PG_CREATE = [
    f"""CREATE OR REPLACE FUNCTION ledger_append_only_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' AND {_PURGED_BY_THE_HEAD} THEN
                RETURN OLD;
            ELSIF TG_OP = 'TRUNCATE' AND NOT EXISTS (SELECT 1 FROM {TABLE}) THEN
                RETURN NULL;  -- nothing to lose (TRUNCATE holds the table's lock by now)
            END IF;
            RAISE EXCEPTION '{v1._REJECTED}: % rejected', TG_OP
                USING ERRCODE = '23000', CONSTRAINT = 'ledger_append_only',
                      HINT = '{_PURGE_HINT}';
        END $$""",
    *v1._PG_CREATE[1:],
]
_PG_HEAD_CREATE = [
    f"""CREATE OR REPLACE FUNCTION ledger_chain_head_guard() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                IF NEW.last_hash = '{v1._GENESIS}' AND NOT EXISTS (SELECT 1 FROM {HEAD_TABLE}) THEN
                    RETURN NEW;
                END IF;
            ELSIF TG_OP = 'UPDATE' THEN
                IF {v1._HEAD_MOVES_FORWARD} THEN
                    RETURN NEW;
                END IF;
            ELSIF TG_OP = 'TRUNCATE' AND NOT EXISTS (SELECT 1 FROM {HEAD_TABLE}) THEN
                RETURN NULL;
            END IF;
            RAISE EXCEPTION '{v1._HEAD_REJECTED}: % rejected', TG_OP
                USING ERRCODE = '23000', CONSTRAINT = 'ledger_chain_head';
        END $$""",
    *v1._PG_HEAD_CREATE[1:],
]


def trigger_sql(vendor: str, *, create: bool, head: bool = False) -> list[str]:
    """The statements that create (or drop: the same as v1's) the triggers on this backend: those of
    the events table, or (`head`) those of the chain head."""
    if not create:
        return v1.trigger_sql(vendor, create=False, head=head)
    statements = {"sqlite": (_SQLITE_CREATE, _SQLITE_HEAD_CREATE), "postgresql": (_PG_CREATE, _PG_HEAD_CREATE)}
    if vendor not in statements:
        raise NotImplementedError(f"append-only triggers are not written for {vendor}")
    return statements[vendor][1 if head else 0]


def _execute(schema_editor: Any, statements: list[str]) -> None:
    for statement in statements:
        schema_editor.execute(statement, params=None)


def create_all_triggers(apps: Any, schema_editor: Any) -> None:
    """Migration step: (re)create the events table's triggers and the chain head's. A later migration
    that makes SQLite rebuild either table must run it again."""
    vendor = schema_editor.connection.vendor
    for head in (False, True):
        _execute(schema_editor, trigger_sql(vendor, create=False, head=head) + trigger_sql(vendor, create=True,
                                                                                          head=head))


def drop_all_triggers(apps: Any, schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    _execute(schema_editor, trigger_sql(vendor, create=False, head=True) + trigger_sql(vendor, create=False))
