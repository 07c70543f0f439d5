"""The scale phase's bulk seeder, on the real test database."""

import pytest
from django.db import connection

from ledger_app.chain_verify import chain_verify
from ledger_app.models import LedgerEvent
from sessions_app.models import Session
from tests.benchmarks.seed import SeedSkipped, bulk_seed

pytestmark = pytest.mark.django_db(transaction=True)


def _sessions(count: int) -> list[str]:
    return [Session.objects.create(key=f"seed-{i}", user_request="seed").pk for i in range(count)]


def test_it_spreads_rows_over_the_parents_in_batches() -> None:
    parents = _sessions(3)

    result = bulk_seed(model=LedgerEvent, parent_model=Session, parent_ids=parents, total=250,
                       overrides={"type": "x-bench"}, batch_size=100)

    assert (result.table, result.rows) == (LedgerEvent._meta.db_table, 250)
    assert LedgerEvent.objects.filter(type="x-bench").count() == 250
    per_parent = sorted(LedgerEvent.objects.filter(session_id=p).count() for p in parents)
    assert per_parent == [83, 83, 84]
    assert chain_verify().intact  # seeded through the chain, so the API appends after them


def test_it_refuses_to_seed_without_parents() -> None:
    with pytest.raises(SeedSkipped):
        bulk_seed(model=LedgerEvent, parent_model=Session, parent_ids=[], total=10)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite write-ahead log")
def test_it_leaves_the_write_ahead_log_empty_on_sqlite() -> None:
    # The measurements after the load must not share the disk with a checkpoint of the load.
    parents = _sessions(1)

    bulk_seed(model=LedgerEvent, parent_model=Session, parent_ids=parents, total=2000, batch_size=500,
              overrides={"type": "x-bench"})

    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
        busy, log_frames, copied = cursor.fetchone()
    assert (busy, log_frames, copied) == (0, 0, 0)
