"""A message's `tool_calls` is NULL or a list of seed 002's tool calls (issue #26 §2): model validation in
the append service, and a CHECK that the column holds a list (`ralphsite.core.shapes`).

Values stored before in another shape are reshaped first: keys spelled another way (`Id`, `Name`)
become the declared ones and a single call becomes a list of one; what still does not fit (a missing
key, a value not JSON) becomes NULL. Each original is kept as a SeedRow (kind "quarantine"), which the
way back restores. On SQLite the CHECK rebuilds the table, dropping the search index's triggers: they
are installed again, both ways.
"""

from typing import Any

import django.db.models.lookups
from django.db import migrations, models

import ralphsite.core.shapes
from ralphsite.core.search import schema
from ralphsite.core.search.sources import SearchTable
from ralphsite.core.shapes import JSONList, JSONRecord, rows_reshape, rows_unreshape

# The shape as this migration enforces it (the model's may grow later).
_TOOL_CALLS = JSONList(JSONRecord(required=("id", "name", "arguments", "status"), optional=("result",),
                                  choices={"status": ("pending", "running", "completed", "failed", "cancelled")}))

# The searched tables as this migration indexes them (the app's search_sources may change later).
_SEARCHED = (SearchTable("message", "conversations_app_message", ("content",)),
             SearchTable("observation", "conversations_app_observation", ("content", "tool_name")))


def reshape_tool_calls(apps: Any, schema_editor: Any) -> None:
    rows_reshape(apps, schema_editor, model="conversations_app.Message", name="tool_calls", shape=_TOOL_CALLS,
                 default=None)


def unreshape_tool_calls(apps: Any, schema_editor: Any) -> None:
    rows_unreshape(apps, schema_editor, model="conversations_app.Message", name="tool_calls")


def search_triggers_again(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        schema.install(schema_editor, _SEARCHED, deferred=True)


class Migration(migrations.Migration):

    dependencies = [
        ('conversations_app', '0007_sync_mapping_lookups'),
        ('ralphsite', '0004_seed_rows'),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, search_triggers_again),
        migrations.RunPython(reshape_tool_calls, unreshape_tool_calls),
        migrations.AlterField(
            model_name='message',
            name='tool_calls',
            field=models.JSONField(blank=True, null=True, validators=[ralphsite.core.shapes.JSONList(ralphsite.core.shapes.JSONRecord(choices={'status': ('pending', 'running', 'completed', 'failed', 'cancelled')}, optional=('result',), required=('id', 'name', 'arguments', 'status')))]),
        ),
        migrations.AddConstraint(
            model_name='message',
            constraint=models.CheckConstraint(condition=models.Q(django.db.models.lookups.Exact(ralphsite.core.shapes.JSONType('tool_calls'), 'array'), ('tool_calls__isnull', True), _connector='OR'), name='message_tool_calls_array'),
        ),
        migrations.RunPython(search_triggers_again, migrations.RunPython.noop),
    ]
