"""A usage row may name the conversation run whose call it is (`source` "run", `source_id` the run's id):
Claude Code's hooks book each call of a Claude session against its run, so a conversation shows its
tokens and cost per run from the one book of usage (issue #31 §7). Help text only (0016 added the choice): no SQL on
either backend. Rows booked before name no run (0016; their runs show their own token count)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0017_search_events'),
    ]

    operations = [
        migrations.AlterField(
            model_name='tokenusage',
            name='source_id',
            field=models.CharField(blank=True, default='', help_text='The id of the attempt, invocation or run that reported this call.', max_length=40),
        ),
    ]
