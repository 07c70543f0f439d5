"""The hash chain (ledger_app.chain): two hash columns, the chain head, the retention ranges, events
without a session (the retention records), and the chain computed over the events already there.

The append-only triggers are dropped first (the chain is written into existing rows; on SQLite the
table is rebuilt anyway, which drops them) and created again last, with the chain head's guards and
SQLite's guard against INSERT OR REPLACE. Backwards, the retention records (events without a
session) and their ranges are removed before the session becomes required again.
"""

from types import SimpleNamespace
from typing import Any

import django.db.models.deletion
import django.db.models.functions.text
import django.db.models.lookups
from django.db import migrations, models

from ledger_app.migrations.frozen.append_only_v1 import (create_all_triggers, create_triggers, drop_all_triggers,
                                                        drop_triggers)

_CHUNK = 5000


def chain_existing_events(apps: Any, schema_editor: Any) -> None:
    from ledger_app.chain import CHAIN_FIELDS, GENESIS_HASH, event_canonical, link_hash, money

    event_model = apps.get_model("ledger_app", "LedgerEvent")
    head_model = apps.get_model("ledger_app", "LedgerChainHead")
    using = schema_editor.connection.alias
    columns = list(dict.fromkeys(CHAIN_FIELDS.values()))
    table = schema_editor.quote_name(event_model._meta.db_table)
    last_id, last_hash = 0, GENESIS_HASH
    while True:
        rows = list(event_model.objects.using(using).filter(id__gt=last_id).order_by("id")
                    .values_list(*columns)[:_CHUNK])
        if not rows:
            break
        updates = []
        for row in rows:
            event = SimpleNamespace(**dict(zip(columns, row, strict=True)))
            event.cost_usd = money(event.cost_usd)
            event_hash = link_hash(last_hash, event_canonical(event))
            updates.append((last_hash, event_hash, event.id))
            last_id, last_hash = event.id, event_hash
        with schema_editor.connection.cursor() as cursor:
            cursor.executemany(f"UPDATE {table} SET prev_hash = %s, hash = %s WHERE id = %s", updates)
    head_model.objects.using(using).create(id=1, last_id=last_id, last_hash=last_hash)
    _constraint_checks_now(schema_editor)


def unchain_events(apps: Any, schema_editor: Any) -> None:
    """Backwards: what only the chain has (retention records, ranges, the head) goes."""
    using = schema_editor.connection.alias
    apps.get_model("ledger_app", "RetentionRun").objects.using(using).update(retention_event=None)
    apps.get_model("ledger_app", "RetentionRange").objects.using(using).all().delete()
    apps.get_model("ledger_app", "LedgerEvent").objects.using(using).filter(session__isnull=True).delete()
    apps.get_model("ledger_app", "LedgerChainHead").objects.using(using).all().delete()
    _constraint_checks_now(schema_editor)


def _constraint_checks_now(schema_editor: Any) -> None:
    """PostgreSQL refuses to ALTER a table with pending (deferred) foreign key checks: run them now."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0003_foreign_keys_indexed_by_composites'),
        ('sessions_app', '0007_foreign_keys_indexed_by_composites'),
    ]

    operations = [
        migrations.RunPython(drop_triggers, create_triggers),
        migrations.CreateModel(
            name='LedgerChainHead',
            fields=[
                ('id', models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False)),
                ('last_id', models.BigIntegerField(help_text="The newest event's id (0 before the first event).")),
                ('last_hash', models.CharField(help_text="The newest event's hash.", max_length=64)),
            ],
        ),
        migrations.CreateModel(
            name='RetentionRange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('first_id', models.BigIntegerField()),
                ('last_id', models.BigIntegerField()),
                ('events', models.PositiveIntegerField(help_text='Events removed in this run.')),
                ('prev_hash', models.CharField(help_text="prev_hash of the run's first event.", max_length=64)),
                ('last_hash', models.CharField(help_text="hash of the run's last event.", max_length=64)),
            ],
            options={
                'ordering': ['first_id'],
            },
        ),
        migrations.AddField(
            model_name='ledgerevent',
            name='hash',
            field=models.CharField(default='', editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='ledgerevent',
            name='prev_hash',
            field=models.CharField(default='', editable=False, max_length=64),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name='retentionrun',
            name='retention_event',
            field=models.ForeignKey(blank=True, help_text="The record of this purge in the ledger's chain.", null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='ledger_app.ledgerevent'),
        ),
        migrations.AlterField(
            model_name='ledgerevent',
            name='session',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='ledger_events', to='sessions_app.session'),
        ),
        migrations.RunPython(chain_existing_events, unchain_events),
        migrations.AddConstraint(
            model_name='ledgerevent',
            constraint=models.CheckConstraint(condition=models.Q(django.db.models.lookups.Exact(django.db.models.functions.text.Length('hash'), 64), django.db.models.lookups.Exact(django.db.models.functions.text.Length('prev_hash'), 64)), name='ledgerevent_chained'),
        ),
        migrations.AddConstraint(
            model_name='ledgerchainhead',
            constraint=models.CheckConstraint(condition=models.Q(('id', 1)), name='ledgerchainhead_single_row'),
        ),
        migrations.AddField(
            model_name='retentionrange',
            name='retention_event',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='retention_ranges', to='ledger_app.ledgerevent'),
        ),
        migrations.RunPython(create_all_triggers, drop_all_triggers),
    ]
