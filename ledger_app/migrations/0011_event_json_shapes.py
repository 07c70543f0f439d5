"""An event's `data` and `meta` are JSON objects (issue #26 §1): model validation in the append service,
and a CHECK on the column (`ralphsite.core.shapes`).

Events stored before with another shape (`"hello"`, `[1, 2]`) are reshaped first: wrapped as
`{"value": <original>}`, the original kept as a SeedRow (kind "quarantine") that the way back restores.
The ledger refuses UPDATE, so the append-only triggers are dropped around it (on SQLite the CHECK
rebuilds the table, which drops them anyway) and created again last; the hash chain is re-linked from
the first changed event, so `ledger_verify` stays clean (the migration's own change is the only one).
"""

from types import SimpleNamespace
from typing import Any

import django.db.models.lookups
from django.db import migrations, models

import ralphsite.core.shapes
from ledger_app.migrations.frozen.append_only_v2 import create_all_triggers, drop_all_triggers
from ralphsite.core.shapes import JSONObject, rows_reshape, rows_unreshape

_FIELDS = ("data", "meta")
_CHUNK = 5000


def _wrapped(value: Any) -> dict[str, Any]:
    return {"value": value}


class _Wrap(JSONObject):
    """`data`/`meta` as this migration reshapes them: anything not an object is wrapped."""

    def reshape(self, value: Any) -> Any:
        return value if isinstance(value, dict) else _wrapped(value)


def _relink_from(apps: Any, schema_editor: Any, first_id: int) -> None:
    """Hash again every event from `first_id` on, and move the head onto the last one."""
    from ledger_app.chain import CHAIN_FIELDS, GENESIS_HASH, event_canonical, link_hash, money

    event_model = apps.get_model("ledger_app", "LedgerEvent")
    head_model = apps.get_model("ledger_app", "LedgerChainHead")
    using = schema_editor.connection.alias
    events = event_model.objects.using(using)
    columns = list(dict.fromkeys(CHAIN_FIELDS.values()))
    before = events.filter(id__lt=first_id).order_by("-id").values_list("hash", flat=True).first()
    last_id, last_hash = first_id - 1, before or GENESIS_HASH
    first = events.filter(id=first_id).values_list("prev_hash", flat=True).first()
    if first is not None and before is None:
        last_hash = first  # the first event after a purge links to the purged range's last hash
    while True:
        rows = list(events.filter(id__gt=last_id).order_by("id").values_list(*columns)[:_CHUNK])
        if not rows:
            break
        for row in rows:
            event = SimpleNamespace(**dict(zip(columns, row, strict=True)))
            event.cost_usd = money(event.cost_usd)
            event_hash = link_hash(last_hash, event_canonical(event))
            events.filter(id=event.id).update(prev_hash=last_hash, hash=event_hash)
            last_id, last_hash = event.id, event_hash
    head_model.objects.using(using).filter(id=1).update(last_id=last_id, last_hash=last_hash)


def _constraint_checks_now(schema_editor: Any) -> None:
    """PostgreSQL refuses to ALTER a table with pending (deferred) trigger events: run them now."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def reshape_events(apps: Any, schema_editor: Any) -> None:
    changed = [pk for name in _FIELDS for pk in rows_reshape(
        apps, schema_editor, model="ledger_app.LedgerEvent", name=name, shape=_Wrap(), default={})]
    if changed:
        _relink_from(apps, schema_editor, min(changed))
    _constraint_checks_now(schema_editor)


def unreshape_events(apps: Any, schema_editor: Any) -> None:
    changed = [pk for name in _FIELDS
               for pk in rows_unreshape(apps, schema_editor, model="ledger_app.LedgerEvent", name=name)]
    if changed:
        _relink_from(apps, schema_editor, min(changed))
    _constraint_checks_now(schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0010_purge_only_with_its_record'),
        ('ralphsite', '0004_seed_rows'),
    ]

    operations = [
        migrations.RunPython(drop_all_triggers, create_all_triggers),
        migrations.RunPython(reshape_events, unreshape_events),
        migrations.AlterField(
            model_name='ledgerevent',
            name='data',
            field=models.JSONField(blank=True, default=dict, validators=[ralphsite.core.shapes.JSONObject()]),
        ),
        migrations.AlterField(
            model_name='ledgerevent',
            name='meta',
            field=models.JSONField(blank=True, default=dict, validators=[ralphsite.core.shapes.JSONObject()]),
        ),
        migrations.AddConstraint(
            model_name='ledgerevent',
            constraint=models.CheckConstraint(condition=models.Q(django.db.models.lookups.Exact(ralphsite.core.shapes.JSONType('data'), 'object'), ('data__isnull', True), _connector='OR'), name='ledgerevent_data_object'),
        ),
        migrations.AddConstraint(
            model_name='ledgerevent',
            constraint=models.CheckConstraint(condition=models.Q(django.db.models.lookups.Exact(ralphsite.core.shapes.JSONType('meta'), 'object'), ('meta__isnull', True), _connector='OR'), name='ledgerevent_meta_object'),
        ),
        migrations.RunPython(create_all_triggers, drop_all_triggers),
    ]
