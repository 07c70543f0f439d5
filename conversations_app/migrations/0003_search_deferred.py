"""Search index on SQLite: new rows are queued and indexed in batches (see search/schema.py), instead of
indexed by the insert trigger. Both directions rebuild the index from the tables; PostgreSQL's GIN
indexes stay as they are."""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from ralphsite.core.search import schema
from ralphsite.core.search.sources import SearchTable

# The searched tables as this migration indexes them (the app's search_sources may change later).
_SEARCHED = (SearchTable("message", "conversations_app_message", ("content",)),
             SearchTable("observation", "conversations_app_observation", ("content", "tool_name")))


def defer(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema.install(schema_editor, _SEARCHED, deferred=True)


def index_at_insert(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema.install(schema_editor, _SEARCHED, deferred=False)


class Migration(migrations.Migration):
    dependencies = [("conversations_app", "0002_search")]

    operations = [migrations.RunPython(defer, index_at_insert, elidable=False)]
