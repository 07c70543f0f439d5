"""The event type rule in the database (issue #26): a known type, an `x-` custom one, or the ledger's own
`ledger_purged` without a session; PostgreSQL's CHECK (NOT VALID: new rows), SQLite's BEFORE INSERT trigger
(no rebuild of the events table, whose append-only and search triggers stay as they are). See
`ledger_app.migrations.frozen.event_types_v1`. Backwards: the constraint or trigger goes."""

from django.db import migrations

from ledger_app.migrations.frozen import event_types_v1


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0019_money_ten_places'),
    ]

    operations = [
        migrations.RunPython(event_types_v1.create, event_types_v1.drop, elidable=False),
    ]
