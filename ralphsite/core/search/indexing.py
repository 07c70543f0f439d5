"""Indexing the rows the insert triggers queued (SQLite's deferred search index, see schema.py)."""

from django.db import connection, transaction

from ralphsite.core.search.schema import PENDING_TABLE, index_pending_statements


def search_index_pending() -> bool:
    """Index every queued row; False when nothing was queued (then only one cheap read ran).

    Called by the search before it queries, so a search sees every row committed before it, and
    by the server's background thread, so the queue stays short. A no-op on PostgreSQL.
    """
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {PENDING_TABLE})")  # the name is a constant
        if not cursor.fetchone()[0]:
            return False
        with transaction.atomic():
            for statement in index_pending_statements():
                cursor.execute(statement)
    return True
