"""A usage row may name the conversation run whose call it is (`source` "run", `source_id` the run's id):
Claude Code's hooks book each call of a Claude session against its run, so a conversation shows its
tokens and cost per run from the one book of usage (issue #31 §7). Choices and help text only: no SQL on
either backend. Rows booked before keep their source (their runs show their own token count)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0016_search_events'),
    ]

    operations = [
        migrations.AlterField(
            model_name='tokenusage',
            name='source',
            field=models.CharField(choices=[('token_usage', 'Token Usage'), ('event', 'Event'), ('attempt', 'Attempt'), ('invocation', 'Invocation'), ('run', 'Run')], default='token_usage', max_length=16),
        ),
        migrations.AlterField(
            model_name='tokenusage',
            name='source_id',
            field=models.CharField(blank=True, default='', help_text='The id of the attempt, invocation or run that reported this call.', max_length=40),
        ),
    ]
