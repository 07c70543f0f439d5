"""The usage rollup keyed by session too (session, day, model, agent), so that a session's figures and
a scoped token's statistics read it instead of the calls; calls of a deleted session are summed under
one NULL key. Rebuilt from the usage rows both ways; the SQL is frozen in `frozen.usage_days_v2` (and
`frozen.usage_days_v1` to go back)."""

from typing import Any

import django.db.models.deletion
import django.db.models.functions.comparison
from django.db import migrations, models

from ledger_app.migrations.frozen import usage_days_v1, usage_days_v2


def per_day_out(apps: Any, schema_editor: Any) -> None:
    usage_days_v1.drop_triggers(apps, schema_editor)
    usage_days_v2.empty(schema_editor.connection)  # its rows would collide with the new key's


def per_day_back(apps: Any, schema_editor: Any) -> None:
    usage_days_v1.create_triggers(apps, schema_editor)
    usage_days_v1.fill(apps, schema_editor)


def per_session_in(apps: Any, schema_editor: Any) -> None:
    usage_days_v2.create_triggers(schema_editor.connection)
    usage_days_v2.fill(schema_editor.connection)


def per_session_out(apps: Any, schema_editor: Any) -> None:
    usage_days_v2.drop_triggers(schema_editor.connection)
    usage_days_v2.empty(schema_editor.connection)  # its rows would collide with the old key's


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0008_usage_days'),
        ('sessions_app', '0010_task_claim'),
    ]

    operations = [
        migrations.RunPython(per_day_out, per_day_back),
        migrations.RemoveConstraint(
            model_name='usageday',
            name='usageday_day_model_agent',
        ),
        migrations.AddField(
            model_name='usageday',
            name='session',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='sessions_app.session'),
        ),
        migrations.AddIndex(
            model_name='usageday',
            index=models.Index(fields=['session', 'day'], name='usageday_session_day'),
        ),
        migrations.AddConstraint(
            model_name='usageday',
            constraint=models.UniqueConstraint(models.F('day'), models.F('model'), models.F('agent'), django.db.models.functions.comparison.Coalesce('session', models.Value(''), output_field=models.CharField()), name='usageday_session_day_model_agent'),
        ),
        migrations.RunPython(per_session_in, per_session_out),
    ]
