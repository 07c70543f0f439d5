"""The scale-out benchmark's harness: a short phase against a real server keeps every invariant.

Runs on the backend of the test run (a throw-away PostgreSQL database next to DATABASE_URL's, or
SQLite), with two app hosts on PostgreSQL, so a change to the API the loop uses, or a lost
guarantee under concurrency, fails here and not only in `make bench`.
"""

import os

import pytest

from tests.benchmarks.scale_out import _check, _hosts, _phase
from tests.benchmarks.server import BenchServer

ON_POSTGRESQL = os.environ.get("DATABASE_URL", "").startswith("postgres")
TOTALS = "session totals = sum of usage rows = acknowledged"

pytestmark = pytest.mark.smoke  # real app hosts (gunicorn) started as `make bench` starts them


@pytest.mark.long
def test_a_short_loop_on_every_host_keeps_every_invariant() -> None:
    with _hosts(2 if ON_POSTGRESQL else 1, database_url=os.environ.get("DATABASE_URL"), keep=False) as hosts:
        token = _check(hosts[0], "token")
        phase = _phase("test", hosts, token, agents=4, seconds=3)

    assert phase["errors"] == 0, phase["error_examples"]
    assert phase["loops"] > 0 and phase["latency"]["claim"]["n"] > 0
    failed = {name: check for name, check in phase["invariants"].items() if check["ok"] is False}
    if not ON_POSTGRESQL and set(failed) == {TOTALS}:
        pytest.xfail("SQLite stores money as REAL: a sum of usage rows is not exact (issue #15, section 3)")
    assert failed == {}
    assert phase["invariants"]["ledger rows = appends acknowledged"]["rows"] > 0


def test_the_hosts_of_a_phase_share_one_database() -> None:
    with _hosts(2, database_url=os.environ.get("DATABASE_URL"), keep=False) as hosts:
        first, second = hosts
        assert isinstance(second, BenchServer) and second.database is first.database
        assert first.port != second.port and first.data_dir != second.data_dir
