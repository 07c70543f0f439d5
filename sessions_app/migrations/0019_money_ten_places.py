"""USD keeps 10 decimal places (issue #26: ralphy's REAL costs such as 1.5e-07 kept as they are;
`ralphsite.core.money`): PostgreSQL's numeric(18, 6) columns become numeric(22, 10), SQLite's whole
micro-dollars become whole 1e-10 USD (`ralphsite.core.db.money_storage.money_places`; SQLite's tables
are not rebuilt). Backwards: rounded to 6 places again, half up."""

from django.db import migrations, models

from ralphsite.core.db.money_storage import money_places

MONEY_COLUMNS = {"sessions_app_session": ("total_cost_usd",), "sessions_app_taskattempt": ("cost_usd",),
                 "sessions_app_agentinvocation": ("cost_usd",)}


class Migration(migrations.Migration):

    dependencies = [
        ('sessions_app', '0018_search_reports'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='agentinvocation',
                    name='cost_usd',
                    field=models.DecimalField(decimal_places=10, default=0, max_digits=22),
                ),
                migrations.AlterField(
                    model_name='session',
                    name='total_cost_usd',
                    field=models.DecimalField(decimal_places=10, default=0, max_digits=22),
                ),
                migrations.AlterField(
                    model_name='taskattempt',
                    name='cost_usd',
                    field=models.DecimalField(decimal_places=10, default=0, max_digits=22),
                ),
            ],
            database_operations=[money_places(MONEY_COLUMNS, before=(18, 6), after=(22, 10))],
        ),
    ]
