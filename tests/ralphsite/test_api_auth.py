"""Every route the API router registers refuses anonymous requests with 401 and the error shape.

The routes are read from the router, so every resource added later is covered automatically.
"""

import pytest
from rest_framework.test import APIClient

from tests.api_mixins import api_routes

pytestmark = pytest.mark.django_db

ROUTES = [(route.method, route.path) for route in api_routes()]


def test_the_router_has_routes() -> None:
    assert ("get", "/api/v1/sessions/") in ROUTES
    assert ("delete", "/api/v1/sessions/01ARZ3NDEKTSV4RRFFQ69G5FAV/") in ROUTES


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_it_rejects_anonymous_requests(method: str, path: str) -> None:
    response = getattr(APIClient(), method)(path, {}, format="json")
    assert response.status_code == 401, (method, path, response.content)
    body = response.json()
    assert body["code"] == "not_authenticated"
    assert set(body) == {"code", "message", "details"}
    assert response["WWW-Authenticate"] == "Token"


def test_it_rejects_a_wrong_token() -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = client.get("/api/v1/sessions/")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_it_accepts_a_logged_in_admin_session(admin_client) -> None:
    assert admin_client.get("/api/v1/sessions/").status_code == 200


def test_the_api_root_lists_the_resources(api: APIClient) -> None:
    body = api.get("/api/v1/").json()
    assert body["sessions"].endswith("/api/v1/sessions/")
