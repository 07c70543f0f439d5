"""What the owner of the ledger's tables can do and the application cannot: write past the append-only
triggers (SQLite: anyone with the file drops them; PostgreSQL: a superuser, as the test suite
connects, skips them with `session_replication_role`). The tampering tests play that insider with it,
and the suite's flush between transactional tests needs it."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ledger_app.append_only import HEAD_TABLE, TABLE
from ralphsite.core.search.schema import TRIGGER_PREFIX

_LEDGER_TABLES = ("ledger_app_retentionrun", "ledger_app_retentionrange", "ledger_app_ledgerevent",
                  "ledger_app_ledgerchainhead")  # referencing tables first


def _replication_role(role: str) -> None:
    """For this transaction only (never the session: a pooled connection goes on to other tests)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('session_replication_role', %s, true)", [role])


@contextmanager
def ledger_guards_off() -> Iterator[None]:
    """One transaction (a savepoint inside another) in which the ledger's triggers do not fire. On
    SQLite the triggers there are dropped and created again as they were (whatever the migration
    state: a test may have migrated the ledger back); the search index's stay, so that the rows
    deleted leave the index too (SQLite gives a deleted last id to the next event)."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN (%s, %s) "
                           "AND name NOT LIKE %s", [TABLE, HEAD_TABLE, f"{TRIGGER_PREFIX}%"])
            triggers = cursor.fetchall()
            for name, _ in triggers:
                cursor.execute(f'DROP TRIGGER "{name}"')
            yield
            for _, sql in triggers:
                cursor.execute(sql)
        else:
            _replication_role("replica")
            yield
            _replication_role("origin")  # SET LOCAL would outlive a savepoint


def ledger_flushable() -> None:
    """Before the flush that ends a transactional test: the ledger's rows go first, past the triggers,
    so the flush finds those tables empty (SQLite's DELETE fires no row trigger then, and PostgreSQL's
    TRUNCATE trigger lets an empty table go). Nothing outlives this transaction: a pooled connection
    handed to the next test has every trigger."""
    existing = set(connection.introspection.table_names())  # a test may have migrated the ledger back
    with ledger_guards_off(), connection.cursor() as cursor:
        for table in _LEDGER_TABLES:
            if table in existing:
                cursor.execute(f"DELETE FROM {table}")  # names from the list above


def flush_by_delete(database: BaseDatabaseWrapper) -> None:
    """The flush that ends a transactional test, on PostgreSQL, by DELETE instead of TRUNCATE: TRUNCATE gives
    each of the ~70 tables and their indexes new files (0.4-1.5 s a test, most of the PostgreSQL legs' extra
    time); the few rows a test leaves go in ~0.02 s. Past the foreign-key and ledger triggers, for the flush's
    own transaction only. Sequences are left as TRUNCATE without RESTART IDENTITY leaves them; a flush that
    resets them is TRUNCATE's, as before."""
    truncate = database.ops.sql_flush

    def sql_flush(style: Any, tables: list[str], *, reset_sequences: bool = False,
                  allow_cascade: bool = False) -> list[str]:
        if reset_sequences or not tables:
            return truncate(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return ["SELECT set_config('session_replication_role', 'replica', true)",
                *(f"DELETE FROM {database.ops.quote_name(table)}" for table in tables)]

    database.ops.sql_flush = sql_flush  # this connection's operations only (the test thread's)
