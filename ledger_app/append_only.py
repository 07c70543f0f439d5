"""The database enforces that ledger events are append-only; a purge with its record is the one way out.

Backend-specific SQL lives in `ledger_app.migrations.frozen.append_only_v2` (the migrations run it; a
change is a new version and a migration):

* PostgreSQL: one PL/pgSQL function behind a BEFORE UPDATE OR DELETE row trigger and a BEFORE
  TRUNCATE statement trigger. It raises SQLSTATE 23000 (integrity constraint violation, constraint
  `ledger_append_only`), so Django sees an IntegrityError and the API answers 409.
* SQLite: BEFORE UPDATE and BEFORE DELETE triggers that `RAISE(ABORT, …)` (a constraint error, so
  also an IntegrityError).

UPDATE is never allowed. A DELETE passes only for an event that the chain head's retention record
covers: `ledger_app.services.ledger_events_purge` appends the record (type `ledger_purged`, no
session) and its `RetentionRange`s first, then deletes, in one transaction holding the head. So there
is no switch to turn on: no setting, no connection-registered function, nothing a plain database
session can do deletes an event without a record of the purge in the chain, which `ledger_verify`
lists. TRUNCATE passes only on an empty table. On SQLite `INSERT OR REPLACE` / `REPLACE INTO` over an existing event
(its id, or its session's idempotency key) is refused too: REPLACE deletes the old row without firing
delete triggers, so a BEFORE INSERT trigger refuses any insert that would collide.
(PostgreSQL's `INSERT … ON CONFLICT DO UPDATE` is an UPDATE: refused.)

The chain head (`ledger_app_ledgerchainhead`, one row) has guards of its own: it is inserted only at
the genesis hash when there is none, moves only forward, from the event it names onto a newer one
linked to it, and is never deleted.

What is left is what owns the tables: on SQLite anyone with the file can drop the triggers; on
PostgreSQL the tables' owner can drop or disable them and a superuser can skip them
(`session_replication_role`). Run the server as a role that owns nothing (docs/operations.md); what
such an insider can still do is found against the anchors outside the database (`ledger_app.anchor`).
"""

from django.db.backends.base.base import BaseDatabaseWrapper

from ledger_app.migrations.frozen import append_only_v2 as current

TABLE = current.TABLE
HEAD_TABLE = current.HEAD_TABLE
TRIGGER_NAMES = current.TRIGGER_NAMES
HEAD_TRIGGER_NAMES = current.HEAD_TRIGGER_NAMES
trigger_sql = current.trigger_sql


def installed_triggers(connection: BaseDatabaseWrapper, table: str = TABLE) -> set[str]:
    """Names of the triggers on the ledger table (or another) as the database reports them."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [table])
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
                           [table])
        return {row[0] for row in cursor.fetchall()}
