"""Task reports are searched (issue #31): an attempt's implementation and review reports and its error
join the full-text index (ralphsite/core/search/schema.py): SQLite triggers (an insert queues the
attempt), PostgreSQL GIN expression indexes. A later migration that makes SQLite rebuild the attempts
table must install it again. Backwards: the index of reports goes."""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from ralphsite.core.search import schema
from sessions_app.search_sources import SEARCH_SOURCES


def install(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema.install(schema_editor, SEARCH_SOURCES, deferred=True)


def uninstall(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema.uninstall(schema_editor, SEARCH_SOURCES)


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0017_keys_never_shaped_like_ids")]

    operations = [migrations.RunPython(install, uninstall, elidable=False)]
