"""WorkerGC freezes the warm heap once, after the warm-up requests, whatever the threads."""

import gc
import threading
from collections.abc import Iterator

import pytest

from ralphsite.server.worker_gc import WorkerGC


@pytest.fixture(autouse=True)
def unfreeze() -> Iterator[None]:
    yield
    gc.unfreeze()  # give the test process its objects back


def test_it_freezes_once_after_the_warm_up_requests() -> None:
    worker = WorkerGC(warm_requests=3)
    assert [worker.request_finished() for _ in range(5)] == [False, False, True, False, False]
    assert worker.frozen and gc.get_freeze_count() > 0


def test_it_freezes_exactly_once_under_concurrent_requests() -> None:
    worker = WorkerGC(warm_requests=50)
    froze: list[bool] = []
    barrier = threading.Barrier(8)

    def serve() -> None:
        barrier.wait()
        froze.extend(worker.request_finished() for _ in range(100))

    threads = [threading.Thread(target=serve) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert froze.count(True) == 1 and len(froze) == 800
