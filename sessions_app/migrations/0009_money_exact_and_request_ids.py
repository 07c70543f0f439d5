"""Request ids on attempts and invocations (issue #15 §3); SQLite's USD columns move to whole
micro-dollars (`ralphsite.core.money.MoneyField`; PostgreSQL keeps numeric, nothing to do there)."""

from django.db import migrations, models

from ralphsite.core.db.money_storage import money_to_micros

MONEY_COLUMNS = {"sessions_app_session": ("total_cost_usd",), "sessions_app_taskattempt": ("cost_usd",),
                 "sessions_app_agentinvocation": ("cost_usd",)}


class Migration(migrations.Migration):

    dependencies = [
        ('sessions_app', '0008_lifecycles_and_restrict'),
    ]

    operations = [
        migrations.AddField(
            model_name='agentinvocation',
            name='request_id',
            field=models.CharField(blank=True, default='', help_text="The provider's request id: the same id within a session is one call, counted once however many rows report it.", max_length=200),
        ),
        migrations.AddField(
            model_name='taskattempt',
            name='request_id',
            field=models.CharField(blank=True, default='', help_text="The provider's request id: the same id within a session is one call, counted once however many rows report it.", max_length=200),
        ),
        money_to_micros(MONEY_COLUMNS),
    ]
