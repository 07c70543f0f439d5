"""`make bench`: measure the API through the real HTTP server against the HTTP and storage floors.

    make bench                                  # SQLite, 2,000 samples, 1,000,000 events + 200,000 messages
    make bench BENCH_ARGS=--quick               # smoke run: 200 samples, small scale
    make bench BENCH_ARGS="--fast-paths --samples 400"   # each fast path on and off, interleaved
    DATABASE_URL=postgres://… make bench        # PostgreSQL (a throw-away database next to the named one)
    python -m tests.benchmarks.run --help

Prints a table on stdout and writes the figures as JSON to <data dir>/bench/ (and to --json).
"""

import argparse
import os
import platform
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from ralphsite.core.paths import data_dir
from tests.benchmarks.client import BenchClient
from tests.benchmarks.floors import storage_floor_measure
from tests.benchmarks.measure import (
    concurrent_event_body,
    measure_bulk_append,
    measure_concurrent,
    measure_operation,
)
from tests.benchmarks.operations import (
    ADMIN_SAMPLES,
    ADMIN_SCALE_OPERATIONS,
    HTTP_FLOOR,
    OPERATIONS,
    SCALE_OPERATIONS,
    State,
    event_body,
    setup_run,
    setup_session,
)
from tests.benchmarks.report import ratios_derive, report_print, report_write
from tests.benchmarks.server import REPO_DIR, BenchServer

BENCH_USERNAME = "bench"


def args_parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="make bench", description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=None, help="timed requests per operation (default 2000)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed requests first (default 200)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 200 samples, 50 warm-up, 20,000 events + 5,000 messages")
    parser.add_argument("--scale-events", type=int, default=None, help="ledger events to seed (default 1,000,000)")
    parser.add_argument("--scale-messages", type=int, default=None,
                        help="messages, and token usage rows, to seed (default 200,000 each)")
    parser.add_argument("--no-scale", action="store_true", help="skip the scale phase")
    parser.add_argument("--import-events", type=int, default=None,
                        help="DevTeam events for the import figure, last (default 100,000; --quick 10,000; 0 skips; "
                             "tests/benchmarks/devteam_import.py)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients for the append test (default 4)")
    parser.add_argument("--bulk-batches", type=int, default=None, help="1,000-event batches (default samples/100)")
    parser.add_argument("--only", default="", help="comma-separated operation keys to measure (default all)")
    parser.add_argument("--workers", type=int, default=None, help="gunicorn workers (default RALPH_WORKERS or 2)")
    parser.add_argument("--threads", type=int, default=None, help="threads per worker (default RALPH_THREADS)")
    parser.add_argument("--gunicorn-arg", action="append", default=[], metavar="ARG",
                        help="extra gunicorn argument, overrides gunicorn_conf (repeatable), "
                             "e.g. --gunicorn-arg=--worker-class=sync")
    parser.add_argument("--json", type=Path, default=None, help="also write the JSON results here")
    parser.add_argument("--keep", action="store_true", help="keep the throw-away data dir (for debugging)")
    parser.add_argument("--fast-paths", action="store_true",
                        help="each fast path on and off, interleaved, instead of the full run (--only names pieces; "
                             "tests/benchmarks/fast_paths_ab.py)")
    scale_out = parser.add_argument_group("scale-out (tests/benchmarks/scale_out.py)")
    scale_out.add_argument("--scale-out", action="store_true",
                           help="many agents on 1 and N app hosts sharing one PostgreSQL database, then SQLite")
    scale_out.add_argument("--hosts", type=int, default=2, help="app hosts in the N-host phase (default 2)")
    scale_out.add_argument("--agents", type=int, default=32, help="concurrent agents (default 32)")
    scale_out.add_argument("--seconds", type=float, default=30.0, help="length of each phase (default 30)")
    args = parser.parse_args(argv)
    # --quick only changes defaults: an explicit --samples/--warmup/--scale-* still wins.
    if args.samples is None:
        args.samples = 200 if args.quick else 2000
    if args.warmup is None:
        args.warmup = 50 if args.quick else 200
    if args.scale_events is None:
        args.scale_events = 20_000 if args.quick else 1_000_000
    if args.scale_messages is None:
        args.scale_messages = 5_000 if args.quick else 200_000
    if args.import_events is None:
        args.import_events = 10_000 if args.quick else 100_000
    if args.bulk_batches is None:
        args.bulk_batches = max(args.samples // 100, 5)
    if args.samples < 1 or args.warmup < 0:
        parser.error("--samples must be at least 1 and --warmup at least 0")
    if args.hosts < 1 or args.agents < 1 or args.seconds <= 0:
        parser.error("--hosts and --agents must be at least 1, --seconds positive")
    return args


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _django_setup(server: BenchServer) -> None:
    """Point this process at the server's throw-away database, then set Django up (seeding, user)."""
    env = server.env()
    for name in ("RALPH_DATA_DIR", "DATABASE_URL", "DJANGO_SETTINGS_MODULE", "DEBUG"):
        os.environ[name] = env[name]
    os.environ.pop("RALPH_DB_POOL_SIZE", None)
    import django

    django.setup()


def _token_create() -> str:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from ralphsite.core.models import TokenScope
    from ralphsite.tokens.services import api_token_create

    user = get_user_model().objects.create_user(username=BENCH_USERNAME, password=None, is_staff=True,
                                                is_superuser=True)
    token = api_token_create(user=user, scope=TokenScope.GLOBAL).secret
    connection.close()
    return token


def _admin_cookie() -> str:
    """A logged-in admin session for the bench user (made a superuser), as a Cookie header value."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.db import connection

    user = get_user_model().objects.get(username=BENCH_USERNAME)
    user.is_superuser = True
    user.save(update_fields=["is_superuser"])
    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session.update({SESSION_KEY: str(user.pk), BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
                    HASH_SESSION_KEY: user.get_session_auth_hash()})
    session.create()
    connection.close()
    return f"{settings.SESSION_COOKIE_NAME}={session.session_key}"


def _meta(args: argparse.Namespace, server: BenchServer) -> dict[str, Any]:
    import django
    import gunicorn
    from django.db import connection

    from ralphsite.server import gunicorn_conf

    cpu_model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_DIR, capture_output=True,
                            text=True, check=False).stdout.strip()
    database: dict[str, Any] = {"vendor": connection.vendor}
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            database["version"] = cursor.fetchone()[0]
    else:
        database["version"] = sqlite3.sqlite_version
    connection.close()
    return {
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": platform.node(), "cpu": cpu_model, "cores": os.cpu_count(), "platform": platform.platform(),
        "python": platform.python_version(), "django": django.get_version(), "sqlite": sqlite3.sqlite_version,
        "gunicorn": gunicorn.__version__, "database": database, "commit": commit,
        "server": {"workers": gunicorn_conf.workers, "worker_class": gunicorn_conf.worker_class,
                   "threads": getattr(gunicorn_conf, "threads", 1), "extra_args": args.gunicorn_arg},
        "samples": args.samples, "warmup": args.warmup, "quick": args.quick,
    }


def _deep_event_id(state: State, fraction: float) -> Any:
    """An event id `fraction` of the way through the main session's events (for the deep page)."""
    from tests.benchmarks.seed import SeedSkipped, model_get, nth_child_id

    try:
        model = model_get("ledger_app", "LedgerEvent")
        return nth_child_id(model=model, parent_model=model_get("sessions_app", "Session"),
                            parent_id=state.ids["session"], fraction=fraction)
    except SeedSkipped:
        return state.event_ids[int(len(state.event_ids) * fraction)] if state.event_ids else None
    finally:
        from django.db import connection

        connection.close()


def _deep_event_set(state: State) -> None:
    """The deep ledger page starts 90% of the way through the main session's events."""
    state.ids.pop("deep_event", None)
    deep = _deep_event_id(state, 0.9) if "session" in state.ids else None
    if deep is not None:
        state.ids["deep_event"] = deep


def _scale_seed(args: argparse.Namespace, client: BenchClient, state: State) -> dict[str, Any]:
    """Bulk-seed events and usage rows over 10 sessions each and messages over 20 runs (the measured
    ones included)."""
    from django.db import connection

    from tests.benchmarks.operations import API, api_create, run_body, session_body
    from tests.benchmarks.seed import SeedSkipped, bulk_seed, model_get

    seeded: dict[str, Any] = {}
    plans = (
        ("events", "ledger_app", "LedgerEvent", "sessions_app", "Session", args.scale_events,
         {"type": "x-bench"}, "session", lambda i: api_create(client, f"{API}/sessions/", session_body(f"s{i}"))),
        ("messages", "conversations_app", "Message", "conversations_app", "Run", args.scale_messages,
         {"role": "assistant"}, "run", lambda i: api_create(client, f"{API}/runs/", run_body(state.ids["chat"]))),
        # As many provider calls as messages, all today: the dashboard's and the cost view's worst case.
        ("usage rows", "ledger_app", "TokenUsage", "sessions_app", "Session", args.scale_messages,
         {"model": "bench-model"}, "session", lambda i: api_create(client, f"{API}/sessions/", session_body(f"u{i}"))),
    )
    for label, app, model_name, parent_app, parent_name, total, overrides, main_key, parent_create in plans:
        try:
            model = model_get(app, model_name)
            parent_model = model_get(parent_app, parent_name)
            if main_key not in state.ids:
                raise SeedSkipped(f"no {main_key} was created (its endpoint is missing)")
            parents = [state.ids[main_key]]
            parents += [parent_create(i)["id"] for i in range(19 if label == "messages" else 9)]
            result = bulk_seed(model=model, parent_model=parent_model, parent_ids=parents, total=total,
                               overrides=overrides)
            seeded[label] = {"table": result.table, "rows": result.rows, "seconds": round(result.seconds, 2),
                             "rows_per_second": round(result.rows_per_second), "parents": len(parents)}
            _log(f"bench: seeded {result.rows:,} rows into {result.table} in {result.seconds:.1f}s")
        except SeedSkipped as exc:
            seeded[label] = {"skipped": str(exc)}
            _log(f"bench: scale seed of {label} skipped: {exc}")
        except Exception as exc:  # a seeding failure must not lose the figures measured so far
            seeded[label] = {"skipped": f"{type(exc).__name__}: {exc}"}
            _log(f"bench: scale seed of {label} failed: {type(exc).__name__}: {exc}")
        finally:
            connection.close()
    return seeded


def _scale_measure(args: argparse.Namespace, client: BenchClient, admin: BenchClient,
                   state: State) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op in SCALE_OPERATIONS:
        out[op.key] = measure_operation(client, op, state, samples=args.samples, warmup=args.warmup,
                                        run_setup=False)
    samples = min(args.samples, ADMIN_SAMPLES)
    for op in ADMIN_SCALE_OPERATIONS:
        out[op.key] = measure_operation(admin, op, state, samples=samples, warmup=min(args.warmup, samples // 5),
                                        run_setup=False)
    return out


def bench(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    only = {key.strip() for key in args.only.split(",") if key.strip()}
    with BenchServer(workers=args.workers, threads=args.threads, gunicorn_args=args.gunicorn_arg,
                     keep=args.keep) as server:
        _django_setup(server)
        token = _token_create()
        results["meta"] = _meta(args, server)
        client = BenchClient(port=server.port, token=token)
        state = State()
        try:
            _log("bench: storage floor (raw sqlite3)")
            floors = storage_floor_measure(directory=server.temp_dir, samples=args.samples, warmup=args.warmup)
            results["storage_floor"] = {key: summary.as_dict() for key, summary in floors.items()}

            _log("bench: HTTP floor")
            results["http_floor"] = measure_operation(client, HTTP_FLOOR, state, samples=args.samples,
                                                      warmup=args.warmup)
            results["operations"] = {}
            for op in OPERATIONS:
                if only and op.key not in only:
                    continue
                _log(f"bench: {op.label}")
                results["operations"][op.key] = measure_operation(client, op, state, samples=args.samples,
                                                                  warmup=args.warmup)

            _log("bench: throughput")
            throughput: dict[str, Any] = {}
            try:
                setup_session(client, state, 0)
            except Exception as exc:
                throughput["skipped"] = f"no session: {exc}"
            if "session" in state.ids:
                throughput["bulk_append"] = measure_bulk_append(client, state, batches=args.bulk_batches)
                probe = client.request("POST", "/api/v1/events/", event_body(state.ids["session"], -1))
                if probe.status in (404, 405):
                    throughput["concurrent_append"] = {
                        "skipped": f"endpoint missing ({probe.status}): POST /api/v1/events/"}
                else:
                    throughput["concurrent_append"] = measure_concurrent(
                        port=server.port, token=token, method="POST", path="/api/v1/events/",
                        body_of=concurrent_event_body(state), clients=args.clients, total=args.samples)
            throughput["concurrent_http_floor"] = measure_concurrent(
                port=server.port, token=token, method="GET", path="/__floor__", body_of=None,
                clients=args.clients, total=args.samples, expect=(200,))
            results["throughput"] = throughput

            if not args.no_scale:
                results["scale"] = _scale(args, client, state)
        except Exception as exc:
            # Keep what was measured: the report prints it, marked as aborted, and the server still stops.
            results["aborted"] = f"{type(exc).__name__}: {exc}"
            _log(traceback.format_exc())
        finally:
            client.close()
            from django.db import connections

            connections.close_all()
            for conn in connections.all():
                if hasattr(conn, "close_pool"):  # PostgreSQL pool: let the database be dropped cleanly
                    conn.close_pool()
        results["server_log_tail"] = server.log_tail(10)
    return results


def _scale(args: argparse.Namespace, client: BenchClient, state: State) -> dict[str, Any]:
    admin = BenchClient(port=client.port, token=None, cookie=_admin_cookie())
    try:
        return _scale_phases(args, client, admin, state)
    finally:
        admin.close()


def _scale_phases(args: argparse.Namespace, client: BenchClient, admin: BenchClient,
                  state: State) -> dict[str, Any]:
    _log("bench: scale (small)")
    try:
        setup_run(client, state, 0)
    except Exception as exc:
        _log(f"bench: no chat/run for the scale phase: {exc}")
    _deep_event_set(state)
    small = _scale_measure(args, client, admin, state)
    seeded = _scale_seed(args, client, state)
    _deep_event_set(state)
    _log("bench: scale (large)")
    large = _scale_measure(args, client, admin, state)
    return {"seeded": seeded, "small": small, "large": large}


def _terminate(signum: int, frame: object) -> None:
    # SIGTERM unwinds like Ctrl-C, so the `with BenchServer` block still stops gunicorn and drops the database.
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = args_parse(argv)
    signal.signal(signal.SIGTERM, _terminate)
    results_dir = data_dir() / "bench"  # the user's data dir, resolved before we point at the throw-away one
    if args.scale_out:
        from tests.benchmarks.scale_out import scale_out_main

        return scale_out_main(args, results_dir)
    if args.fast_paths:
        from tests.benchmarks.fast_paths_ab import fast_paths_main

        return fast_paths_main(args, results_dir)
    results = bench(args)
    results["ratios"] = ratios_derive(results)
    report_print(results, out=sys.stdout)
    written = report_write(results, directory=results_dir, extra=args.json)
    _log("bench: results written to " + ", ".join(str(path) for path in written))
    if args.import_events:
        from tests.benchmarks.devteam_import import import_figure

        print(f"\nimport_seed devteam, {args.import_events:,} events:")
        rate = import_figure(args.import_events)
        print(f"import_seed devteam: {rate:,.0f} events/s")
    return 1 if "aborted" in results else 0


if __name__ == "__main__":
    raise SystemExit(main())
