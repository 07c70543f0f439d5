"""Latency summaries: nearest-rank percentiles over nanosecond samples, reported in milliseconds."""

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

NS_PER_MS = 1_000_000


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile: the smallest sample with at least p% of the samples at or below it.

    Always a value that was actually measured (no interpolation), so p100 is the maximum and a
    single slow request shows up in p99 only when it really is in the slowest 1%.
    """
    if not sorted_values:
        raise ValueError("percentile of no samples")
    if not 0 < p <= 100:
        raise ValueError(f"percentile {p} is outside (0, 100]")
    rank = math.ceil(p / 100 * len(sorted_values))
    return sorted_values[rank - 1]


@dataclass(frozen=True)
class Summary:
    n: int
    errors: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float

    def as_dict(self) -> dict[str, Any]:
        return {key: round(value, 4) if isinstance(value, float) else value for key, value in asdict(self).items()}


def summarize(samples_ns: Sequence[int], *, errors: int = 0) -> Summary:
    """Summarise latencies given in nanoseconds (from time.perf_counter_ns) as milliseconds."""
    values = sorted(samples_ns)
    return Summary(
        n=len(values),
        errors=errors,
        p50_ms=percentile(values, 50) / NS_PER_MS,
        p90_ms=percentile(values, 90) / NS_PER_MS,
        p99_ms=percentile(values, 99) / NS_PER_MS,
        max_ms=values[-1] / NS_PER_MS,
        mean_ms=sum(values) / len(values) / NS_PER_MS,
    )


def ratio(value: float | None, floor: float | None) -> float | None:
    """value / floor, or None when either side was not measured (or the floor is zero)."""
    if value is None or not floor:
        return None
    return value / floor
