"""Work in real threads released together; whatever a thread raises fails the test that started it."""

import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import connection
from rest_framework.test import APIClient

from ralphsite.tokens.services import MintedToken

T = TypeVar("T")


def in_threads(count: int, work: Callable[[int], T]) -> list[T]:
    """Run `work(index)` for each index below `count`, each in its own thread, all started at once.

    Returns what each call returned, in index order. Each thread closes the database connection
    Django opened for it. When calls raised, their exceptions are raised again together (an
    ExceptionGroup) once every thread has finished: an exception in a thread is otherwise only printed.
    """
    results: list[T | None] = [None] * count
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = work(index)
        except BaseException as error:  # raised again in the test's thread
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise BaseExceptionGroup(f"{len(errors)} of {count} threads raised", errors)
    return results  # type: ignore[return-value] - every slot was filled


def on_own_connection(work: Callable[[], T]) -> T:
    """`work()` on a thread of its own, i.e. on a database connection of its own (closed after);
    what it raises is raised again here."""
    return in_threads(1, lambda _: work())[0]


def api_in_threads(count: int, token: MintedToken, work: Callable[[APIClient, int], T]) -> list[T]:
    """`in_threads` where each thread calls the API with its own client, authenticated by `token`."""
    return in_threads(count, lambda index: work(APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}"), index))
