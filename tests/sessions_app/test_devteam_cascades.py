"""Deleting a session cascades to its DevTeam rows (seed 003's foreign-key table) and loop runs."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from sessions_app.models import (
    AcceptanceCriterion,
    Bug,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    Interview,
    InterviewQuestion,
    LoopRun,
    ProgressSummary,
    SessionPhase,
    SessionStateEntry,
)
from tests.sessions_app.devteam_factories import devteam_interview, devteam_session

pytestmark = pytest.mark.django_db

CASCADED = [SessionStateEntry, SessionPhase, ProgressSummary, Bug, Escalation, ContextBudget, ContextSnapshot,
            Interview, InterviewQuestion, LoopRun]


def _fill(key: str) -> None:
    session = devteam_session(key)
    SessionStateEntry.objects.create(session=session, key="phase", value="coding")
    SessionPhase.objects.create(session=session, phase_type="coding")
    ProgressSummary.objects.create(session=session, summary_text="half done")
    Bug.objects.create(session=session, description="crash")
    Escalation.objects.create(session=session, from_model="haiku", to_model="sonnet", reason="failures")
    ContextBudget.objects.create(session=session, model="opus", context_limit=1000)
    ContextSnapshot.objects.create(session=session, snapshot_type="auto")
    InterviewQuestion.objects.create(interview=devteam_interview(key), question_key="k", question_text="t",
                                     sequence=1)
    LoopRun.objects.create(session=session, task="t")


def test_it_cascades_from_the_session_and_keeps_plan_scoped_rows(api: APIClient) -> None:
    _fill("doomed")
    _fill("kept")
    AcceptanceCriterion.objects.create(key="AC-001", description="d")
    Feature.objects.create(key="FEAT-001", name="n")
    assert api.delete(reverse("session-detail", args=[devteam_session("doomed").pk])).status_code == 204
    for model in CASCADED:
        assert model.objects.count() == 1, model.__name__
    kept = devteam_session("kept").pk
    assert InterviewQuestion.objects.get().interview.session_id == kept
    assert all(model.objects.get().session_id == kept for model in CASCADED if model is not InterviewQuestion)
    assert AcceptanceCriterion.objects.count() == Feature.objects.count() == 1
