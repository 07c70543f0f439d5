"""ULIDs are Crockford base32, which is case-insensitive: a lower-cased id names the same row."""

import pytest
from rest_framework.test import APIClient

from sessions_app.models import Session, Task

pytestmark = pytest.mark.django_db


def test_it_retrieves_a_row_by_its_lower_case_id(api: APIClient) -> None:
    session = Session.objects.create(key="s")
    response = api.get(f"/api/v1/sessions/{session.pk.lower()}/")
    assert response.status_code == 200
    assert response.json()["id"] == session.pk


def test_it_filters_by_a_lower_case_parent_id(api: APIClient) -> None:
    session = Session.objects.create(key="s")
    Task.objects.create(session=session, key="task-1", title="t")
    response = api.get(f"/api/v1/tasks/?session={session.pk.lower()}")
    assert response.status_code == 200
    assert [row["key"] for row in response.json()["results"]] == ["task-1"]


def test_it_stores_a_client_supplied_id_in_upper_case(api: APIClient) -> None:
    response = api.post("/api/v1/sessions/", {"id": "01arz3ndektsv4rrffq69g5fav", "user_request": "x"},
                        format="json")
    assert response.status_code == 201, response.content
    assert Session.objects.filter(pk="01ARZ3NDEKTSV4RRFFQ69G5FAV").exists()
    again = api.post("/api/v1/sessions/", {"id": "01arz3ndektsv4rrffq69g5fav", "user_request": "x"}, format="json")
    assert again.status_code == 200
