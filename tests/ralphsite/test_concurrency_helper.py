"""The shared thread helper of the concurrency tests (tests/concurrency.py) reports what threads raise."""

import threading

import pytest

from tests.concurrency import in_threads


def test_it_returns_each_thread_result_in_index_order() -> None:
    assert in_threads(5, lambda index: index * 10) == [0, 10, 20, 30, 40]


def test_it_raises_what_threads_raised_after_every_thread_finished() -> None:
    finished: list[int] = []
    lock = threading.Lock()

    def work(index: int) -> int:
        if index % 2:
            raise AssertionError(f"thread {index} failed")
        with lock:
            finished.append(index)
        return index

    with pytest.raises(BaseExceptionGroup) as raised:
        in_threads(4, work)
    assert sorted(str(error) for error in raised.value.exceptions) == ["thread 1 failed", "thread 3 failed"]
    assert sorted(finished) == [0, 2]
