"""Offline-first creates racing each other: the same client id from several threads makes one row."""

import pytest
from rest_framework.test import APIClient

from ralphsite.tokens.services import MintedToken
from sessions_app.models import Session
from tests.concurrency import api_in_threads

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_retries_of_one_create_make_exactly_one_row(token: MintedToken) -> None:
    payload = {"id": "01J9ZQ6Y8K3V5X7B2N4M6P8R0T", "user_request": "same body"}

    def create(client: APIClient, _: int) -> int:
        return client.post("/api/v1/sessions/", payload, format="json").status_code

    statuses = api_in_threads(6, token, create)
    assert sorted(statuses) == [200] * 5 + [201]
    assert Session.objects.count() == 1
