import threading

import pytest
from django.db import DataError, IntegrityError, OperationalError, connections, transaction
from rest_framework.test import APIClient

from ralphsite.core.api.errors import api_exception_handler
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
    assert constraint in ("session_key_project_unique", "unique"), response.data
    if constraint == "unique":
        assert response.data["details"]["columns"] == ["sessions_app_session.key", "sessions_app_session.project_path"]


def test_an_unknown_api_path_is_a_json_404(api: APIClient) -> None:
    assert_error_shape(api.get("/api/v1/no-such-thing/"), 404, "not_found")


def test_a_wrong_method_is_a_405_with_the_error_shape(api: APIClient) -> None:
    assert_error_shape(api.put("/api/v1/sessions/", {}, format="json"), 405, "method_not_allowed")


def test_an_unexpected_error_is_a_json_500_without_a_traceback() -> None:
    response = api_exception_handler(RuntimeError("boom secret"), {})
    assert response.status_code == 500
    assert response.data == {"code": "server_error", "message": "Internal server error.", "details": {}}


def test_a_body_nested_too_deeply_is_a_400_parse_error(api: APIClient) -> None:
    depth = 100_000
    body = "[" * depth + "]" * depth
    response = api.post("/api/v1/sessions/", body, content_type="application/json")
    assert_error_shape(response, 400, "parse_error")


def test_a_value_the_database_cannot_store_is_a_400() -> None:
    for exc in (DataError("integer out of range\nDETAIL: more"), OverflowError("Python int too large")):
        response = api_exception_handler(exc, {})
        assert response.status_code == 400
        assert response.data["code"] == "validation_error"
        assert "\n" not in response.data["details"]["database"][0]


def test_an_integer_column_accepts_the_same_range_on_every_backend(api: APIClient) -> None:
    # current_iteration is a PositiveIntegerField: PostgreSQL's integer, which SQLite would exceed.
    session = Session.objects.create()
    response = api.patch(f"/api/v1/sessions/{session.pk}/", {"current_iteration": 2**31}, format="json")
    assert_error_shape(response, 400, "validation_error")
    assert "2147483647" in response.json()["details"]["current_iteration"][0]
    response = api.patch(f"/api/v1/sessions/{session.pk}/", {"current_iteration": 2**31 - 1}, format="json")
    assert response.status_code == 200


def test_a_nul_character_in_a_json_column_is_a_400_on_every_backend(api: APIClient) -> None:
    response = api.post("/api/v1/sessions/", {"user_request": "x", "config": {"k\u0000": ["v"]}}, format="json")
    assert_error_shape(response, 400, "validation_error")
    assert "config" in response.json()["details"]
    assert not Session.objects.exists()


def test_it_refuses_a_key_repeated_in_a_json_object(api: APIClient) -> None:
    """json.loads keeps the last value of a repeated key and drops the others without a word."""
    response = api.post("/api/v1/sessions/", data=b'{"key": "a", "user_request": "x", "key": "b"}',
                        content_type="application/json")
    body = assert_error_shape(response, 400, "parse_error")
    assert "'key'" in body["message"] and "twice" in body["message"], body


@pytest.mark.django_db(transaction=True)
def test_a_real_deadlock_is_a_503_that_says_deadlock_not_busy() -> None:
    """Issue #28 §5: PostgreSQL's "deadlock detected … blocked by process" was read as SQLite's "locked"
    (`database_busy`). Two transactions lock two sessions in opposite orders; the database rolls one back."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers: a lock wait there is `database is locked`, not a deadlock")
    first, second = Session.objects.create(key="first"), Session.objects.create(key="second")
    both_locked = threading.Barrier(2)
    failures: list[BaseException] = []

    def lock(one: Session, other: Session) -> None:
        try:
            with transaction.atomic():
                Session.objects.select_for_update().get(pk=one.pk)
                both_locked.wait()
                Session.objects.select_for_update().get(pk=other.pk)
        except OperationalError as exc:
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=lock, args=pair) for pair in ((first, second), (second, first))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    [deadlock] = failures
    response = api_exception_handler(deadlock, {})
    assert (response.status_code, response.data["code"], response["Retry-After"]) == (503, "database_deadlock", "1")
    assert "deadlock" in response.data["message"]
