"""An attempt's `tokens_input`/`tokens_output` are null where DevTeam's are (issue #26: "NULL stays NULL"): a count
nobody reported, which its `v_task_attempts_summary` leaves out of `SUM(tokens_input + tokens_output)`. The ledger's
usage book counts it as 0. On SQLite the change rebuilds the attempts table, dropping the search index's triggers
(migration 0018): they are installed again, both ways. Backwards: a null count becomes 0 first."""

from typing import Any

import django.core.validators
from django.db import migrations, models

from ralphsite.core.search import schema
from sessions_app.search_sources import SEARCH_SOURCES


def unreported_as_zero(apps: Any, schema_editor: Any) -> None:
    attempts = apps.get_model("sessions_app", "TaskAttempt").objects.using(schema_editor.connection.alias)
    for name in ("tokens_input", "tokens_output"):
        attempts.filter(**{f"{name}__isnull": True}).update(**{name: 0})


def search_triggers_again(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        schema.install(schema_editor, SEARCH_SOURCES, deferred=True)


def token_count() -> models.BigIntegerField:
    return models.BigIntegerField(blank=True, default=0, null=True,
                                  validators=[django.core.validators.MinValueValidator(0)])


class Migration(migrations.Migration):

    dependencies = [
        ('sessions_app', '0020_task_and_question_keys_never_shaped_like_ids'),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, search_triggers_again),
        migrations.AlterField(model_name='taskattempt', name='tokens_input', field=token_count()),
        migrations.AlterField(model_name='taskattempt', name='tokens_output', field=token_count()),
        migrations.RunPython(search_triggers_again, unreported_as_zero),
    ]
