"""Claude Code's hooks record their calls under a source of their own, `run` (the conversation run whose calls they
are; `source_id` names it from 0018 on): DevTeam's `token_usage`, which the statistics named after its views read,
holds only the calls booked as token usage. The calls the hooks recorded before (operation and agent
`claude-code`, as `ralphsite.agents.claude_code.hooks` wrote them) move to it, naming no run; a choices change alone
rebuilds no table (the rollup's triggers stay), and the rollup sums no source."""

from django.db import migrations, models

HOOK_CALLS = {"operation": "claude-code", "agent": "claude-code"}  # frozen: the hooks' values when this was written


def hook_calls_apart(apps, schema_editor) -> None:
    apps.get_model("ledger_app", "TokenUsage").objects.filter(source="token_usage", **HOOK_CALLS).update(
        source="run")


def hook_calls_back(apps, schema_editor) -> None:
    apps.get_model("ledger_app", "TokenUsage").objects.filter(source="run").update(source="token_usage", source_id="")


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0015_checkpoint_keys_never_shaped_like_ids'),
    ]

    operations = [
        migrations.AlterField(
            model_name='tokenusage',
            name='source',
            field=models.CharField(choices=[('token_usage', 'Token Usage'), ('event', 'Event'), ('attempt', 'Attempt'), ('invocation', 'Invocation'), ('run', 'Run')], default='token_usage', max_length=16),
        ),
        migrations.RunPython(hook_calls_apart, hook_calls_back),
    ]
