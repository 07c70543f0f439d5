"""Ledger events are searched (issue #31): their type, task key and message join the full-text index
(ralphsite/core/search/schema.py). On SQLite an append only queues the event for the index (the
deferred queue: an append holds the chain head, so it does no FTS5 writing), a purge deletes its
events' index rows with them; on PostgreSQL two GIN expression indexes. The append-only triggers
and the hash chain are untouched: no event row is changed. Backwards: the index of events goes."""

from django.db import migrations

from ralphsite.core.search.schema import search_index_operation
from ralphsite.core.search.sources import SearchTable

# The searched table as this migration indexes it (the app's search_sources may change later).
_SEARCHED = (SearchTable("event", "ledger_app_ledgerevent", ("type", "task_key", "message"), integer_id=True),)


class Migration(migrations.Migration):
    dependencies = [("ledger_app", "0016_hook_calls_apart")]

    operations = [search_index_operation(_SEARCHED)]
