"""The storage floor: the benchmark's rows written and read with Python's sqlite3 module directly.

Same file system, same pragmas as the app's SQLite connections (ralphsite/core/db/config.py), tables
shaped like the app's (ULID text keys, JSON as text, an integer-id ledger). Each API operation is
compared with the floor operation that does the same storage work:

  insert_row        one INSERT in its own BEGIN IMMEDIATE … COMMIT (the API commits per request)
  get_by_id         SELECT * … WHERE id = ?
  list_100          SELECT * … WHERE run_id = ? ORDER BY sequence_number LIMIT 100
  claim_row         BEGIN IMMEDIATE; SELECT the oldest unclaimed row; UPDATE it; COMMIT
  batch_insert_1000 1,000 INSERTs in one transaction (executemany), reported per batch
"""

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ralphsite.core.db.config import SQLITE_INIT_COMMAND
from ralphsite.core.ulid import ulid_new
from tests.benchmarks.stats import Summary, summarize

_SCHEMA = """
CREATE TABLE chat (id TEXT PRIMARY KEY, title TEXT NOT NULL, tags TEXT NOT NULL, worktree_id TEXT NOT NULL,
                   is_deleted INTEGER NOT NULL, sync_status TEXT NOT NULL, version INTEGER NOT NULL,
                   created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,
                      tool_calls TEXT NOT NULL, sequence_number INTEGER NOT NULL, sync_status TEXT NOT NULL,
                      created_at TEXT NOT NULL, UNIQUE (run_id, sequence_number));
CREATE TABLE event (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, type TEXT NOT NULL,
                    agent TEXT NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,
                    message TEXT NOT NULL, data TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX event_session_id ON event (session_id, id);
CREATE TABLE claim (id INTEGER PRIMARY KEY, claimed INTEGER NOT NULL DEFAULT 0, agent TEXT NOT NULL DEFAULT '');
CREATE INDEX claim_unclaimed ON claim (claimed, id);
"""

FLOOR_OPS = ("insert_row", "get_by_id", "list_100", "claim_row", "batch_insert_1000")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000000+00:00"


def _message_row(run_id: str, seq: int) -> tuple:
    return (ulid_new(), run_id, "assistant", f"benchmark message {seq} " + "x" * 200,
            "[]", seq, "pending", _now())


def _event_row(session_id: str, i: int) -> tuple:
    return (session_id, "task_started", "executor", 100, 20, f"event {i}", json.dumps({"i": i}), _now())


def _timed(samples: int, op: Callable[[int], object]) -> Summary:
    out = []
    for i in range(samples):
        started = time.perf_counter_ns()
        op(i)
        out.append(time.perf_counter_ns() - started)
    return summarize(out)


def storage_floor_measure(*, directory: Path, samples: int, warmup: int) -> dict[str, Summary]:
    """Run every floor operation `samples` times (after `warmup`) on a fresh database file."""
    path = directory / "floor.sqlite3"
    # isolation_level=None: transactions are explicit, exactly as written below.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.executescript(SQLITE_INIT_COMMAND)
        conn.executescript(_SCHEMA)
        run_id = ulid_new()
        session_id = ulid_new()
        seq = iter(range(1, 10**9))

        def insert_row(_: int) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?, ?, ?, ?)", _message_row(run_id, next(seq)))
            conn.execute("COMMIT")

        ids: list[str] = []

        def insert_chat(i: int) -> None:
            chat_id = ulid_new()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO chat VALUES (?, ?, ?, ?, 0, 'pending', 1, ?, ?)",
                         (chat_id, f"chat {i}", '["bench"]', "wt-1", _now(), _now()))
            conn.execute("COMMIT")
            ids.append(chat_id)

        def get_by_id(i: int) -> None:
            conn.execute("SELECT * FROM chat WHERE id = ?", (ids[i % len(ids)],)).fetchone()

        def list_100(_: int) -> None:
            conn.execute("SELECT * FROM message WHERE run_id = ? ORDER BY sequence_number LIMIT 100",
                         (run_id,)).fetchall()

        def claim_row(i: int) -> None:
            conn.execute("BEGIN IMMEDIATE")
            row = conn.execute("SELECT id FROM claim WHERE claimed = 0 ORDER BY id LIMIT 1").fetchone()
            conn.execute("UPDATE claim SET claimed = 1, agent = ? WHERE id = ?", (f"agent-{i}", row[0]))
            conn.execute("COMMIT")

        counter = iter(range(10**12))

        def batch_insert_1000(_: int) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO event (session_id, type, agent, tokens_in, tokens_out, message, data, "
                             "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             [_event_row(session_id, next(counter)) for _ in range(1000)])
            conn.execute("COMMIT")

        total = samples + warmup
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO claim (id) VALUES (?)", [(i,) for i in range(1, total + 1)])
        conn.execute("COMMIT")

        results: dict[str, Summary] = {}
        for name, op, count in (
            ("insert_row", insert_row, samples),
            ("insert_chat", insert_chat, samples),
            ("get_by_id", get_by_id, samples),
            ("list_100", list_100, samples),
            ("claim_row", claim_row, samples),
            # Batches are heavy; a tenth of the samples gives a stable events/s figure.
            ("batch_insert_1000", batch_insert_1000, max(samples // 20, 5)),
        ):
            for i in range(min(warmup, count)):
                op(i)
            results[name] = _timed(count, op)
        # insert_chat only exists to give get_by_id real rows; insert_row is the insert floor.
        results.pop("insert_chat")
        return results
    finally:
        conn.close()
