from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.support import open_browser


@pytest.fixture(autouse=True)
def quick_polls(settings: Any) -> None:
    """Live pages ask for news every 250 ms, not 2 s: the tests wait for each change to be drawn."""
    settings.RALPH_CONSOLE_POLL_MS = 250


@pytest.fixture
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Headless Chromium laid out `request.param` pixels wide (parametrize it indirectly)."""
    yield from open_browser(request)
