from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

PROJECT_APPS = ("sessions_app", "conversations_app", "ledger_app", "ralphsite")


def test_the_models_and_migrations_agree() -> None:
    call_command("makemigrations", "--check", "--dry-run", stdout=StringIO())


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
