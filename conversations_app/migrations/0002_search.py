"""Full-text search index: FTS5 tables + triggers on SQLite, GIN indexes (tsvector, pg_trgm) on
PostgreSQL. See ralphsite/core/search/schema.py; a later migration that makes SQLite rebuild
the message or observation table must run `install` again (it drops the triggers)."""

from django.db import migrations

from ralphsite.core.search.schema import search_index_operation
from ralphsite.core.search.sources import SearchTable

# The searched tables as this migration indexes them (the app's search_sources may change later).
_SEARCHED = (SearchTable("message", "conversations_app_message", ("content",)),
             SearchTable("observation", "conversations_app_observation", ("content", "tool_name")))


class Migration(migrations.Migration):
    dependencies = [("conversations_app", "0001_initial")]

    operations = [search_index_operation(_SEARCHED, deferred=False)]
