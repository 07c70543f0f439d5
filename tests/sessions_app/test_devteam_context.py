"""Context budgets (derived usage_percent and status, the record-usage action) and snapshots."""

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from tests.api_mixins import assert_error_shape
from tests.sessions_app.devteam_factories import devteam_session

pytestmark = pytest.mark.django_db

BUDGETS = reverse("contextbudget-list")
SNAPSHOTS = reverse("contextsnapshot-list")


def _budget(api: APIClient, **fields: Any) -> dict[str, Any]:
    payload = {"session": devteam_session().pk, "model": "opus", "context_limit": 200_000,
               "warn_threshold": 150_000, "summarize_threshold": 180_000, **fields}
    response = api.post(BUDGETS, payload, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _record(api: APIClient, budget: dict[str, Any], body: dict[str, Any]) -> Any:
    return api.post(reverse("contextbudget-record-usage", args=[budget["id"]]), body, format="json")


@pytest.mark.parametrize(("usage", "percent", "status"), [
    (0, 0.0, "ok"),
    (100_000, 50.0, "ok"),
    (150_000, 75.0, "warning"),
    (179_999, 90.0, "warning"),
    (180_000, 90.0, "critical"),
    (210_000, 105.0, "critical"),
])
def test_it_derives_usage_percent_and_status(api: APIClient, usage: int, percent: float, status: str) -> None:
    budget = _budget(api, current_usage=usage)
    assert (budget["usage_percent"], budget["status"]) == (percent, status)


def test_it_refuses_derived_fields_in_a_write_body(api: APIClient) -> None:
    payload = {"session": devteam_session().pk, "model": "opus", "context_limit": 1000, "usage_percent": 1.0,
               "status": "ok"}
    details = assert_error_shape(api.post(BUDGETS, payload, format="json"), 400, "validation_error")["details"]
    assert set(details) == {"usage_percent", "status"}


def test_it_is_critical_at_the_limit_even_without_thresholds(api: APIClient) -> None:
    budget = _budget(api, warn_threshold=0, summarize_threshold=0, current_usage=199_999)
    assert budget["status"] == "ok"
    assert _record(api, budget, {"current_usage": 200_000}).json()["status"] == "critical"


def test_it_records_usage_absolute_or_added(api: APIClient) -> None:
    budget = _budget(api)
    assert _record(api, budget, {"tokens_added": 100_000}).json()["current_usage"] == 100_000
    warned = _record(api, budget, {"tokens_added": 60_000, "last_action": "warned"}).json()
    assert (warned["current_usage"], warned["status"], warned["last_action"]) == (160_000, "warning", "warned")
    summarized = _record(api, budget, {"current_usage": 30_000, "last_action": "summarized"}).json()
    assert (summarized["current_usage"], summarized["usage_percent"], summarized["status"]) == (30_000, 15.0, "ok")


def test_it_recomputes_on_a_patch(api: APIClient) -> None:
    budget = _budget(api, current_usage=100_000)
    patched = api.patch(reverse("contextbudget-detail", args=[budget["id"]]), {"context_limit": 110_000},
                        format="json").json()
    assert (patched["usage_percent"], patched["status"]) == (90.91, "ok")
    patched = api.patch(reverse("contextbudget-detail", args=[budget["id"]]), {"summarize_threshold": 100_000,
                        "warn_threshold": 90_000}, format="json").json()
    assert (patched["usage_percent"], patched["status"]) == (90.91, "critical")


def test_it_refuses_bad_usage_records(api: APIClient) -> None:
    budget = _budget(api)
    for body in ({}, {"current_usage": 1, "tokens_added": 1}):
        assert_error_shape(_record(api, budget, body), 400, "validation_error")
    body = assert_error_shape(_record(api, budget, {"tokens_added": -5}), 400, "validation_error")
    assert "tokens_added" in body["details"]
    body = assert_error_shape(_record(api, budget, {"current_usage": 1, "last_action": "panicked"}), 400,
                              "validation_error")
    assert "summarized" in body["details"]["last_action"][0]
    body = assert_error_shape(_record(api, budget, {"current_usage": 1, "usage": 2}), 400, "validation_error")
    assert body["details"] == {"usage": ["Unknown field; allowed: current_usage, last_action, tokens_added."]}
    missing = {"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}
    assert_error_shape(_record(api, missing, {"current_usage": 1}), 404, "not_found")


def test_it_refuses_bad_budgets(api: APIClient) -> None:
    session = devteam_session().pk
    response = api.post(BUDGETS, {"session": session, "model": "opus", "context_limit": 0}, format="json")
    assert "context_limit" in assert_error_shape(response, 400, "validation_error")["details"]
    response = api.post(BUDGETS, {"session": session, "model": "opus", "context_limit": 100,
                                  "warn_threshold": 90, "summarize_threshold": 80}, format="json")
    assert "warn_threshold" in assert_error_shape(response, 400, "validation_error")["details"]
    _budget(api)
    assert_error_shape(api.post(BUDGETS, {"session": session, "model": "opus", "context_limit": 5},
                                format="json"), 409, "conflict")


def test_it_filters_budgets_by_session_model_and_status(api: APIClient) -> None:
    _budget(api, model="opus", current_usage=190_000)
    _budget(api, model="haiku")
    rows = api.get(BUDGETS, {"session": devteam_session().pk, "status": "critical"}).json()["results"]
    assert [row["model"] for row in rows] == ["opus"]
    assert [row["model"] for row in api.get(BUDGETS, {"model": "haiku"}).json()["results"]] == ["haiku"]
    body = assert_error_shape(api.get(BUDGETS, {"status": "fine"}), 400, "validation_error")
    assert "status" in body["details"]


def test_it_derives_tokens_saved_unless_given(api: APIClient) -> None:
    base = {"session": devteam_session().pk, "snapshot_type": "auto"}
    derived = api.post(SNAPSHOTS, {**base, "tokens_before": 190_000, "tokens_after": 40_000}, format="json").json()
    assert derived["tokens_saved"] == 150_000
    given = api.post(SNAPSHOTS, {**base, "tokens_before": 100, "tokens_after": 40, "tokens_saved": 7},
                     format="json").json()
    assert given["tokens_saved"] == 7
    partial = api.post(SNAPSHOTS, {**base, "tokens_before": 100}, format="json").json()
    assert partial["tokens_saved"] is None
    patched = api.patch(reverse("contextsnapshot-detail", args=[partial["id"]]), {"tokens_after": 30},
                        format="json").json()
    assert patched["tokens_saved"] == 70


def test_it_rejects_a_bad_snapshot_type_and_filters_snapshots(api: APIClient) -> None:
    session = devteam_session().pk
    response = api.post(SNAPSHOTS, {"session": session, "snapshot_type": "big"}, format="json")
    assert "overflow_prevention" in assert_error_shape(response, 400, "validation_error")["details"]["snapshot_type"][0]
    api.post(SNAPSHOTS, {"session": session, "snapshot_type": "checkpoint"}, format="json")
    api.post(SNAPSHOTS, {"session": session, "snapshot_type": "auto"}, format="json")
    rows = api.get(SNAPSHOTS, {"session": session, "snapshot_type": "checkpoint"}).json()["results"]
    assert [row["snapshot_type"] for row in rows] == ["checkpoint"]
