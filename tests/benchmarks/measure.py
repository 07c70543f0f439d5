"""The measuring loops: latency per operation, bulk and concurrent throughput. Every loop is bounded."""

import threading
import time
from typing import Any

from tests.benchmarks.client import BenchClient
from tests.benchmarks.operations import (
    BULK_APPEND_PATH,
    BULK_BATCH,
    EndpointMissing,
    Operation,
    SetupFailed,
    State,
    bulk_events_body,
    event_body,
)
from tests.benchmarks.stats import summarize

MAX_ERROR_EXAMPLES = 3


def _skipped(reason: str) -> dict[str, Any]:
    return {"skipped": reason}


def measure_operation(client: BenchClient, op: Operation, state: State, *, samples: int, warmup: int,
                      run_setup: bool = True) -> dict[str, Any]:
    """Warm up, then time `samples` requests of `op`; a missing endpoint is a skip, not a crash."""
    try:
        if op.setup is not None and run_setup:
            op.setup(client, state, samples + warmup)
        path_of = op.path_for
        # The first request doubles as the probe for a missing route.
        first = client.request(op.method, path_of(state, 0), op.body(state, 0) if op.body else None)
    except EndpointMissing as exc:
        return _skipped(str(exc))
    except SetupFailed as exc:
        return _skipped(f"setup failed: {exc}")
    except KeyError as exc:
        return _skipped(f"needs a {exc.args[0]} id, which an earlier step did not create")
    except (OSError, ValueError) as exc:  # connection trouble or an unexpected response body
        return _skipped(f"error: {type(exc).__name__}: {exc}")
    if first.status in (404, 405):
        return _skipped(f"endpoint missing ({first.status}): {op.method} {path_of(state, 0).split('?')[0]}")

    errors: list[str] = []
    error_count = 0
    timings: list[int] = []
    connects_before = client.connects
    collect_error = ""
    for i in range(warmup + samples):
        resp = first if i == 0 else client.request(op.method, path_of(state, i),
                                                   op.body(state, i) if op.body else None)
        ok = resp.status in op.expect
        if ok and op.collect is not None:
            try:
                op.collect(state, resp)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                # A response shape the collector did not expect: later steps that need these ids skip.
                collect_error = collect_error or f"{type(exc).__name__}: {exc} in {resp.excerpt(200)}"
        if i < warmup:
            continue
        timings.append(resp.elapsed_ns)
        if not ok:
            error_count += 1
            if len(errors) < MAX_ERROR_EXAMPLES:
                errors.append(f"{resp.status}: {resp.excerpt(200)}")
    result: dict[str, Any] = {"latency": summarize(timings, errors=error_count).as_dict(),
                              "reconnects": client.connects - connects_before, "method": op.method,
                              "path": op.path if isinstance(op.path, str) else op.path.__name__}
    if errors:
        result["error_examples"] = errors
    if collect_error:
        result["collect_error"] = collect_error
    return result


def measure_bulk_append(client: BenchClient, state: State, *, batches: int) -> dict[str, Any]:
    """POST lists of 1,000 events; events/s over the time spent in those requests."""
    if "session" not in state.ids:
        return _skipped("no session")
    timings: list[int] = []
    errors: list[str] = []
    error_count = 0
    for batch in range(batches + 1):  # batch 0 is the warm-up
        resp = client.request("POST", BULK_APPEND_PATH, bulk_events_body(state, batch))
        if batch == 0 and resp.status in (404, 405):
            return _skipped(f"endpoint missing ({resp.status}): POST {BULK_APPEND_PATH}")
        if batch == 0:
            continue
        timings.append(resp.elapsed_ns)
        if resp.status not in (200, 201):
            error_count += 1
            if len(errors) < MAX_ERROR_EXAMPLES:
                errors.append(f"{resp.status}: {resp.excerpt(200)}")
    seconds = sum(timings) / 1e9
    result: dict[str, Any] = {"batch_size": BULK_BATCH, "batches": batches,
                              "events_per_second": round(BULK_BATCH * batches / seconds, 1),
                              "latency": summarize(timings, errors=error_count).as_dict()}
    if errors:
        result["error_examples"] = errors
    return result


def measure_concurrent(*, port: int, token: str, method: str, path: str, body_of: Any, clients: int,
                       total: int, expect: tuple[int, ...] = (200, 201)) -> dict[str, Any]:
    """`clients` threads, each on its own connection, send `total` requests together; requests/s."""
    per_client = max(total // clients, 1)
    barrier = threading.Barrier(clients + 1)
    timings: list[list[int]] = [[] for _ in range(clients)]
    failures = [0] * clients
    examples: list[str] = []

    def worker(n: int) -> None:
        client = BenchClient(port=port, token=token)
        try:
            client.request("GET", "/__floor__")  # connect before the clock starts
            barrier.wait(timeout=60)
            for k in range(per_client):
                try:
                    resp = client.request(method, path, body_of(n * per_client + k) if body_of else None)
                except OSError as exc:
                    failures[n] += 1
                    if len(examples) < MAX_ERROR_EXAMPLES:
                        examples.append(f"{type(exc).__name__}: {exc}")
                    continue
                timings[n].append(resp.elapsed_ns)
                if resp.status not in expect:
                    failures[n] += 1
                    if len(examples) < MAX_ERROR_EXAMPLES:
                        examples.append(f"{resp.status}: {resp.excerpt(200)}")
        finally:
            client.close()

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait(timeout=60)
    started = time.perf_counter()
    for thread in threads:
        thread.join(timeout=600)
    wall = time.perf_counter() - started
    flat = [t for per in timings for t in per]
    errors = sum(failures)
    if not flat:
        return _skipped(f"no request completed: {examples[:1]}")
    result: dict[str, Any] = {"clients": clients, "requests": clients * per_client, "errors": errors,
                              "requests_per_second": round(len(flat) / wall, 1),
                              "latency": summarize(flat, errors=errors).as_dict()}
    if examples:
        result["error_examples"] = examples
    return result


def concurrent_event_body(state: State) -> Any:
    return lambda i: event_body(state.ids["session"], 1_000_000 + i)
