"""One book of usage (issue #15 §3): token usage gets request_id, source and source_id, and the usage
that ledger events, attempts and invocations carried is recorded in it (backwards: removed again), so
session totals stay the sum of its rows. SQLite's USD columns move to whole micro-dollars
(`ralphsite.core.money.MoneyField`), the events' past their append-only triggers, dropped and created again."""

from typing import Any

from django.db import migrations, models

from ledger_app.migrations.frozen.append_only_v1 import create_triggers, drop_triggers
from ralphsite.core.db.money_storage import money_to_micros

MONEY_COLUMNS = {"ledger_app_tokenusage": ("cost_usd",),
                 "ledger_app_modelprice": ("input_per_mtok", "output_per_mtok", "cached_read_per_mtok",
                                           "cached_write_per_mtok", "reasoning_per_mtok")}
EVENT_MONEY = {"ledger_app_ledgerevent": ("cost_usd",)}

_USAGE_COLUMNS = ("session_id, task_key, sprint_key, model, input_tokens, output_tokens, cached_read_tokens, "
                  "cached_write_tokens, reasoning_tokens, cost_usd, is_estimated, operation, agent, recorded_at, "
                  "request_id, source, source_id")
_USAGE_SOURCES = [
    "SELECT session_id, task_key, '', model, tokens_in, tokens_out, 0, 0, 0, cost_usd, is_estimated, type, agent, "
    "timestamp, '', 'event', '' FROM ledger_app_ledgerevent WHERE session_id IS NOT NULL "
    "AND (tokens_in <> 0 OR tokens_out <> 0 OR cost_usd <> 0)",
    "SELECT a.session_id, t.key, '', a.model, a.tokens_input, a.tokens_output, 0, 0, 0, a.cost_usd, %s, 'attempt', "
    "a.agent, COALESCE(a.started_at, a.created_at), '', 'attempt', a.id FROM sessions_app_taskattempt a "
    "JOIN sessions_app_task t ON t.id = a.task_id "
    "WHERE a.tokens_input <> 0 OR a.tokens_output <> 0 OR a.cost_usd <> 0",
    "SELECT session_id, task_key, '', model, tokens_input, tokens_output, 0, 0, 0, cost_usd, %s, 'invocation', "
    "agent, started_at, '', 'invocation', id FROM sessions_app_agentinvocation "
    "WHERE tokens_input <> 0 OR tokens_output <> 0 OR cost_usd <> 0",
]


def events_money(step: Any) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return
        drop_triggers(apps, schema_editor)
        step(apps, schema_editor)
        create_triggers(apps, schema_editor)
    return run


def usage_into_the_book(apps: Any, schema_editor: Any) -> None:
    for select in _USAGE_SOURCES:
        schema_editor.execute(f"INSERT INTO ledger_app_tokenusage ({_USAGE_COLUMNS}) {select}",
                              params=[False] if "%s" in select else None)


def usage_out_of_the_book(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute("DELETE FROM ledger_app_tokenusage WHERE source <> 'token_usage'", params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0006_session_delete_keeps_history'),
        ('sessions_app', '0009_money_exact_and_request_ids'),
    ]

    operations = [
        migrations.AddField(
            model_name='tokenusage',
            name='request_id',
            field=models.CharField(blank=True, default='', help_text="The provider's request id: the same id within a session is one call, counted once however many rows report it.", max_length=200),
        ),
        migrations.AddField(
            model_name='tokenusage',
            name='source',
            field=models.CharField(choices=[('token_usage', 'Token Usage'), ('event', 'Event'), ('attempt', 'Attempt'), ('invocation', 'Invocation')], default='token_usage', max_length=16),
        ),
        migrations.AddField(
            model_name='tokenusage',
            name='source_id',
            field=models.CharField(blank=True, default='', help_text='The id of the attempt or invocation that reported this call.', max_length=40),
        ),
        migrations.AddIndex(
            model_name='tokenusage',
            index=models.Index(fields=['source', 'source_id'], name='tokenusage_source'),
        ),
        migrations.AddConstraint(
            model_name='tokenusage',
            constraint=models.UniqueConstraint(condition=models.Q(('request_id', ''), _negated=True), fields=('session', 'request_id'), name='tokenusage_session_request'),
        ),
        money_to_micros(MONEY_COLUMNS),
        money_to_micros(EVENT_MONEY, around=events_money),
        migrations.RunPython(usage_into_the_book, usage_out_of_the_book),
    ]
