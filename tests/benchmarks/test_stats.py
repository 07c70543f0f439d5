import pytest

from tests.benchmarks.stats import percentile, ratio, summarize


def test_it_takes_the_nearest_rank_percentile():
    values = list(range(1, 101))  # 1..100
    assert percentile(values, 50) == 50
    assert percentile(values, 90) == 90
    assert percentile(values, 99) == 99
    assert percentile(values, 100) == 100
    assert percentile(values, 0.5) == 1


def test_it_never_interpolates_between_samples():
    values = [10, 20, 30, 40]
    assert percentile(values, 50) == 20
    assert percentile(values, 51) == 30
    assert percentile(values, 99) == 40
    assert percentile([7], 50) == 7


def test_it_refuses_no_samples_and_out_of_range_percentiles():
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1], 0)
    with pytest.raises(ValueError):
        percentile([1], 101)


def test_it_summarises_nanoseconds_as_milliseconds_in_any_order():
    samples_ns = [ms * 1_000_000 for ms in range(1000, 0, -1)]  # 1000 ms .. 1 ms, reversed
    summary = summarize(samples_ns, errors=2)
    assert summary.n == 1000
    assert summary.errors == 2
    assert summary.p50_ms == 500.0
    assert summary.p90_ms == 900.0
    assert summary.p99_ms == 990.0
    assert summary.max_ms == 1000.0
    assert summary.mean_ms == 500.5
    assert summary.as_dict()["p99_ms"] == 990.0


def test_it_gives_no_ratio_without_a_floor():
    assert ratio(3.0, 1.5) == 2.0
    assert ratio(None, 1.0) is None
    assert ratio(1.0, None) is None
    assert ratio(1.0, 0.0) is None
