import pytest
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from ralphsite.api.errors import api_exception_handler
from sessions_app.models import Session
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db


def test_an_integrity_error_becomes_a_409_naming_the_constraint() -> None:
    Session.objects.create(key="dup")
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        Session.objects.create(key="dup")
    response = api_exception_handler(caught.value, {})
    assert response.status_code == 409
    assert response.data["code"] == "conflict"
    constraint = response.data["details"]["constraint"]
    assert constraint in ("session_key_unique", "unique"), response.data
    if constraint == "unique":
        assert response.data["details"]["columns"] == ["sessions_app_session.key"]


def test_an_unknown_api_path_is_a_json_404(api: APIClient) -> None:
    assert_error_shape(api.get("/api/v1/no-such-thing/"), 404, "not_found")


def test_a_wrong_method_is_a_405_with_the_error_shape(api: APIClient) -> None:
    assert_error_shape(api.put("/api/v1/sessions/", {}, format="json"), 405, "method_not_allowed")


def test_an_unexpected_error_is_a_json_500_without_a_traceback() -> None:
    response = api_exception_handler(RuntimeError("boom secret"), {})
    assert response.status_code == 500
    assert response.data == {"code": "server_error", "message": "Internal server error.", "details": {}}
