import pytest
from rest_framework.test import APIClient

from sessions_app.models import Session
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db


def test_it_orders_by_an_allowed_field(api: APIClient) -> None:
    Session.objects.create(key="b")
    Session.objects.create(key="a")
    keys = [row["key"] for row in api.get("/api/v1/sessions/?ordering=key").json()["results"]]
    assert keys == ["a", "b"]
    keys = [row["key"] for row in api.get("/api/v1/sessions/?ordering=-key").json()["results"]]
    assert keys == ["b", "a"]


def test_it_refuses_an_unknown_ordering_naming_the_allowed_fields(api: APIClient) -> None:
    response = api.get("/api/v1/sessions/?ordering=key,-bogus")
    assert_error_shape(response, 400, "validation_error")
    message = response.json()["details"]["ordering"][0]
    assert "'-bogus'" in message
    assert "allowed: " in message and "created_at" in message and "key" in message
