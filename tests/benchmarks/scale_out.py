"""`make bench BENCH_ARGS=--scale-out`: many agents, one database, one or several app hosts.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/ralph make bench BENCH_ARGS=--scale-out
    make bench BENCH_ARGS="--scale-out --hosts 3 --agents 48 --seconds 60"

With PostgreSQL (DATABASE_URL) it starts `--hosts` app servers (gunicorn, as `make run` does, each
with a data dir of its own: separate machines in miniature) on one throw-away database, then runs
the same loop twice: every agent on the first host, then the agents spread over all hosts. A third
phase runs the mix on SQLite with one host (a SQLite file has one host by nature), for comparison;
without DATABASE_URL only that phase runs.

Each phase prints loop steps per second, p50/p99/max per call, errors (must be 0), where the CPU
went (load client, app hosts, PostgreSQL) and the invariants, checked against the database:
every claim handed to exactly one agent, every signal delivered once, ledger rows = appends
acknowledged, session totals = sum of their usage rows = what the client was acknowledged, and
the ledger chain verified.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.benchmarks.client import BenchClient
from tests.benchmarks.scale_out_load import API, Actor, Agent, Orchestrator, Poller, Recorder
from tests.benchmarks.server import REPO_DIR, BenchServer

AGENTS_PER_SESSION = 8
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _cpu_seconds_by_role(server_pids: set[int]) -> dict[str, float]:
    """CPU seconds used so far by the load client (this process), the app hosts and PostgreSQL."""
    used = {"client": 0.0, "app_hosts": 0.0, "postgresql": 0.0}
    times = os.times()
    used["client"] = times.user + times.system
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            command = (proc / "comm").read_text().strip()
        except OSError:  # the process ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        ppid, ticks = int(fields[1]), int(fields[11]) + int(fields[12])
        if int(proc.name) in server_pids or ppid in server_pids:
            used["app_hosts"] += ticks / _CLK_TCK
        elif command == "postgres":
            used["postgresql"] += ticks / _CLK_TCK
    return used


def _check(server: BenchServer, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "tests.benchmarks.scale_out_check", *args], cwd=REPO_DIR,
                            env=server.env(), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"scale_out_check {args[0]} failed:\n{result.stderr[-2000:]}")
    return result.stdout.strip().splitlines()[-1]


def _sessions_create(server: BenchServer, token: str, count: int, label: str) -> list[str]:
    client = BenchClient(port=server.port, token=token)
    try:
        ids = []
        for n in range(count):
            resp = client.request("POST", f"{API}/sessions/", {"user_request": f"scale-out {label} {n}",
                                                             "project_path": "/bench-scale", "max_concurrency": 64})
            if resp.status != 201:
                raise RuntimeError(f"could not create a session: {resp.status} {resp.excerpt()}")
            ids.append(resp.json()["id"])
        return ids
    finally:
        client.close()


def _phase(label: str, hosts: list[BenchServer], token: str, *, agents: int, seconds: float) -> dict[str, Any]:
    sessions = _sessions_create(hosts[0], token, max(1, -(-agents // AGENTS_PER_SESSION)), label)
    recorder = Recorder()
    deadline = float("inf")  # set once the first waves are planned
    pids = {server.pid for server in hosts if server.pid is not None}

    def port(n: int) -> int:
        return hosts[n % len(hosts)].port

    orchestrators = [Orchestrator(session_id=s, agents=AGENTS_PER_SESSION, port=port(n), token=token,
                                  deadline=deadline, recorder=recorder) for n, s in enumerate(sessions)]
    for orchestrator in orchestrators:  # the first wave exists before any agent asks for work
        orchestrator.plan_wave()
    pollers = [Poller(session_id=s, port=port(n + 1), token=token, deadline=deadline, recorder=recorder)
               for n, s in enumerate(sessions)]
    agent_threads = [Agent(session_id=sessions[n % len(sessions)], agent=f"{label}-agent-{n}", port=port(n),
                           token=token, deadline=deadline, recorder=recorder) for n in range(agents)]
    actors: list[Actor] = [*orchestrators, *pollers, *agent_threads]
    cpu_before, started = _cpu_seconds_by_role(pids), time.monotonic()
    for actor in actors:
        actor.deadline = started + seconds
        actor.start()
    for actor in actors:
        actor.join()
    elapsed = time.monotonic() - started
    cpu_after = _cpu_seconds_by_role(pids)
    for poller in pollers:
        poller.deadline = float("inf")
        poller.drain()
    crashed = [f"{actor.name}: {actor.failure!r}" for actor in actors if actor.failure is not None]
    facts = json.loads(_check(hosts[0], "facts", *sessions))
    return {
        "hosts": len(hosts), "agents": agents, "sessions": len(sessions), "seconds": round(elapsed, 1),
        "loops": recorder.loops, "loops_per_second": round(recorder.loops / elapsed, 1),
        "requests_per_second": round(sum(len(t) for t in recorder.timings_ns.values()) / elapsed, 1),
        "errors": sum(recorder.errors.values()) + len(crashed), "error_examples": recorder.error_examples + crashed,
        "idle_claims": dict(recorder.idle_claims), "tasks_created": recorder.tasks_created,
        "cpu_seconds": {role: round(cpu_after[role] - cpu_before[role], 1) for role in cpu_after},
        "latency": recorder.latency_table(),
        "invariants": _invariants(recorder, facts),
    }


def _usage(figures: dict[str, str]) -> list[Any]:
    return [int(figures["tokens_input"]), int(figures["tokens_output"]), Decimal(figures["cost_usd"])]


def _invariants(recorder: Recorder, facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    claims = Counter((task, claim) for task, claim, _agent in recorder.claims)
    agents_per_claim = Counter((task, claim, agent) for task, claim, agent in recorder.claims)
    completed = Counter(recorder.completed)
    delivered = Counter(recorder.signals_delivered)
    sent = set(recorder.signals_sent)
    totals_match_rows = all(_usage(s["totals"]) == _usage(s["usage_rows"]) for s in facts["sessions"].values())
    acknowledged_match = all(_usage(s["totals"]) == recorder.usage_acknowledged.get(session_id, [0, 0, Decimal(0)])
                             for session_id, s in facts["sessions"].items())
    verify = facts["ledger_verify"]
    return {
        "one agent per claim": {
            "ok": all(n == 1 for n in claims.values()) and len(agents_per_claim) == len(claims),
            "claims": len(recorder.claims), "distinct": len(claims)},
        "each task completed once": {"ok": all(n == 1 for n in completed.values()), "completed": len(completed)},
        "every signal delivered once": {
            "ok": set(delivered) == sent and all(n == 1 for n in delivered.values()),
            "sent": len(sent), "delivered": sum(delivered.values()),
            "left_unprocessed": sum(s["signals_unprocessed"] for s in facts["sessions"].values())},
        "ledger rows = appends acknowledged": {
            "ok": facts["x_scale_events"] == recorder.events_acknowledged,
            "rows": facts["x_scale_events"], "acknowledged": recorder.events_acknowledged},
        "session totals = sum of usage rows = acknowledged": {
            "ok": totals_match_rows and acknowledged_match,
            "sessions": {k: v["totals"] for k, v in facts["sessions"].items()}},
        "ledger chain valid": {
            "ok": verify.get("exit_code") == 0 if verify.get("available") else None,
            **({"output": verify.get("output", "")} if verify.get("exit_code") else {})},
    }


@contextmanager
def _hosts(count: int, *, database_url: str | None, keep: bool) -> Iterator[list[BenchServer]]:
    with ExitStack() as stack:
        first = stack.enter_context(BenchServer(database_url=database_url, keep=keep))
        hosts = [first]
        for _ in range(count - 1):
            hosts.append(stack.enter_context(BenchServer(shared_database=first.database, keep=keep)))
        yield hosts


def scale_out(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "cores": os.cpu_count(), "phases": {}}
    postgres_url = os.environ.get("DATABASE_URL", "")
    if postgres_url.startswith("postgres"):
        with _hosts(args.hosts, database_url=postgres_url, keep=args.keep) as hosts:
            token = _check(hosts[0], "token")
            _log(f"bench: scale-out on PostgreSQL, 1 host, {args.agents} agents, {args.seconds:g}s")
            results["phases"]["postgresql, 1 host"] = _phase("pg1", hosts[:1], token, agents=args.agents,
                                                             seconds=args.seconds)
            _log(f"bench: scale-out on PostgreSQL, {args.hosts} hosts, {args.agents} agents, {args.seconds:g}s")
            results["phases"][f"postgresql, {args.hosts} hosts"] = _phase(
                f"pg{args.hosts}", hosts, token, agents=args.agents, seconds=args.seconds)
    with _hosts(1, database_url=None, keep=args.keep) as hosts:
        token = _check(hosts[0], "token")
        _log(f"bench: scale-out on SQLite, 1 host, {args.agents} agents, {args.seconds:g}s")
        results["phases"]["sqlite, 1 host"] = _phase("sqlite", hosts, token, agents=args.agents,
                                                     seconds=args.seconds)
    return results


def report_print(results: dict[str, Any]) -> None:
    print(f"\nScale-out benchmark ({results['cores']} cores, started {results['started_at']})")
    for label, phase in results["phases"].items():
        print(f"\n{label}: {phase['agents']} agents over {phase['sessions']} sessions, {phase['seconds']}s: "
              f"{phase['loops_per_second']} loop steps/s, {phase['requests_per_second']} requests/s, "
              f"{phase['errors']} errors")
        cpu = phase["cpu_seconds"]
        print(f"  CPU seconds: load client {cpu['client']}, app hosts {cpu['app_hosts']}, "
              f"PostgreSQL {cpu['postgresql']} (of {phase['seconds'] * (results['cores'] or 1):.0f} available)")
        print(f"  {'call':<16} {'n':>7} {'p50':>8} {'p99':>8} {'max':>8} {'errors':>7}")
        for call, lat in phase["latency"].items():
            print(f"  {call:<16} {lat['n']:>7} {lat['p50_ms']:>8.2f} {lat['p99_ms']:>8.2f} {lat['max_ms']:>8.1f} "
                  f"{lat['errors']:>7}")
        for name, check in phase["invariants"].items():
            verdict = {True: "ok", False: "FAILED", None: "not available"}[check["ok"]]
            detail = ", ".join(f"{k} {v}" for k, v in check.items() if k not in ("ok", "sessions"))
            print(f"  {verdict:<13} {name}" + (f" ({detail})" if detail else ""))
        for example in phase["error_examples"]:
            print(f"  error: {example}")


def scale_out_main(args: argparse.Namespace, results_dir: Path) -> int:
    results = scale_out(args)
    report_print(results)
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"scale-out-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(results, indent=2, default=str))
    paths = [path]
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
        paths.append(args.json)
    _log("bench: results written to " + ", ".join(map(str, paths)))
    failed = any(phase["errors"] or any(c["ok"] is False for c in phase["invariants"].values())
                 for phase in results["phases"].values())
    return 1 if failed else 0
