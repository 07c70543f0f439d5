"""The results as a readable table (stdout) and as JSON (data dir, and --json)."""

import json
import shutil
import time
from pathlib import Path
from typing import Any, TextIO

from ralphsite.core.paths import private_dir_create
from tests.benchmarks.operations import ADMIN_SCALE_OPERATIONS, OPERATIONS, SCALE_OPERATIONS
from tests.benchmarks.stats import ratio

_LABELS = {op.key: op.label for op in (*OPERATIONS, *SCALE_OPERATIONS, *ADMIN_SCALE_OPERATIONS)}
_SEED_TARGETS = {op.key: op.seed_target_ms for op in OPERATIONS if op.seed_target_ms}


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


def _latency_row(label: str, result: dict[str, Any], *, http_p50: float | None, storage_p50: float | None,
                 target: tuple[float, float] | None) -> str:
    if "skipped" in result:
        return f"  {label:<26} {'skipped: ' + result['skipped']}"
    lat = result["latency"]
    verdict = ""
    if target is not None:
        verdict = f"{target[0]:g}/{target[1]:g} " + ("ok" if lat["p99_ms"] <= target[0] else "MISS")
    errors = f"{lat['errors']} err" if lat["errors"] else ""
    return (f"  {label:<26} {lat['n']:>6} {_ms(lat['p50_ms']):>7} {_ms(lat['p90_ms']):>7} {_ms(lat['p99_ms']):>7} "
            f"{_ms(lat['max_ms']):>7} {_x(ratio(lat['p50_ms'], http_p50)):>7} "
            f"{_x(ratio(lat['p50_ms'], storage_p50)):>8}  {verdict:<10} {errors}")


def _header(title: str) -> str:
    return (f"\n{title}\n  {'operation':<26} {'n':>6} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7} "
            f"{'xHTTP':>7} {'xSQLite':>8}  {'seed p99':<10}")


def report_lines(results: dict[str, Any]) -> list[str]:
    meta = results.get("meta", {})
    db = meta.get("database", {})
    server = meta.get("server", {})
    extra = " ".join(server.get("extra_args") or [])
    lines = [
        f"Ralph Site benchmark — {meta.get('started_at', '')} — commit {meta.get('commit', '?')}",
        f"  machine {meta.get('machine')} ({meta.get('cpu') or 'cpu ?'}), {meta.get('cores')} cores, "
        f"{meta.get('platform')}",
        f"  Python {meta.get('python')}, Django {meta.get('django')}, SQLite {meta.get('sqlite')}, "
        f"gunicorn {meta.get('gunicorn')} ({server.get('workers')} x {server.get('worker_class')}, "
        f"{server.get('threads')} threads{', ' + extra if extra else ''})",
        f"  database {db.get('vendor')} {db.get('version')}; {meta.get('samples')} samples after "
        f"{meta.get('warmup')} warm-up per operation; times in ms; xHTTP = p50 / HTTP-floor p50, "
        f"xSQLite = p50 / raw-sqlite3 p50 of the same storage work",
    ]
    storage = results.get("storage_floor", {})
    http = results.get("http_floor", {})
    http_p50 = http.get("latency", {}).get("p50_ms")

    lines.append(_header("Floors"))
    lines.append(_latency_row("HTTP floor (/__floor__)", http, http_p50=http_p50, storage_p50=None, target=None))
    for key, lat in storage.items():
        lines.append(_latency_row(f"sqlite3 {key}", {"latency": lat}, http_p50=None, storage_p50=None,
                                  target=None))

    lines.append(_header("API operations (seed p99 column: seed 002 target/maximum, ok when p99 <= target)"))
    floor_of = {op.key: op.floor for op in OPERATIONS}
    for key, result in results.get("operations", {}).items():
        storage_p50 = storage.get(floor_of.get(key) or "", {}).get("p50_ms")
        lines.append(_latency_row(_LABELS.get(key, key), result, http_p50=http_p50, storage_p50=storage_p50,
                                  target=_SEED_TARGETS.get(key)))

    throughput = results.get("throughput", {})
    if throughput:
        lines.append("\nThroughput")
        if "skipped" in throughput:
            lines.append(f"  skipped: {throughput['skipped']}")
        bulk = throughput.get("bulk_append", {})
        batch_floor = storage.get("batch_insert_1000", {}).get("mean_ms")
        floor_eps = 1000 / (batch_floor / 1000) if batch_floor else None
        if "skipped" in bulk:
            lines.append(f"  ledger bulk append (1,000/request)   skipped: {bulk['skipped']}")
        elif bulk:
            lat = bulk["latency"]
            share = ratio(bulk["events_per_second"], floor_eps)
            lines.append(f"  ledger bulk append (1,000/request)   {bulk['events_per_second']:>12,.0f} events/s  "
                         f"(p50 {_ms(lat['p50_ms'])} ms/batch, {lat['errors']} errors; raw sqlite3 batched "
                         f"{floor_eps or 0:,.0f} events/s, API = {share or 0:.1%} of it)")
        conc = throughput.get("concurrent_append", {})
        floor_conc = throughput.get("concurrent_http_floor", {})
        if "skipped" in conc:
            lines.append(f"  {conc.get('clients', 4)} concurrent single appends          skipped: {conc['skipped']}")
        elif conc:
            share = ratio(conc["requests_per_second"], floor_conc.get("requests_per_second"))
            lines.append(f"  {conc['clients']} concurrent single appends       {conc['requests_per_second']:>12,.0f} "
                         f"requests/s ({conc['errors']} errors, p50 {_ms(conc['latency']['p50_ms'])} ms, "
                         f"p99 {_ms(conc['latency']['p99_ms'])} ms; {share or 0:.1%} of the HTTP floor)")
        if floor_conc and "skipped" not in floor_conc:
            lines.append(f"  {floor_conc['clients']} concurrent HTTP floor requests   "
                         f"{floor_conc['requests_per_second']:>12,.0f} requests/s ({floor_conc['errors']} errors)")

    scale = results.get("scale")
    if scale:
        seeded = scale.get("seeded", {})
        parts = []
        for label, info in seeded.items():
            if "skipped" in info:
                parts.append(f"{label}: skipped ({info['skipped']})")
            else:
                parts.append(f"{info['rows']:,} {label} in {info['seconds']}s ({info['rows_per_second']:,}/s)")
        lines.append("\nScale: " + "; ".join(parts))
        lines.append(f"  {'operation':<26} {'small p50':>10} {'large p50':>10} {'ratio':>7} {'small p99':>10} "
                     f"{'large p99':>10} {'ratio':>7}")
        for key, small in scale.get("small", {}).items():
            large = scale.get("large", {}).get(key, {})
            label = _LABELS.get(key, key)
            if "skipped" in small or "skipped" in large:
                lines.append(f"  {label:<26} skipped: {small.get('skipped') or large.get('skipped')}")
                continue
            s, g = small["latency"], large["latency"]
            lines.append(f"  {label:<26} {_ms(s['p50_ms']):>10} {_ms(g['p50_ms']):>10} "
                         f"{_x(ratio(g['p50_ms'], s['p50_ms'])):>7} {_ms(s['p99_ms']):>10} {_ms(g['p99_ms']):>10} "
                         f"{_x(ratio(g['p99_ms'], s['p99_ms'])):>7}"
                         + (f"  {g['errors']} err" if g["errors"] else ""))
    if "aborted" in results:
        lines.append(f"\nABORTED: {results['aborted']} (figures above are what was measured before)")
    errors = [(key, r["error_examples"]) for key, r in results.get("operations", {}).items() if "error_examples" in r]
    if errors:
        lines.append("\nErrors (first examples)")
        for key, examples in errors:
            for example in examples:
                lines.append(f"  {key}: {example}")
    return lines


def ratios_derive(results: dict[str, Any]) -> dict[str, Any]:
    """Every latency as a ratio to the HTTP floor and to raw sqlite3, and the scale large/small ratios."""
    storage = results.get("storage_floor", {})
    http = results.get("http_floor", {}).get("latency", {})
    floor_of = {op.key: op.floor for op in OPERATIONS}
    out: dict[str, Any] = {"operations": {}, "scale": {}}
    for key, result in results.get("operations", {}).items():
        if "latency" not in result:
            continue
        lat = result["latency"]
        floor = storage.get(floor_of.get(key) or "", {})
        out["operations"][key] = {
            f"{p}_vs_{name}": ratio(lat[f"{p}_ms"], ref.get(f"{p}_ms"))
            for p in ("p50", "p99") for name, ref in (("http_floor", http), ("sqlite", floor))
        }
    scale = results.get("scale") or {}
    for key, small in scale.get("small", {}).items():
        large = scale.get("large", {}).get(key, {})
        if "latency" in small and "latency" in large:
            small_lat, large_lat = small["latency"], large["latency"]
            out["scale"][key] = {f"{p}_large_over_small": ratio(large_lat[f"{p}_ms"], small_lat[f"{p}_ms"])
                                 for p in ("p50", "p99")}
    return out


def report_print(results: dict[str, Any], *, out: TextIO) -> None:
    out.write("\n".join(report_lines(results)) + "\n")
    out.flush()


def report_write(results: dict[str, Any], *, directory: Path, extra: Path | None) -> list[Path]:
    private_dir_create(directory)  # bench/ in the data dir, which may not exist yet (0700 like the rest)
    vendor = results.get("meta", {}).get("database", {}).get("vendor", "db")
    path = directory / f"bench-{time.strftime('%Y%m%dT%H%M%S')}-{vendor}.json"
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    latest = directory / f"latest-{vendor}.json"
    shutil.copyfile(path, latest)
    written = [path, latest]
    if extra is not None:
        extra.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, extra)
        written.append(extra)
    return written


def results_json_write(results: dict[str, Any], *, directory: Path, name: str, extra: Path | None) -> list[Path]:
    """The results as `<directory>/<name>-<time>.json` (and to `extra`); the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"]
    if extra is not None:
        paths.append(extra)
    for path in paths:
        path.write_text(json.dumps(results, indent=2, default=str))
    return paths
