"""manage.py purge_deleted (retention) and the migrate command's ACODE-CONV-DATA-005."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from conversations_app.models import Chat, Message, Run, SyncStatus

pytestmark = pytest.mark.django_db


def _search_index_size() -> int:
    """Rows in the search index: SQLite's FTS documents; on PostgreSQL the index is on the table itself."""
    table = "conv_search_doc" if connection.vendor == "sqlite" else "conversations_app_message"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        return cursor.fetchone()[0]


def test_it_purges_chats_deleted_before_the_cutoff_with_their_runs_and_messages(make_run, append) -> None:
    old_run, recent_run, live_run = make_run(), make_run(), make_run()
    for run in (old_run, recent_run, live_run):
        append(run, "a", "b")
    # A synced tombstone (an unsynced one is kept: tests/ralphsite/test_operator_commands.py).
    Chat.objects.filter(pk=old_run.chat_id).update(is_deleted=True, deleted_at=timezone.now() - timedelta(days=31),
                                                   sync_status=SyncStatus.SYNCED)
    Chat.objects.filter(pk=recent_run.chat_id).update(is_deleted=True, deleted_at=timezone.now() - timedelta(days=2))
    out = StringIO()
    call_command("purge_deleted", "--older-than", "30d", stdout=out)
    text = out.getvalue()
    assert "Purged 1 chat(s)" in text and "2 message" in text and "1 run" in text and old_run.chat_id in text
    assert set(Chat.objects.values_list("pk", flat=True)) == {recent_run.chat_id, live_run.chat_id}
    assert not Run.objects.filter(pk=old_run.pk).exists()
    assert Message.objects.count() == 4
    assert _search_index_size() == 4  # the purged messages left the search index too
    out = StringIO()
    call_command("purge_deleted", "--older-than", "30d", stdout=out)
    assert "Nothing to purge" in out.getvalue()


def test_it_refuses_a_bad_age() -> None:
    with pytest.raises(CommandError, match="30d"):
        call_command("purge_deleted", "--older-than", "thirty days")


@pytest.mark.django_db(transaction=True)
def test_it_reports_a_failed_conversations_migration_with_acode_conv_data_005(settings) -> None:
    settings.MIGRATION_MODULES = {"conversations_app": "tests.conversations_app.failing_migrations"}
    err = StringIO()
    with pytest.raises(CommandError, match="ACODE-CONV-DATA-005"):
        call_command("migrate", "conversations_app", stdout=StringIO(), stderr=err)
    assert "ACODE-CONV-DATA-005: migration conversations_app.0003_fails failed" in err.getvalue()
