from django.db import migrations, models


class Migration(migrations.Migration):
    """An attempt's or invocation's cost the client did not send is priced by the ledger (issue #15 §3)."""

    dependencies = [
        ("sessions_app", "0010_task_claim"),
    ]

    operations = [
        migrations.AddField(
            model_name="agentinvocation",
            name="is_estimated",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="taskattempt",
            name="is_estimated",
            field=models.BooleanField(default=False),
        ),
    ]
