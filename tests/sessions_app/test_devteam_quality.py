"""Bugs, escalations, acceptance criteria (the verify action) and features (derived step counts)."""

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from sessions_app.models import AcceptanceCriterion, Feature
from tests.api_mixins import assert_error_shape
from tests.sessions_app.devteam_factories import devteam_session

pytestmark = pytest.mark.django_db

BUGS = reverse("bug-list")
CRITERIA = reverse("acceptancecriterion-list")
FEATURES = reverse("feature-list")


def _post(api: APIClient, url: str, payload: dict[str, Any]) -> dict[str, Any]:
    response = api.post(url, payload, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


def test_it_stamps_resolved_at_when_a_bug_is_resolved_and_clears_it_when_reopened(api: APIClient) -> None:
    bug = _post(api, BUGS, {"session": devteam_session().pk, "description": "crash"})
    assert bug["status"] == "open" and bug["resolved_at"] is None
    url = reverse("bug-detail", args=[bug["id"]])
    resolved = api.patch(url, {"status": "resolved", "fix_summary": "guard"}, format="json").json()
    assert resolved["resolved_at"] is not None
    assert api.patch(url, {"fix_summary": "guard added"}, format="json").json()["resolved_at"] == \
        resolved["resolved_at"]
    assert api.patch(url, {"status": "in_progress"}, format="json").json()["resolved_at"] is None
    created_resolved = _post(api, BUGS, {"session": devteam_session().pk, "description": "x", "status": "resolved"})
    assert created_resolved["resolved_at"] is not None


def test_it_rejects_a_bad_bug_enum_naming_the_allowed_values(api: APIClient) -> None:
    response = api.post(BUGS, {"session": devteam_session().pk, "description": "x", "status": "closed"},
                        format="json")
    message = assert_error_shape(response, 400, "validation_error")["details"]["status"][0]
    assert all(value in message for value in ("open", "in_progress", "resolved", "wont_fix"))


def test_it_filters_bugs_and_escalations(api: APIClient) -> None:
    session = devteam_session()
    _post(api, BUGS, {"session": session.pk, "description": "a", "severity": "high", "status": "open"})
    _post(api, BUGS, {"session": session.pk, "description": "b", "severity": "low", "status": "wont_fix"})
    rows = api.get(BUGS, {"session": session.pk, "severity": ["high", "critical"]}).json()["results"]
    assert [row["description"] for row in rows] == ["a"]
    assert [r["description"] for r in api.get(BUGS, {"status": "wont_fix"}).json()["results"]] == ["b"]
    escalations = reverse("escalation-list")
    for task_key in ("TASK-001", "TASK-002"):
        _post(api, escalations, {"session": session.pk, "from_model": "haiku", "to_model": "sonnet",
                                 "reason": "consecutive_failures", "failure_count": 3, "task_key": task_key})
    rows = api.get(escalations, {"session": session.pk, "task_key": "TASK-002"}).json()["results"]
    assert [(row["task_key"], row["to_model"]) for row in rows] == [("TASK-002", "sonnet")]


def test_it_refuses_an_unknown_session(api: APIClient) -> None:
    response = api.post(BUGS, {"session": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "description": "x"}, format="json")
    assert "session" in assert_error_shape(response, 400, "validation_error")["details"]


def _criterion(api: APIClient, key: str = "AC-001", plan_key: str = "plan-001") -> dict[str, Any]:
    return _post(api, CRITERIA, {"plan_key": plan_key, "key": key, "task_key": "TASK-001",
                                 "description": "it works"})


def test_it_verifies_a_criterion_fail_then_pass(api: APIClient) -> None:
    criterion = _criterion(api)
    verify = reverse("acceptancecriterion-verify", args=[criterion["id"]])
    for reason in ("returns 500", "returns 404"):
        failed = api.post(verify, {"passes": False, "failure_reason": reason, "verified_by": "reviewer"},
                          format="json").json()
    assert failed["passes"] is False
    assert failed["failure_count"] == 2
    assert failed["last_failure_reason"] == "returns 404"
    assert failed["verified_at"] is None
    passed = api.post(verify, {"passes": True, "verified_by": "qa", "verification_method": "automated_test",
                               "verification_evidence": "pytest -k login"}, format="json").json()
    assert passed["passes"] is True
    assert passed["verified_at"] is not None
    assert passed["verified_by"] == "qa"
    assert passed["verification_method"] == "automated_test"
    assert passed["failure_count"] == 2


def test_it_refuses_bad_verifications(api: APIClient) -> None:
    verify = reverse("acceptancecriterion-verify", args=[_criterion(api)["id"]])
    body = assert_error_shape(api.post(verify, {"passes": False}, format="json"), 400, "validation_error")
    assert "failure_reason" in body["details"]
    body = assert_error_shape(api.post(verify, {"passes": True, "verification_method": "vibes"}, format="json"),
                              400, "validation_error")
    assert "automated_test" in body["details"]["verification_method"][0]
    body = assert_error_shape(api.post(verify, {"passes": True, "passed": True}, format="json"), 400,
                              "validation_error")
    assert body["details"] == {"passed": ["Unknown field; allowed: failure_reason, passes, verification_evidence, "
                                             "verification_method, verified_by."]}
    assert_error_shape(api.post(verify, {}, format="json"), 400, "validation_error")
    missing = reverse("acceptancecriterion-verify", args=["01ARZ3NDEKTSV4RRFFQ69G5FAV"])
    assert_error_shape(api.post(missing, {"passes": True}, format="json"), 404, "not_found")


def test_it_leaves_verification_results_but_passes_to_the_verify_action(api: APIClient) -> None:
    refused = api.post(CRITERIA, {"plan_key": "p", "key": "AC-001", "description": "d", "failure_count": 9},
                       format="json")
    assert "failure_count" in assert_error_shape(refused, 400, "validation_error")["details"]
    # DevTeam writes `passes` with the criterion (seed 003).
    criterion = _post(api, CRITERIA, {"plan_key": "p", "key": "AC-001", "description": "d", "passes": True})
    assert criterion["passes"] is True and criterion["failure_count"] == 0


def test_it_keeps_criterion_keys_unique_per_plan(api: APIClient) -> None:
    _criterion(api, "AC-001", "plan-001")
    _criterion(api, "AC-001", "plan-002")
    response = api.post(CRITERIA, {"plan_key": "plan-001", "key": "AC-001", "description": "again"}, format="json")
    assert_error_shape(response, 409, "conflict")
    assert AcceptanceCriterion.objects.count() == 2


def test_it_filters_criteria_by_task_and_passes(api: APIClient) -> None:
    first, _second = _criterion(api, "AC-001"), _criterion(api, "AC-002")
    api.post(reverse("acceptancecriterion-verify", args=[first["id"]]), {"passes": True}, format="json")
    rows = api.get(CRITERIA, {"task_key": "TASK-001", "passes": "true"}).json()["results"]
    assert [row["key"] for row in rows] == ["AC-001"]
    rows = api.get(CRITERIA, {"plan_key": "plan-001", "passes": "false"}).json()["results"]
    assert [row["key"] for row in rows] == ["AC-002"]


STEPS = [{"step": "open page", "passes": True}, {"step": "click login", "passes": False},
         {"step": "see dashboard", "passes": True}]


def test_it_derives_feature_step_counts_on_every_write(api: APIClient) -> None:
    refused = api.post(FEATURES, {"key": "FEAT-001", "name": "Login", "steps": STEPS, "steps_total": 99},
                       format="json")
    assert "steps_total" in assert_error_shape(refused, 400, "validation_error")["details"]
    feature = _post(api, FEATURES, {"key": "FEAT-001", "name": "Login", "steps": STEPS})
    assert (feature["steps_total"], feature["steps_passed"], feature["all_steps_pass"]) == (3, 2, False)
    url = reverse("feature-detail", args=[feature["id"]])
    all_pass = [{**step, "passes": True} for step in STEPS]
    updated = api.patch(url, {"steps": all_pass}, format="json").json()
    assert (updated["steps_total"], updated["steps_passed"], updated["all_steps_pass"]) == (3, 3, True)
    renamed = api.patch(url, {"name": "Sign in"}, format="json").json()
    assert (renamed["steps_total"], renamed["steps_passed"]) == (3, 3)
    emptied = api.patch(url, {"steps": []}, format="json").json()
    assert (emptied["steps_total"], emptied["steps_passed"], emptied["all_steps_pass"]) == (0, 0, False)
    bare = _post(api, FEATURES, {"key": "FEAT-002", "name": "No steps yet"})
    assert (bare["steps"], bare["steps_total"], bare["all_steps_pass"]) == ([], 0, False)


@pytest.mark.parametrize("steps", [
    "click",
    {"step": "click", "passes": True},
    ["click"],
    [{"step": "click"}],
    [{"step": "click", "passes": "yes"}],
    [{"step": "", "passes": True}],
    [{"step": 3, "passes": True}],
    [{"step": "click", "passes": True, "extra": 1}],
])
def test_it_rejects_malformed_steps_with_a_clear_400(api: APIClient, steps: Any) -> None:
    response = api.post(FEATURES, {"key": "FEAT-009", "name": "x", "steps": steps}, format="json")
    body = assert_error_shape(response, 400, "validation_error")
    assert "steps" in body["details"]
    assert body["message"].startswith("steps: ")
    assert not Feature.objects.exists()


def test_it_stamps_verified_at_when_a_feature_passes(api: APIClient) -> None:
    feature = _post(api, FEATURES, {"key": "FEAT-001", "name": "Login", "plan_key": "plan-001"})
    url = reverse("feature-detail", args=[feature["id"]])
    passed = api.patch(url, {"passes": True, "verified_by": "qa"}, format="json").json()
    assert passed["verified_at"] is not None
    assert api.patch(url, {"passes": False}, format="json").json()["verified_at"] is None


def test_it_keeps_feature_keys_unique_and_filters_by_plan_and_passes(api: APIClient) -> None:
    _post(api, FEATURES, {"key": "FEAT-001", "name": "a", "plan_key": "plan-001", "passes": True})
    _post(api, FEATURES, {"key": "FEAT-002", "name": "b", "plan_key": "plan-002"})
    assert_error_shape(api.post(FEATURES, {"key": "FEAT-001", "name": "dup"}, format="json"), 409, "conflict")
    rows = api.get(FEATURES, {"plan_key": "plan-001", "passes": "true"}).json()["results"]
    assert [row["key"] for row in rows] == ["FEAT-001"]
    assert [row["key"] for row in api.get(FEATURES, {"key": "FEAT-002"}).json()["results"]] == ["FEAT-002"]
