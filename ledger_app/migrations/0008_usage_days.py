"""The daily usage rollup and the triggers that keep it (`ledger_app.usage_days`), filled from the
usage rows already recorded. Its SQL is frozen in `frozen.usage_days_v1`."""

from typing import Any

from django.db import migrations, models

from ledger_app.migrations.frozen import usage_days_v1


def rollup_create(apps: Any, schema_editor: Any) -> None:
    usage_days_v1.create_triggers(apps, schema_editor)
    usage_days_v1.fill(apps, schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0007_one_book_of_usage'),
    ]

    operations = [
        migrations.CreateModel(
            name='UsageDay',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('day', models.DateField()),
                ('model', models.CharField(max_length=100)),
                ('agent', models.CharField(blank=True, default='', max_length=200)),
                ('calls', models.BigIntegerField(default=0)),
                ('input_tokens', models.BigIntegerField(default=0)),
                ('output_tokens', models.BigIntegerField(default=0)),
                ('cached_read_tokens', models.BigIntegerField(default=0)),
                ('cached_write_tokens', models.BigIntegerField(default=0)),
                ('reasoning_tokens', models.BigIntegerField(default=0)),
                ('cost_usd', models.DecimalField(decimal_places=6, default=0, max_digits=18)),
            ],
            options={
                'ordering': ['-day', 'model', 'agent'],
                'constraints': [models.UniqueConstraint(fields=('day', 'model', 'agent'), name='usageday_day_model_agent')],
            },
        ),
        migrations.RunPython(rollup_create, usage_days_v1.drop_triggers),
    ]
