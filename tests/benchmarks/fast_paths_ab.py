"""`make bench BENCH_ARGS=--fast-paths`: each fast path (`ralphsite.core.db.fast_paths`) on and off in one run.

One server with every fast path on ("on") and, one after another, a server with one piece off
(`RALPH_FAST_PATHS_OFF=<piece>`), then one with all of them off (`RALPH_FAST_PATHS=0`), each on the
same throw-away database as "on" (`--only` names the pieces to measure, `all` the last). For every
operation a piece is on the path of, the two servers are sampled in alternating rounds of `ROUND`
requests (which one goes first alternates too), so load from anything else on the machine falls on
both sides alike. Prints p50 and p99 of each side and the off/on ratios, with the load average around
each piece; writes the JSON next to `make bench`'s.
"""

import argparse
import itertools
import math
import os
import sys
from pathlib import Path
from typing import Any

from ralphsite.core.db.fast_paths import PIECES
from tests.benchmarks.client import BenchClient
from tests.benchmarks.operations import OPERATIONS, Operation, State
from tests.benchmarks.report import results_json_write
from tests.benchmarks.server import BenchServer
from tests.benchmarks.stats import summarize

ROUND = 10  # requests per side before the other side's turn
# The operations each piece is on the path of (every API call pays the token lookup). A bulk append
# (1,000 events in one request) was measured for the precompiled inserts, deleted on 2026-11-28; no
# remaining piece serves it (its answer is a status per item, not a serializer's representation).
PIECE_OPERATIONS: dict[str, tuple[str, ...]] = {
    "lookups": ("get_chat", "insert_message"),
    "serializers": ("get_chat", "list_100_messages", "insert_chat"),
    "token": ("get_chat",),
}
ALL_OFF = "all"
_OPERATIONS = {op.key: op for op in OPERATIONS}


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def measure_ab(clients: dict[str, BenchClient], op: Operation, state: State, *, samples: int,
               warmup: int) -> dict[str, Any]:
    """`samples` timed requests of `op` on each side, in alternating rounds, after `warmup` each."""
    numbers = itertools.count()  # every request its own number: inserts never repeat a body
    timings: dict[str, list[int]] = {side: [] for side in clients}
    errors = dict.fromkeys(clients, 0)
    error_examples: dict[str, str] = {}

    def send(side: str) -> Any:
        i = next(numbers)
        resp = clients[side].request(op.method, op.path_for(state, i), op.body(state, i) if op.body else None)
        if resp.status in op.expect and op.collect is not None:
            op.collect(state, resp)
        return resp

    for side in clients:
        for _ in range(warmup):
            send(side)
    sides = list(clients)
    for turn in range(math.ceil(samples / ROUND) * 2):
        side = sides[(turn + turn // 2) % 2]  # on, off, off, on, on, off, …: neither side always first
        for _ in range(min(ROUND, samples - len(timings[side]))):
            resp = send(side)
            timings[side].append(resp.elapsed_ns)
            if resp.status not in op.expect:
                errors[side] += 1
                error_examples.setdefault(side, f"{resp.status}: {resp.excerpt(200)}")
    result: dict[str, Any] = {side: summarize(values, errors=errors[side]).as_dict()
                              for side, values in timings.items()}
    if error_examples:
        result["error_examples"] = error_examples
    for percentile in ("p50_ms", "p99_ms"):
        result[f"{percentile[:3]}_off_on"] = round(result["off"][percentile] / result["on"][percentile], 3)
    return result


def _setup(client: BenchClient, state: State, keys: set[str], count: int) -> None:
    for key in keys:
        op = _OPERATIONS[key]
        if op.setup is not None:
            op.setup(client, state, count)


def fast_paths_ab(args: argparse.Namespace) -> dict[str, Any]:
    from tests.benchmarks.run import _django_setup, _meta, _token_create

    pieces = [piece for piece in (*PIECES, ALL_OFF) if not args.only or piece in args.only.split(",")]
    results: dict[str, Any] = {"pieces": {}}
    with BenchServer(workers=args.workers, threads=args.threads, keep=args.keep) as on:
        _django_setup(on)
        token = _token_create()
        results["meta"] = _meta(args, on)
        state = State()
        on_client = BenchClient(port=on.port, token=token)
        try:
            _setup(on_client, state, set(_OPERATIONS) & {k for keys in PIECE_OPERATIONS.values() for k in keys},
                   2 * (args.samples + args.warmup))
            for piece in pieces:
                env = {"RALPH_FAST_PATHS": "0"} if piece == ALL_OFF else {"RALPH_FAST_PATHS_OFF": piece}
                keys = sorted({k for keys in PIECE_OPERATIONS.values() for k in keys}) if piece == ALL_OFF \
                    else PIECE_OPERATIONS[piece]
                with BenchServer(workers=args.workers, threads=args.threads, keep=args.keep,
                                 shared_database=on.database, env_extra=env) as off:
                    off_client = BenchClient(port=off.port, token=token)
                    try:
                        load_before = _load()
                        measured = {}
                        for key in keys:
                            _log(f"bench: {piece} off vs on: {key}")
                            measured[key] = measure_ab({"on": on_client, "off": off_client}, _OPERATIONS[key],
                                                       state, samples=args.samples, warmup=args.warmup)
                        results["pieces"][piece] = {"operations": measured, "load_before": load_before,
                                                    "load_after": _load()}
                    finally:
                        off_client.close()
        finally:
            on_client.close()
            from django.db import connections

            connections.close_all()
            for conn in connections.all():
                if hasattr(conn, "close_pool"):
                    conn.close_pool()
    return results


def report_print(results: dict[str, Any]) -> None:
    meta = results["meta"]
    print(f"fast paths on vs off, {meta['database']['vendor']}, commit {meta['commit']}, {meta['started_at']}, "
          f"{meta['cores']} cores ({meta['cpu']}), {meta['samples']} samples a side, rounds of {ROUND}")
    print(f"{'piece off':<12} {'operation':<20} {'p50 on':>8} {'p50 off':>8} {'off/on':>7} "
          f"{'p99 on':>8} {'p99 off':>8} {'off/on':>7}  load")
    for piece, measured in results["pieces"].items():
        load = f"{measured['load_before']}→{measured['load_after']}"
        for key, row in measured["operations"].items():
            print(f"{piece:<12} {key:<20} {row['on']['p50_ms']:>8.3f} {row['off']['p50_ms']:>8.3f} "
                  f"{row['p50_off_on']:>7.2f} {row['on']['p99_ms']:>8.3f} {row['off']['p99_ms']:>8.3f} "
                  f"{row['p99_off_on']:>7.2f}  {load}")


def fast_paths_main(args: argparse.Namespace, results_dir: Path) -> int:
    results = fast_paths_ab(args)
    report_print(results)
    paths = results_json_write(results, directory=results_dir, name="fast-paths", extra=args.json)
    _log("bench: results written to " + ", ".join(map(str, paths)))
    errors = sum(row[side]["errors"] for measured in results["pieces"].values()
                 for row in measured["operations"].values() for side in ("on", "off"))
    return 1 if errors else 0
