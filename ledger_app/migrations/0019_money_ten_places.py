"""USD keeps 10 decimal places (issue #26: ralphy's REAL costs such as 1.5e-07 kept as they are, a
price of $0.0001 per million tokens; `ralphsite.core.money`): PostgreSQL's numeric(18, 6) columns
become numeric(22, 10) (a table rewrite: the append-only and usage-day triggers do not fire), SQLite's
whole micro-dollars become whole 1e-10 USD (`ralphsite.core.db.money_storage.money_places`), past the
ledger's append-only triggers and the usage rollup's, dropped and created again around the UPDATEs
(the rollup is rescaled with its calls, not moved by them). The hash chain hashes an amount of six
places or fewer as it did (`ledger_app.chain`), so every chain written before verifies after.
Backwards: rounded to 6 places again, half up (an event with more places then no longer verifies)."""

from typing import Any

from django.db import migrations, models

from ledger_app.migrations.frozen import usage_days_v2
from ledger_app.migrations.frozen.append_only_v2 import create_all_triggers, drop_all_triggers
from ralphsite.core.db.money_storage import Step, money_places

MONEY_COLUMNS = {"ledger_app_ledgerevent": ("cost_usd",), "ledger_app_tokenusage": ("cost_usd",),
                 "ledger_app_usageday": ("cost_usd",),
                 "ledger_app_modelprice": ("input_per_mtok", "output_per_mtok", "cached_read_per_mtok",
                                           "cached_write_per_mtok", "reasoning_per_mtok")}


def past_the_triggers(step: Step) -> Step:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "sqlite":
            step(apps, schema_editor)
            return
        drop_all_triggers(apps, schema_editor)
        usage_days_v2.drop_triggers(schema_editor.connection)
        step(apps, schema_editor)
        usage_days_v2.create_triggers(schema_editor.connection)
        create_all_triggers(apps, schema_editor)
    return run


def _money(model_name: str, name: str, help_text: str = '') -> migrations.AlterField:
    return migrations.AlterField(model_name=model_name, name=name, field=models.DecimalField(
        decimal_places=10, default=0, max_digits=22, **({'help_text': help_text} if help_text else {})))


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0018_usage_of_a_run'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                _money('ledgerevent', 'cost_usd'),
                *(_money('modelprice', name, 'USD per million tokens.')
                  for name in MONEY_COLUMNS['ledger_app_modelprice']),
                _money('tokenusage', 'cost_usd'),
                _money('usageday', 'cost_usd'),
            ],
            database_operations=[money_places(MONEY_COLUMNS, before=(18, 6), after=(22, 10),
                                              around=past_the_triggers)],
        ),
    ]
