"""Full-text search index: FTS5 tables + triggers on SQLite, GIN indexes (tsvector, pg_trgm) on
PostgreSQL. See ralphsite/core/search/schema.py; a later migration that makes SQLite rebuild
the message or observation table must run `install` again (it drops the triggers)."""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from conversations_app.search_sources import SEARCH_SOURCES
from ralphsite.core.search import schema


def install(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema.install(schema_editor, SEARCH_SOURCES, deferred=False)


def uninstall(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema.uninstall(schema_editor, SEARCH_SOURCES)


class Migration(migrations.Migration):
    dependencies = [("conversations_app", "0001_initial")]

    operations = [migrations.RunPython(install, uninstall, elidable=False)]
