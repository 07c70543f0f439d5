"""The DevTeam admin pages write through the services: inline questions are numbered and counted."""

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from sessions_app.models import AcceptanceCriterion, Feature, Interview, InterviewQuestion, LoopRun
from tests.sessions_app.devteam_factories import (
    SESSION_CASCADED_MODELS,
    devteam_interview,
    devteam_rows,
    devteam_session,
)

pytestmark = pytest.mark.django_db


def _inline(rows: list[dict[str, Any]], initial: int = 0) -> dict[str, Any]:
    data: dict[str, Any] = {"questions-TOTAL_FORMS": len(rows), "questions-INITIAL_FORMS": initial,
                            "questions-MIN_NUM_FORMS": 0, "questions-MAX_NUM_FORMS": 1000}
    for index, row in enumerate(rows):
        data.update({f"questions-{index}-{name}": value for name, value in row.items()})
    return data


def test_it_adds_an_interview_with_inline_questions_through_the_services(admin_client: Client) -> None:
    response = admin_client.post(reverse("admin:sessions_app_interview_add"), {
        "session": devteam_session().pk, "interview_type": "bug", "status": "in_progress",
        "started_at_0": "2026-01-02", "started_at_1": "10:00:00",
        **_inline([{"question_key": "repro_steps", "question_text": "How?", "question_type": "text",
                    "required": "on", "response": "click twice"},
                   {"question_key": "expected_behavior", "question_text": "What?", "question_type": "text",
                    "response": ""}]),
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    interview = Interview.objects.get()
    questions = list(interview.questions.order_by("sequence"))
    assert [(q.sequence, q.question_key, q.responded_at is not None) for q in questions] == [
        (1, "repro_steps", True), (2, "expected_behavior", False)]
    assert (interview.questions_asked, interview.questions_answered) == (2, 1)


def test_it_edits_and_deletes_inline_questions_through_the_services(admin_client: Client) -> None:
    interview = devteam_interview()
    first, second = (InterviewQuestion.objects.create(interview=interview, question_key=key, question_text="?",
                                                      sequence=n) for n, key in ((1, "a"), (2, "b")))
    rows = [{"id": first.pk, "interview": interview.pk, "question_key": "a", "question_text": "?",
             "question_type": "text", "response": "answered"},
            {"id": second.pk, "interview": interview.pk, "question_key": "b", "question_text": "?",
             "question_type": "text", "response": "", "DELETE": "on"}]
    response = admin_client.post(reverse("admin:sessions_app_interview_change", args=[interview.pk]), {
        "session": interview.session_id, "interview_type": "feature", "status": "completed",
        "started_at_0": "2026-01-02", "started_at_1": "10:00:00", **_inline(rows, initial=2),
    })
    assert response.status_code == 302, response.content.decode()[:3000]
    interview.refresh_from_db()
    assert interview.completed_at is not None
    assert (interview.questions_asked, interview.questions_answered) == (1, 1)
    assert InterviewQuestion.objects.get().responded_at is not None


def test_it_marks_criteria_passing_and_stops_loop_runs_from_the_changelist(admin_client: Client) -> None:
    criterion = AcceptanceCriterion.objects.create(key="AC-001", description="d")
    admin_client.post(reverse("admin:sessions_app_acceptancecriterion_changelist"),
                      {"action": "mark_passing", "_selected_action": [criterion.pk]})
    criterion.refresh_from_db()
    assert criterion.passes and criterion.verified_at is not None and criterion.verification_method == "manual"
    running = LoopRun.objects.create(session=devteam_session(), task="t")
    admin_client.post(reverse("admin:sessions_app_looprun_changelist"),
                      {"action": "stop_runs", "_selected_action": [running.pk]})
    running.refresh_from_db()
    assert running.status == "stopped" and running.ended_at is not None


def test_it_shows_a_threshold_error_on_the_budget_form(admin_client: Client) -> None:
    response = admin_client.post(reverse("admin:sessions_app_contextbudget_add"), {
        "session": devteam_session().pk, "model": "opus", "context_limit": 100, "current_usage": 0,
        "warn_threshold": 90, "summarize_threshold": 80})
    assert response.status_code == 200
    assert "exceeds summarize_threshold" in response.content.decode()


def test_every_devteam_change_page_renders(admin_client: Client) -> None:
    devteam_rows("shown")
    AcceptanceCriterion.objects.create(key="AC-001", description="d")
    Feature.objects.create(key="FEAT-001", name="n", steps=[{"step": "s", "passes": True}])
    for model in [*SESSION_CASCADED_MODELS, AcceptanceCriterion, Feature]:
        opts = model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[model.objects.get().pk])
        assert admin_client.get(url).status_code == 200, model.__name__
