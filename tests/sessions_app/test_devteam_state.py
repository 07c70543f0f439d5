"""Session state (DevTeam's key/value store): the one-call upsert, reads by key, and its errors."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from sessions_app.models import SessionStateEntry
from tests.api_mixins import assert_error_shape
from tests.sessions_app.devteam_factories import devteam_session

pytestmark = pytest.mark.django_db

SET = reverse("sessionstateentry-set-value")
STATE = reverse("sessionstateentry-list")


def test_it_creates_then_replaces_a_key_in_one_call(api: APIClient) -> None:
    session = devteam_session()
    first = api.post(SET, {"session": session.pk, "key": "current_phase", "value": "planning"}, format="json")
    assert first.status_code == 201, first.content
    second = api.post(SET, {"session": session.pk, "key": "current_phase", "value": {"phase": "executing"}},
                      format="json")
    assert second.status_code == 200, second.content
    assert second.json()["id"] == first.json()["id"]
    assert second.json()["value"] == {"phase": "executing"}
    assert SessionStateEntry.objects.get().value == {"phase": "executing"}


def test_it_reads_one_key_with_filters(api: APIClient) -> None:
    session, other = devteam_session("a"), devteam_session("b")
    for owner in (session, other):
        api.post(SET, {"session": owner.pk, "key": "phase", "value": owner.key}, format="json")
    api.post(SET, {"session": session.pk, "key": "agent", "value": "x"}, format="json")
    results = api.get(STATE, {"session": session.pk, "key": "phase"}).json()["results"]
    assert [row["value"] for row in results] == ["a"]


def test_it_refuses_an_unknown_session_a_missing_value_and_unknown_keys(api: APIClient) -> None:
    body = assert_error_shape(api.post(SET, {"session": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "key": "k", "value": 1},
                                       format="json"), 400, "validation_error")
    assert "session" in body["details"]
    body = assert_error_shape(api.post(SET, {"session": devteam_session().pk, "key": "k"}, format="json"),
                              400, "validation_error")
    assert "value" in body["details"]
    body = assert_error_shape(api.post(SET, {"session": devteam_session().pk, "key": "k", "value": 1,
                                             "valeu": 2}, format="json"), 400, "validation_error")
    assert body["details"] == {"valeu": ["Unknown field; allowed: key, session, value."]}


def test_it_answers_a_duplicate_create_with_409(api: APIClient) -> None:
    payload = {"session": devteam_session().pk, "key": "k", "value": 1}
    assert api.post(STATE, payload, format="json").status_code == 201
    assert_error_shape(api.post(STATE, payload, format="json"), 409, "conflict")


def test_it_rejects_malformed_json(api: APIClient) -> None:
    response = api.generic("POST", SET, '{"session": ', content_type="application/json")
    assert_error_shape(response, 400, "parse_error")


def test_it_filters_phases_and_progress_summaries_by_session(api: APIClient) -> None:
    session, other = devteam_session("a"), devteam_session("b")
    for owner in (session, other):
        api.post(reverse("sessionphase-list"), {"session": owner.pk, "phase_type": "coding"}, format="json")
        api.post(reverse("progresssummary-list"), {"session": owner.pk, "summary_text": owner.key},
                 format="json")
    phases = api.get(reverse("sessionphase-list"), {"session": session.pk, "phase_type": "coding"}).json()
    assert [row["session"] for row in phases["results"]] == [session.pk]
    summaries = api.get(reverse("progresssummary-list"), {"session": other.pk}).json()["results"]
    assert [row["summary_text"] for row in summaries] == ["b"]


def test_it_rejects_a_bad_phase_type_naming_the_allowed_values(api: APIClient) -> None:
    response = api.post(reverse("sessionphase-list"), {"session": devteam_session().pk, "phase_type": "dance"},
                        format="json")
    message = assert_error_shape(response, 400, "validation_error")["details"]["phase_type"][0]
    assert "initializer" in message and "coding" in message and "resume" in message


def test_increment_counts_one_more_iteration_or_failure(api: APIClient) -> None:
    session = devteam_session()
    increment = f"/api/v1/sessions/{session.pk}/increment/"
    answers = [api.post(increment, {"counter": counter}, format="json")
               for counter in ("current_iteration", "consecutive_failures", "consecutive_failures")]
    assert [answer.status_code for answer in answers] == [200] * 3
    assert (answers[-1].json()["current_iteration"], answers[-1].json()["consecutive_failures"]) == (2, 2)
    assert session.iterations.filter(number=2).exists()  # the new iteration has its row
    assert_error_shape(api.post(increment, {"counter": "total_tokens_input"}, format="json"), 400, "validation_error")
    api.post(f"/api/v1/sessions/{session.pk}/finish/", {"status": "completed"}, format="json")
    assert_error_shape(api.post(increment, {"counter": "consecutive_failures"}, format="json"), 409,
                       "session_finished")
