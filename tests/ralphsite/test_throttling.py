"""API requests are throttled per token, with the count shared through the database."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from ralphsite.core.api import throttling
from ralphsite.core.models import ThrottleWindow, TokenScope
from ralphsite.tokens.services import api_token_create
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_per_minute(settings) -> None:
    settings.RALPH_API_THROTTLE_RATE = (3, 60)
    throttling._callers.clear()  # this process's counts of earlier tests' tokens (SQLite reuses their ids)


def _client(username: str) -> APIClient:
    user = get_user_model().objects.create_user(username=username, is_staff=True, is_superuser=True)
    minted = api_token_create(user=user, scope=TokenScope.GLOBAL, label="throttle test")
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.secret}")


def test_it_answers_429_throttled_with_retry_after_past_the_rate(three_per_minute) -> None:
    client = _client("busy-agent")
    assert [client.get("/api/v1/sessions/").status_code for _ in range(3)] == [200, 200, 200]
    response = client.get("/api/v1/sessions/")
    assert_error_shape(response, 429, "throttled")
    assert 1 <= int(response["Retry-After"]) <= 60


def test_it_counts_each_token_on_its_own(three_per_minute) -> None:
    busy, quiet = _client("busy-agent"), _client("quiet-agent")
    for _ in range(4):
        busy.get("/api/v1/sessions/")
    assert busy.get("/api/v1/sessions/").status_code == 429
    assert quiet.get("/api/v1/sessions/").status_code == 200


def test_it_shares_the_count_between_processes_through_the_database(three_per_minute) -> None:
    client = _client("busy-agent")
    for _ in range(3):
        assert client.get("/api/v1/sessions/").status_code == 200
        throttling._callers.clear()  # the next request comes to another process (or host)
    assert client.get("/api/v1/sessions/").status_code == 429
    assert ThrottleWindow.objects.get().count >= 3


def test_it_lets_everything_through_when_off(settings) -> None:
    settings.RALPH_API_THROTTLE_RATE = None
    client = _client("busy-agent")
    assert {client.get("/api/v1/sessions/").status_code for _ in range(5)} == {200}
    assert not ThrottleWindow.objects.exists()
