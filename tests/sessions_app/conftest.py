from collections.abc import Iterator
from typing import Any

import pytest

from sessions_app.signals import orchestration_event


@pytest.fixture
def events() -> Iterator[list[dict[str, Any]]]:
    """Every orchestration_event sent during the test, as its keyword arguments."""
    received: list[dict[str, Any]] = []

    def record(sender: Any, **kwargs: Any) -> None:
        received.append(kwargs)

    orchestration_event.connect(record, weak=False)
    yield received
    orchestration_event.disconnect(record)
