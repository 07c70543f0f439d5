"""One set of limits, every door (issue #26 §3): the text limit the API states (`TEXT_MAX_CHARS`) is model
validation in the services (`stored_values_check`), so the admin's forms and actions, the MCP tools and
the CLI (over the API) refuse what REST refuses, with the same message."""

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from rest_framework.test import APIClient

from ralphsite.core.api.fields import TEXT_MAX_CHARS
from ralphsite.core.errors import InvalidInput
from ralphsite.core.writes import writes_for
from sessions_app.models import Session, Signal
from tests.api_mixins import assert_error_shape
from tests.ralphsite.test_console_actions import act, make_question

pytestmark = pytest.mark.django_db
TOO_LONG = "a" * (TEXT_MAX_CHARS + 1)
MESSAGE = f"Ensure this field has no more than {TEXT_MAX_CHARS} characters."


@pytest.fixture
def session(db) -> Session:
    return Session.objects.create(key="limits", user_request="limits")


def _notes(response: Any) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def test_an_answer_over_the_limit_is_refused_by_rest_and_the_admin_alike(api: APIClient, admin_client: Client,
                                                                         session: Session) -> None:
    question = make_question(session)
    rest = assert_error_shape(api.post(f"/api/v1/questions/{question.pk}/answer/", {"answer": TOO_LONG},
                                       format="json"), 400, "validation_error")
    assert rest["details"]["answer"] == [MESSAGE]
    response = act(admin_client, question, "answer", answer=TOO_LONG)
    assert f"answer: {MESSAGE}" in " ".join(_notes(response))
    question.refresh_from_db()
    assert question.answer == "" and question.status != "answered"


def test_a_steer_message_over_the_limit_is_refused_by_rest_and_the_service_the_admin_calls(
        api: APIClient, session: Session) -> None:
    body = {"session": session.pk, "type": "steer", "message": TOO_LONG}
    rest = assert_error_shape(api.post("/api/v1/signals/", body, format="json"), 400, "validation_error")
    assert rest["details"]["message"] == [MESSAGE]
    with pytest.raises(InvalidInput) as refused:
        writes_for(Signal).create({"session": session, "type": "steer", "message": TOO_LONG})
    assert refused.value.details == {"message": [MESSAGE]}
    assert not Signal.objects.filter(session=session).exists()
