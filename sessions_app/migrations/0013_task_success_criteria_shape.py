"""A task's `success_criteria` is a list of strings (issue #26 §1): model validation in the task services,
and a CHECK that the column holds a list (`ralphsite.core.shapes`). Values stored before in another shape
become the list of that one string (a single criterion) or, failing that, an empty list; each original is
kept as a SeedRow (kind "quarantine"), which the way back restores."""

from typing import Any

import django.db.models.lookups
from django.db import migrations, models

import ralphsite.core.shapes
from ralphsite.core.shapes import JSONList, JSONString, rows_reshape, rows_unreshape


class _Criteria(JSONList):
    def reshape(self, value: Any) -> Any:
        return [value] if isinstance(value, str) else super().reshape(value)


def reshape_criteria(apps: Any, schema_editor: Any) -> None:
    rows_reshape(apps, schema_editor, model="sessions_app.Task", name="success_criteria",
                 shape=_Criteria(JSONString()), default=[])


def unreshape_criteria(apps: Any, schema_editor: Any) -> None:
    rows_unreshape(apps, schema_editor, model="sessions_app.Task", name="success_criteria")


class Migration(migrations.Migration):

    dependencies = [
        ('sessions_app', '0012_tokens_never_negative'),
        ('ralphsite', '0004_seed_rows'),
    ]

    operations = [
        migrations.RunPython(reshape_criteria, unreshape_criteria),
        migrations.AlterField(
            model_name='task',
            name='success_criteria',
            field=models.JSONField(blank=True, default=list, validators=[ralphsite.core.shapes.JSONList(ralphsite.core.shapes.JSONString())]),
        ),
        migrations.AddConstraint(
            model_name='task',
            constraint=models.CheckConstraint(condition=models.Q(django.db.models.lookups.Exact(ralphsite.core.shapes.JSONType('success_criteria'), 'array'), ('success_criteria__isnull', True), _connector='OR'), name='task_success_criteria_array'),
        ),
    ]
