from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from ralphsite.core.search.sources import search_sources

pytestmark = pytest.mark.django_db(transaction=True)

PROJECT_APPS = ("sessions_app", "conversations_app", "ledger_app", "ralphsite")


def test_the_models_and_migrations_agree() -> None:
    call_command("makemigrations", "--check", "--dry-run", stdout=StringIO())


def test_the_migrations_indexed_every_search_source_as_it_is_now() -> None:
    """The search's counterpart of the check above: each migration installs its own frozen copy of its
    app's searched tables, so a change to a live source (`search_sources.py`) needs a migration too."""
    with connection.cursor() as cursor:
        for source in search_sources():
            if connection.vendor == "sqlite":
                cursor.execute("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND name = %s",
                               [f"conv_search_{source.kind}_au"])
                table, sql = cursor.fetchone()
                assert f"UPDATE OF {', '.join(source.columns)} ON" in sql, sql
                assert f"{source.body('new')} WHERE rowid = " in sql and f"ref_id = {source.ref('new')})" in sql, sql
            else:
                cursor.execute("SELECT tablename, indexdef FROM pg_indexes WHERE indexname = %s",
                               [f"conv_search_{source.kind}_fts"])
                table, sql = cursor.fetchone()
                assert all(column in sql for column in source.columns), sql
            assert table == source.table


@pytest.mark.long
def test_every_migration_reverses_to_zero_and_applies_again() -> None:
    executor = MigrationExecutor(connection)
    # One plan back for all four apps: Django renders the project's states once per plan (10 s a time here).
    executor.migrate([(app, None) for app in PROJECT_APPS])
    executor = MigrationExecutor(connection)
    applied = {app for app, _ in executor.loader.applied_migrations}
    assert not applied & set(PROJECT_APPS)
    call_command("migrate", verbosity=0)
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
