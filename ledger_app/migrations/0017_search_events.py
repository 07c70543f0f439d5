"""Ledger events are searched (issue #31): their type, task key and message join the full-text index
(ralphsite/core/search/schema.py). On SQLite an append only queues the event for the index (the
deferred queue: an append holds the chain head, so it does no FTS5 writing), a purge deletes its
events' index rows with them; on PostgreSQL two GIN expression indexes. The append-only triggers
and the hash chain are untouched: no event row is changed. Backwards: the index of events goes."""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from ledger_app.search_sources import SEARCH_SOURCES
from ralphsite.core.search import schema


def install(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema.install(schema_editor, SEARCH_SOURCES, deferred=True)


def uninstall(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema.uninstall(schema_editor, SEARCH_SOURCES)


class Migration(migrations.Migration):
    dependencies = [("ledger_app", "0016_hook_calls_apart")]

    operations = [migrations.RunPython(install, uninstall, elidable=False)]
