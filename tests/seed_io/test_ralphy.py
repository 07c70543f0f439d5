"""import_seed ralphy: ralphy's ralphy.db (epoch times), built from seed 001's DDL."""

from datetime import UTC, datetime
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from ledger_app.models import Checkpoint, Issue, LedgerEvent
from ralphsite.core.models import SeedRow
from sessions_app.models import Session, Task
from tests.seed_io.helpers import import_seed, seed_database, summary_row

pytestmark = pytest.mark.django_db

T0 = 1_767_225_600  # 2026-01-01T00:00:00Z
LEDGER_TYPES = ["run_started", "task_started", "backend_call_finished", "task_finished", "run_started"]  # seed 001's


def _ralphy_db(path: Path) -> Path:
    return seed_database(path, "ralphy", {
        "runs": [
            {"id": "run-20260101-a", "status": "completed", "started_at": T0, "ended_at": T0 + 3600,
             "config_json": '{"model": "sonnet", "max_iterations": 20, "메모": "🚀"}'},
            {"id": "run-20260102-b", "status": "running", "started_at": (T0 + 86400) * 1000, "ended_at": None,
             "config_json": "{}"},
        ],
        "tasks": [
            {"run_id": run, "task_id": task, "status": status, "iter_count": iters, "started_at": start,
             "ended_at": end, "last_phase": phase}
            for run, task, status, iters, start, end, phase in [
                ("run-20260101-a", "auth-001", "done", 3, T0 + 10, T0 + 600, "verify"),
                ("run-20260101-a", "auth-002", "failed", 5, T0 + 700, T0 + 900, "build"),
                ("run-20260101-a", "auth-003", "skipped", None, None, None, None),
                ("run-20260102-b", "auth-001", "running", 1, T0 + 86500, None, "implement"),
                ("run-20260102-b", "auth-004", "pending", 0, None, None, None)]],
        "ledger": [
            {"run_id": "run-20260101-a" if i < 4 else "run-20260102-b", "ts": T0 + i, "type": kind,
             "task_id": "auth-001" if i else None, "phase": "verify" if i else None, "duration_ms": 1500 * i or None,
             "tokens_in": 100 * i or None, "tokens_out": 10 * i or None, "tokens_total": None if i == 2 else 110 * i,
             "cost_usd": 0.0012345 * i, "is_estimated": i % 2, "meta_json": '{"note": "검증 ✅"}' if i else None}
            for i, kind in enumerate(LEDGER_TYPES)],
        "issues": [
            {"id": f"iss-{n}", "run_id": run, "task_id": "auth-002", "kind": "typecheck",
             "signature": "typecheck:src/api.ts:42:TS2322", "message": "Type 'string' is not assignable 🙃",
             "file": "src/api.ts" if n == 1 else None, "line": 42 if n == 1 else None, "ts": T0 + 800 + n,
             "count": 4 if n == 1 else None}
            for n, run in ((1, "run-20260101-a"), (2, "run-20260102-b"))],
        "checkpoints": [{"id": "chk-auth-001", "run_id": "run-20260101-a", "task_id": "auth-001",
                         "git_ref": "abc123", "summary": None, "ts": T0 + 601}],
    })


def test_it_imports_every_row_and_column_of_a_ralphy_db(tmp_path: Path) -> None:
    output = import_seed("ralphy", _ralphy_db(tmp_path / "ralphy.db"))
    assert summary_row(output, "ledger") == ["5", "5", "0", "0", "0", "0"]
    first, second = Session.objects.get(key="run-20260101-a"), Session.objects.get(key="run-20260102-b")
    assert (first.status, first.config, first.started_at, first.ended_at) == (
        "completed", {"model": "sonnet", "max_iterations": 20, "메모": "🚀"}, datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 1, 1, 1, tzinfo=UTC))
    assert second.started_at == datetime(2026, 1, 2, tzinfo=UTC)  # epoch milliseconds

    tasks = {(t.session.key, t.key): t for t in Task.objects.select_related("session")}
    assert {k: t.status for k, t in tasks.items()} == {
        ("run-20260101-a", "auth-001"): "completed", ("run-20260101-a", "auth-002"): "failed",
        ("run-20260101-a", "auth-003"): "skipped", ("run-20260102-b", "auth-001"): "in_progress",
        ("run-20260102-b", "auth-004"): "not_started"}
    done = tasks[("run-20260101-a", "auth-001")]
    assert (done.title, done.iteration_count, done.last_phase, done.completed_at) == (
        "auth-001", 3, "verify", datetime(2026, 1, 1, 0, 10, tzinfo=UTC))

    events = list(LedgerEvent.objects.order_by("id"))
    assert [e.type for e in events] == LEDGER_TYPES
    assert (events[0].tokens_in, events[0].duration_ms, events[0].meta, events[0].task_key) == (0, None, {}, "")
    llm = events[2]
    assert (llm.tokens_in, llm.tokens_out, llm.tokens_total, llm.cost_usd, llm.is_estimated, llm.meta) == (
        200, 20, 220, Decimal("0.002469"), False, {"note": "검증 ✅"})
    # epoch seconds: kept, so an export writes seconds back (a new row is written in milliseconds)
    assert SeedRow.objects.get(source_table="ledger", source_key="3").extra == {"tokens_total": None, "ts": T0 + 2}

    issues = list(Issue.objects.order_by("first_seen_at"))
    assert [(i.session.key, i.count, i.file, i.line) for i in issues] == [
        ("run-20260101-a", 4, "src/api.ts", 42), ("run-20260102-b", 1, "", None)]
    checkpoint = Checkpoint.objects.get(key="chk-auth-001")
    assert (checkpoint.session, checkpoint.git_ref, checkpoint.task_key) == (first, "abc123", "auth-001")
    out = StringIO()
    call_command("ledger_verify", stdout=out, stderr=StringIO())
    assert "ledger chain intact: 5 events" in out.getvalue()


def test_a_second_import_creates_nothing(tmp_path: Path) -> None:
    path = _ralphy_db(tmp_path / "ralphy.db")
    import_seed("ralphy", path)
    again = import_seed("ralphy", path)
    assert "nothing new" in again and LedgerEvent.objects.count() == 5 and Task.objects.count() == 5
