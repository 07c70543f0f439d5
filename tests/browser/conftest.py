from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.support import open_browser


@pytest.fixture
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Headless Chromium laid out `request.param` pixels wide (parametrize it indirectly)."""
    yield from open_browser(request)
