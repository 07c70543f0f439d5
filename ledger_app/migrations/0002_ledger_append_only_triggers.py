"""Make the database reject UPDATE and DELETE (and TRUNCATE on PostgreSQL) on ledger events.

The SQL is frozen in `ledger_app.migrations.frozen.append_only_v1` (one statement list per backend). A later migration that
makes SQLite rebuild `ledger_app_ledgerevent` drops these triggers: it must run
`create_triggers` again (tests/ledger_app/test_append_only.py checks they exist after all migrations).
"""

from django.db import migrations

from ledger_app.migrations.frozen.append_only_v1 import create_triggers, drop_triggers


class Migration(migrations.Migration):
    dependencies = [("ledger_app", "0001_initial")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
