"""Offline-first creates racing each other: the same client id from several threads makes one row."""

import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from ralphsite.tokens import MintedToken
from sessions_app.models import Session

pytestmark = pytest.mark.django_db(transaction=True)


def test_concurrent_retries_of_one_create_make_exactly_one_row(token: MintedToken) -> None:
    payload = {"id": "01J9ZQ6Y8K3V5X7B2N4M6P8R0T", "user_request": "same body"}
    statuses: list[int] = []
    barrier = threading.Barrier(6)

    def create() -> None:
        client = APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}")
        barrier.wait()
        try:
            statuses.append(client.post("/api/v1/sessions/", payload, format="json").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] * 5 + [201]
    assert Session.objects.count() == 1
