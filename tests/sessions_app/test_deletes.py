"""Deletes as the seeds say (issue #15 §1): task dependencies are Restrict (seed 000)."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from sessions_app.models import Task, TaskDependency
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

TASKS = "/api/v1/tasks/"


def test_deleting_a_task_others_depend_on_is_a_409_naming_them(api: APIClient) -> None:
    session = make_session()
    first = make_task(session, "task-1", status="in_progress", claimed_by="exec-1")
    make_task(session, "task-2", depends_on=(first,))
    make_task(session, "task-3", depends_on=(first,))
    body = assert_error_shape(api.delete(f"{TASKS}{first.pk}/"), 409, "has_dependents")
    assert body["details"] == {"task": "task-1", "dependents": ["task-2", "task-3"]}
    assert "task-2" in body["message"] and "task-3" in body["message"]
    assert TaskDependency.objects.count() == 2
    # The dependents did not become claimable: their dependency is still there, in progress.
    refusal: dict[str, Any] = api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "a"},
                                       format="json").json()
    assert (refusal["details"]["reason"], refusal["details"]["ready"]) == ("waiting", [])


def test_a_task_whose_dependents_are_gone_or_replanned_can_be_deleted(api: APIClient) -> None:
    session = make_session()
    first = make_task(session, "task-1")
    second = make_task(session, "task-2", depends_on=(first,))
    third = make_task(session, "task-3", depends_on=(first,))
    assert api.delete(f"{TASKS}{second.pk}/").status_code == 204  # its own edge goes with it
    assert api.patch(f"{TASKS}{third.pk}/", {"depends_on": []}, format="json").status_code == 200
    assert api.delete(f"{TASKS}{first.pk}/").status_code == 204
    assert list(Task.objects.values_list("key", flat=True)) == ["task-3"]
