"""Deleting a session cascades to its DevTeam rows (seed 003's foreign-key table) and loop runs."""

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from sessions_app.models import AcceptanceCriterion, Bug, Feature, InterviewQuestion, Session, SessionStatus
from tests.sessions_app.devteam_factories import SESSION_CASCADED_MODELS, devteam_rows, devteam_session

pytestmark = pytest.mark.django_db


def _finished_session_id(key: str) -> str:
    """A running session is not deleted (409 session_running): finish it first."""
    session = devteam_session(key)
    Session.objects.filter(pk=session.pk).update(status=SessionStatus.COMPLETED, ended_at=timezone.now())
    return session.pk

def test_it_cascades_from_the_session_and_keeps_plan_scoped_rows(api: APIClient) -> None:
    devteam_rows("doomed")
    devteam_rows("kept")
    AcceptanceCriterion.objects.create(key="AC-001", description="d")
    Feature.objects.create(key="FEAT-001", name="n")
    assert api.delete(reverse("session-detail", args=[_finished_session_id("doomed")])).status_code == 204
    for model in SESSION_CASCADED_MODELS:
        assert model.objects.count() == 1, model.__name__
    kept = devteam_session("kept").pk
    assert InterviewQuestion.objects.get().interview.session_id == kept
    assert all(model.objects.get().session_id == kept
               for model in SESSION_CASCADED_MODELS if model is not InterviewQuestion)
    assert AcceptanceCriterion.objects.count() == Feature.objects.count() == 1


def test_a_bug_may_be_recorded_outside_any_session_and_outlives_session_deletes(api: APIClient) -> None:
    response = api.post(reverse("bug-list"), {"description": "flaky build", "severity": "high"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["session"] is None
    devteam_rows("doomed")
    api.delete(reverse("session-detail", args=[_finished_session_id("doomed")]))
    assert list(Bug.objects.values_list("description", flat=True)) == ["flaky build"]
