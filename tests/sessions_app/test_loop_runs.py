"""ralph-mem loop runs: iterate up to max_iterations, then finish with an outcome."""

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from tests.api_mixins import assert_error_shape
from tests.sessions_app.devteam_factories import devteam_session

pytestmark = pytest.mark.django_db

LOOP_RUNS = reverse("looprun-list")


def _loop_run(api: APIClient, **fields: Any) -> dict[str, Any]:
    response = api.post(LOOP_RUNS, {"session": devteam_session().pk, "task": "fix tests",
                                    "criteria": ["pytest exits 0"], **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _iterate(api: APIClient, loop_run: dict[str, Any]) -> Any:
    return api.post(reverse("looprun-iterate", args=[loop_run["id"]]))


def _finish(api: APIClient, loop_run: dict[str, Any], body: dict[str, Any]) -> Any:
    return api.post(reverse("looprun-finish", args=[loop_run["id"]]), body, format="json")


def test_it_starts_running_and_refuses_client_progress(api: APIClient) -> None:
    refused = api.post(LOOP_RUNS, {"session": devteam_session().pk, "task": "t", "criteria": [], "status": "success",
                                   "iterations": 5}, format="json")
    assert set(assert_error_shape(refused, 400, "validation_error")["details"]) == {"status", "iterations"}
    loop_run = _loop_run(api)
    assert (loop_run["status"], loop_run["iterations"], loop_run["max_iterations"]) == ("running", 0, 10)


def test_it_iterates_up_to_max_iterations_then_refuses_with_409(api: APIClient) -> None:
    loop_run = _loop_run(api, max_iterations=2)
    assert [_iterate(api, loop_run).json()["iterations"] for _ in range(2)] == [1, 2]
    body = assert_error_shape(_iterate(api, loop_run), 409, "conflict")
    assert body["details"] == {"iterations": 2, "max_iterations": 2}
    assert "max_iterations" in body["message"]


def test_it_finishes_once_and_then_refuses_to_iterate_or_finish(api: APIClient) -> None:
    loop_run = _loop_run(api)
    _iterate(api, loop_run)
    finished = _finish(api, loop_run, {"status": "success", "snapshot_path": ".ralph-mem/snap/1"}).json()
    assert (finished["status"], finished["iterations"]) == ("success", 1)
    assert finished["ended_at"] is not None and finished["snapshot_path"] == ".ralph-mem/snap/1"
    assert assert_error_shape(_iterate(api, loop_run), 409, "conflict")["details"] == {"status": "success"}
    assert_error_shape(_finish(api, loop_run, {"status": "failed"}), 409, "conflict")


def test_it_refuses_bad_finishes(api: APIClient) -> None:
    loop_run = _loop_run(api)
    body = assert_error_shape(_finish(api, loop_run, {"status": "running"}), 400, "validation_error")
    assert "stopped" in body["details"]["status"][0]
    assert_error_shape(_finish(api, loop_run, {}), 400, "validation_error")
    assert_error_shape(_finish(api, loop_run, {"status": "failed", "reason": "x"}), 400, "validation_error")
    missing = {"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}
    assert_error_shape(_finish(api, missing, {"status": "failed"}), 404, "not_found")
    assert_error_shape(_iterate(api, missing), 404, "not_found")


def test_it_filters_by_session_and_status(api: APIClient) -> None:
    running, stopped = _loop_run(api), _loop_run(api)
    _finish(api, stopped, {"status": "stopped"})
    other = api.post(LOOP_RUNS, {"session": devteam_session("other").pk, "task": "t"}, format="json").json()
    rows = api.get(LOOP_RUNS, {"session": devteam_session().pk, "status": "running"}).json()["results"]
    assert [row["id"] for row in rows] == [running["id"]]
    rows = api.get(LOOP_RUNS, {"status": ["running", "stopped"]}).json()["results"]
    assert {row["id"] for row in rows} == {running["id"], stopped["id"], other["id"]}
