"""Content negotiation: the JSON shortcut answers as DRF would; anything else takes DRF's path."""

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("accept", [None, "*/*", "application/json", "application/json; indent=2",
                                    "text/html;q=0.9, application/json"])
def test_it_answers_json_to_what_accepts_json(api: APIClient, accept: str | None) -> None:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    response = api.get("/api/v1/chats/", **headers)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")


def test_it_refuses_what_it_cannot_render(api: APIClient) -> None:
    response = api.get("/api/v1/chats/", HTTP_ACCEPT="text/csv")
    assert response.status_code == 406


def test_it_honours_the_format_parameter(api: APIClient) -> None:
    assert api.get("/api/v1/chats/?format=json").status_code == 200


@pytest.mark.parametrize("value", ["xml", "", "JSON"])
def test_it_refuses_a_format_no_renderer_serves(api: APIClient, value: str) -> None:
    response = api.get(f"/api/v1/chats/?format={value}", HTTP_ACCEPT="text/csv")  # the error is JSON all the same
    assert response.status_code == 400 and response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == "validation_error"
    assert body["details"] == {"format": [f"Unknown format {value!r}; allowed: json."]}, body
