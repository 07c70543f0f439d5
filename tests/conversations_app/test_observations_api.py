"""Observations: the optional loop run and iteration links stay inside the observation's session."""

import pytest
from rest_framework.test import APIClient

from conversations_app.models import Observation
from sessions_app.models import Iteration, LoopRun, Session
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db

OBSERVATIONS = "/api/v1/observations/"


@pytest.fixture
def other_session(db) -> Session:
    return Session.objects.create(key="other-session", user_request="elsewhere")


def test_it_links_an_observation_to_a_loop_run_and_iteration_of_its_session(api: APIClient, session) -> None:
    loop_run = LoopRun.objects.create(session=session, task="fix the parser")
    iteration = Iteration.objects.create(session=session, number=1)
    body = {"session": session.pk, "type": "success", "content": "tests green", "loop_run": loop_run.pk,
            "iteration": iteration.pk}
    created = api.post(OBSERVATIONS, body, format="json")
    assert created.status_code == 201, created.content
    assert (created.json()["loop_run"], created.json()["iteration"]) == (loop_run.pk, iteration.pk)
    assert [o["id"] for o in api.get(OBSERVATIONS, {"loop_run": loop_run.pk}).json()["results"]] == [
        created.json()["id"]]


def test_it_refuses_a_link_into_another_session(api: APIClient, session, other_session) -> None:
    foreign = LoopRun.objects.create(session=other_session, task="elsewhere")
    body = assert_error_shape(api.post(OBSERVATIONS, {"session": session.pk, "type": "note", "content": "x",
                                                      "loop_run": foreign.pk}, format="json"),
                              400, "validation_error")
    assert other_session.pk in body["details"]["loop_run"][0]
    assert not Observation.objects.exists()


def test_it_refuses_moving_an_observation_away_from_its_links(api: APIClient, session, other_session) -> None:
    iteration = Iteration.objects.create(session=session, number=1)
    observation = Observation.objects.create(session=session, type="note", content="x", iteration=iteration)
    url = f"{OBSERVATIONS}{observation.pk}/"
    body = assert_error_shape(api.patch(url, {"session": other_session.pk}, format="json"), 400,
                              "validation_error")
    assert "iteration" in body["details"]
    assert Observation.objects.get(pk=observation.pk).session_id == session.pk
    moved = api.patch(url, {"session": other_session.pk, "iteration": None}, format="json")
    assert moved.status_code == 200 and moved.json()["session"] == other_session.pk
