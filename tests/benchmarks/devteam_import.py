"""The DevTeam import figure (issue #19 §1): a DevTeam database of N events, imported into a fresh database.

    .venv/bin/python -m tests.benchmarks.devteam_import [--events 1000000] [--keep DIR]
    DATABASE_URL=postgres://…/name .venv/bin/python -m tests.benchmarks.devteam_import   # a throw-away one beside it

The file is made from seed 003's DDL (ralphsite/moving/seed_io/schemas/devteam.sql): one session and N `events`
rows, each with agent, model, iteration, phase, a JSON `data` and `metadata`, a message, tokens and cents.
Without DATABASE_URL the import goes into a new SQLite data dir (RALPH_DATA_DIR in a temporary folder); with it,
into a throw-away PostgreSQL database next to the named one, dropped afterwards. `make bench` runs it last
(`--import-events`).
`manage.py migrate` runs first, then `manage.py import_seed devteam FILE`, then the same again (nothing
new); each is a child process, timed on its own, with its peak memory. Prints one line per run.
"""

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "ralphsite" / "moving" / "seed_io" / "schemas" / "devteam.sql"
TYPES = ["agent_started", "agent_completed", "phase_changed", "gate_passed", "gate_failed", "task_started",
         "task_completed", "model_escalated", "error_occurred"]


def devteam_file(path: Path, events: int) -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA.read_text())
        db.execute("INSERT INTO sessions (id, command, command_type, status) "
                   "VALUES ('sess-bench', '/devteam:implement', 'implement', 'running')")
        db.executemany(
            "INSERT INTO events (session_id, timestamp, event_type, event_category, agent, model, iteration, phase, "
            "data, metadata, message, tokens_input, tokens_output, cost_cents) "
            "VALUES ('sess-bench', ?, ?, 'agent', ?, ?, ?, 'executing', ?, ?, ?, ?, ?, ?)",
            ((f"2025-02-01 {n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}", TYPES[n % len(TYPES)],
              f"agent-{n % 7}", ("haiku", "sonnet", "opus")[n % 3], n % 50 + 1,
              json.dumps({"n": n, "files": [f"src/{n % 97}.ts"], "텍스트": "✅"}),
              '{"source": "hook"}' if n % 2 else None, f"event {n} 🚀", 100 + n % 1000, 10 + n % 100, n % 17)
             for n in range(events)))
    return path


def run(label: str, args: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode:
        raise SystemExit(f"{label} failed:\n{done.stdout}\n{done.stderr}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    summary = [line for line in done.stdout.splitlines() if line.startswith(("events", "nothing", "1", "2"))]
    print(f"{label}: {seconds:.1f} s (peak RSS of the children so far {peak_mb:.0f} MB) | {' | '.join(summary)}")
    return seconds


def import_figure(events: int, keep: Path | None = None) -> float:
    """Make the file, import it into a throw-away database (SQLite in a folder, or next to DATABASE_URL's), then
    again; prints each run and returns the first import's events per second. The folder (the file and the data
    dir: ~200 MB at a million events) is removed afterwards unless it is `keep`."""
    with nullcontext(keep) if keep else tempfile.TemporaryDirectory(prefix="ralph-devteam-bench-") as folder:
        return _import_measured(events, Path(folder))


def _import_measured(events: int, folder: Path) -> float:
    from tests.benchmarks.server import ThrowAwayDatabase

    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    path = devteam_file(folder / "devteam.db", events)
    print(f"made {path} ({events:,} events, {path.stat().st_size / 1e6:.1f} MB) in "
          f"{time.monotonic() - started:.1f} s")
    database = ThrowAwayDatabase.create(data_dir=folder / "data", base_url=os.environ.get("DATABASE_URL"))
    env = {**os.environ, "RALPH_DATA_DIR": str(folder / "data"), "DATABASE_URL": database.url}
    try:
        print(f"database: {database.vendor}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        run("migrate", ["migrate", "--noinput"], env)
        rate = events / run("first import", ["import_seed", "devteam", str(path)], env)
        print(f"  {rate:,.0f} events/s")
        again = run("the same file again", ["import_seed", "devteam", str(path)], env)
        print(f"  {events / again:,.0f} events/s; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        database.drop()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, default=None, help="Make the file and data dir here (kept).")
    options = parser.parse_args()
    import_figure(options.events, options.keep)


if __name__ == "__main__":
    main()
