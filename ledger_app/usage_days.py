"""The usage rollup (`UsageDay`): token usage summed per session, UTC day, model and agent, kept by
the database itself.

Triggers on the usage table add each inserted row to its (session, day, model, agent) row and take
away each deleted one (an update does both: a session set to NULL on its deletion moves the call's
sums to the NULL key), in the writing transaction, whichever path wrote it: the services (including
`usage_replace`, which deletes and re-inserts), a seed import, the benchmark's bulk seed, an
operator's shell. So the rollup always equals the rows' sums (`tests/ledger_app/test_usage_days.py`),
and every usage figure (the dashboard, the cost view, the console's cost panel, the API's usage
statistics under any token scope) reads rollup rows instead of aggregating calls: at 200,000 calls the
cost view took 5 s and the dashboard 3 s; a session of 20,000 calls doubled its console's time.

* SQLite: row triggers with `INSERT … ON CONFLICT DO UPDATE` (SQLite 3.24+). Datetimes are stored as
  UTC text, so `date(recorded_at)` is the UTC day.
* PostgreSQL: statement triggers over transition tables, so a bulk insert of 1,000 calls is one grouped
  upsert, its keys in sorted order (two transactions lock shared rollup rows in the same order).

The SQL is frozen in `ledger_app.migrations.frozen.usage_days_v2` (the migrations run it; a change is a
new version and a migration). A migration that makes SQLite rebuild the usage table drops its triggers:
it must create them again from the frozen version in force (the test checks they exist after all
migrations). `usage_days_rebuild` recomputes the rollup from the rows, as a repair.
"""

from django.db import connection, transaction

from ledger_app.migrations.frozen import usage_days_v2 as current
from ledger_app.models import UsageSums

USAGE_TABLE = "ledger_app_tokenusage"
SUMMED = tuple(field.name for field in UsageSums._meta.local_fields)
TRIGGER_NAMES = set(current.TRIGGER_NAMES)


def usage_days_rebuild() -> int:
    """Recompute the rollup from every usage row; returns its row count."""
    with transaction.atomic():
        return current.fill(connection)
