"""Interviews and their questions: server-assigned sequences, the answer action, counters kept equal."""

from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from sessions_app.models import Interview
from tests.api_mixins import assert_error_shape
from tests.sessions_app.devteam_factories import devteam_interview, devteam_session

pytestmark = pytest.mark.django_db

QUESTIONS = reverse("interviewquestion-list")


def _ask(api: APIClient, interview: Interview, key: str, **fields: Any) -> dict[str, Any]:
    response = api.post(QUESTIONS, {"interview": interview.pk, "question_key": key,
                                    "question_text": f"{key}?", **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _counters(interview: Interview) -> tuple[int, int]:
    interview.refresh_from_db()
    return interview.questions_asked, interview.questions_answered


def test_it_numbers_questions_per_interview_and_refuses_a_client_sequence(api: APIClient) -> None:
    first, second = devteam_interview(), devteam_interview()
    refused = api.post(QUESTIONS, {"interview": first.pk, "question_key": "a", "question_text": "a?", "sequence": 42},
                       format="json")
    assert "sequence" in assert_error_shape(refused, 400, "validation_error")["details"]
    assert [_ask(api, first, key)["sequence"] for key in ("a", "b", "c")] == [1, 2, 3]
    assert _ask(api, second, "a")["sequence"] == 1
    rows = api.get(QUESTIONS, {"interview": first.pk, "ordering": "-sequence"}).json()["results"]
    assert [row["question_key"] for row in rows] == ["c", "b", "a"]


def test_it_keeps_the_counters_equal_to_the_question_rows(api: APIClient) -> None:
    interview = devteam_interview()
    first = _ask(api, interview, "expected_behavior")
    second = _ask(api, interview, "repro_steps", response="click twice")
    assert second["responded_at"] is not None
    assert _counters(interview) == (2, 1)
    answered = api.post(reverse("interviewquestion-answer", args=[first["id"]]), {"response": "no crash"},
                        format="json").json()
    assert answered["response"] == "no crash" and answered["responded_at"] is not None
    assert _counters(interview) == (2, 2)
    cleared = api.patch(reverse("interviewquestion-detail", args=[second["id"]]), {"response": ""},
                        format="json").json()
    assert cleared["responded_at"] is None
    assert _counters(interview) == (2, 1)
    assert api.delete(reverse("interviewquestion-detail", args=[first["id"]])).status_code == 204
    assert _counters(interview) == (1, 0)
    body = api.get(reverse("interview-detail", args=[interview.pk])).json()
    assert (body["questions_asked"], body["questions_answered"]) == (1, 0)


def test_it_does_not_let_clients_write_the_counters(api: APIClient) -> None:
    response = api.post(reverse("interview-list"), {"session": devteam_session().pk, "interview_type": "task",
                                                    "questions_asked": 7}, format="json")
    assert "questions_asked" in assert_error_shape(response, 400, "validation_error")["details"]


def test_it_refuses_bad_answers_and_moves(api: APIClient) -> None:
    interview = devteam_interview()
    question = _ask(api, interview, "a")
    answer = reverse("interviewquestion-answer", args=[question["id"]])
    assert "response" in assert_error_shape(api.post(answer, {"response": ""}, format="json"), 400,
                                            "validation_error")["details"]
    assert_error_shape(api.post(answer, {"response": "x", "by": "me"}, format="json"), 400, "validation_error")
    missing = reverse("interviewquestion-answer", args=["01ARZ3NDEKTSV4RRFFQ69G5FAV"])
    assert_error_shape(api.post(missing, {"response": "x"}, format="json"), 404, "not_found")
    moved = api.patch(reverse("interviewquestion-detail", args=[question["id"]]),
                      {"interview": devteam_interview().pk}, format="json")
    assert "interview" in assert_error_shape(moved, 400, "validation_error")["details"]
    unknown = api.post(QUESTIONS, {"interview": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "question_key": "k",
                                   "question_text": "t"}, format="json")
    assert "interview" in assert_error_shape(unknown, 400, "validation_error")["details"]


def test_it_rejects_bad_interview_enums_naming_the_allowed_values(api: APIClient) -> None:
    response = api.post(reverse("interview-list"), {"session": devteam_session().pk, "interview_type": "chat"},
                        format="json")
    assert "feature" in assert_error_shape(response, 400, "validation_error")["details"]["interview_type"][0]
    response = api.post(QUESTIONS, {"interview": devteam_interview().pk, "question_key": "k", "question_text": "t",
                                    "question_type": "essay"}, format="json")
    assert "confirm" in assert_error_shape(response, 400, "validation_error")["details"]["question_type"][0]


def test_it_stamps_completed_at_and_filters_interviews(api: APIClient) -> None:
    interviews = reverse("interview-list")
    session = devteam_session()
    interview = api.post(interviews, {"session": session.pk, "interview_type": "bug"}, format="json").json()
    assert interview["status"] == "in_progress" and interview["completed_at"] is None
    done = api.patch(reverse("interview-detail", args=[interview["id"]]), {"status": "completed"},
                     format="json").json()
    assert done["completed_at"] is not None
    api.post(interviews, {"session": session.pk, "interview_type": "feature"}, format="json")
    rows = api.get(interviews, {"session": session.pk, "status": "completed"}).json()["results"]
    assert [row["interview_type"] for row in rows] == ["bug"]
    assert len(api.get(interviews, {"interview_type": ["bug", "feature"]}).json()["results"]) == 2


def test_it_filters_questions_by_session_and_key(api: APIClient) -> None:
    mine, theirs = devteam_interview("mine"), devteam_interview("theirs")
    _ask(api, mine, "repro_steps")
    _ask(api, mine, "expected_behavior")
    _ask(api, theirs, "repro_steps")
    rows = api.get(QUESTIONS, {"session": mine.session_id, "question_key": "repro_steps"}).json()["results"]
    assert [row["interview"] for row in rows] == [mine.pk]
