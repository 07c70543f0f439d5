"""The purge switch goes (issue #28 §3): an event is deleted only while the chain head's retention
record covers it (`ledger_app.migrations.frozen.append_only_v2`), and the chain head is never deleted.
Its check looks a range up by (retention_event, last_id): that index replaces the foreign key's own.
Backwards: the v1 triggers with their switch, and the foreign key's index again."""

import django.db.models.deletion
from django.db import migrations, models

from ledger_app.migrations.frozen import append_only_v1, append_only_v2
from ralphsite.core.db.migration_operations import AlterFieldIndex


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0009_usage_days_per_session'),
    ]

    operations = [
        AlterFieldIndex(
            model_name='retentionrange',
            name='retention_event',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='retention_ranges', to='ledger_app.ledgerevent'),
        ),
        migrations.AddIndex(
            model_name='retentionrange',
            index=models.Index(fields=['retention_event', 'last_id'], name='retentionrange_event_last'),
        ),
        migrations.RunPython(append_only_v2.create_all_triggers, append_only_v1.create_all_triggers),
    ]
