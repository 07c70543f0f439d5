"""A token bound to an agent acts as that agent on every write that names one (#16 §1)."""

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent
from ralphsite.core.models import ApiToken, TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import AgentInvocation, Session
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def session() -> Session:
    return make_session(key="run-1")


@pytest.fixture
def agent(user, session: Session) -> APIClient:
    minted = api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk, agent="exec-1")
    ApiToken.objects.update(last_used_at=timezone.now())
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.secret}")


def test_claims_events_and_invocations_are_made_as_the_tokens_agent(agent: APIClient, session: Session) -> None:
    make_task(session, "task-1")
    claimed = agent.post(f"/api/v1/sessions/{session.pk}/claim-task/", {}, format="json")
    assert claimed.status_code == 200 and claimed.json()["claimed_by"] == "exec-1"
    event = agent.post("/api/v1/events/", {"session": session.pk, "type": "x-note", "message": "hi"}, format="json")
    assert event.status_code == 201, event.content
    bulk = agent.post("/api/v1/events/", [{"session": session.pk, "type": "x-note"}] * 2, format="json")
    assert bulk.status_code == 201, bulk.content
    assert set(LedgerEvent.objects.filter(type="x-note").values_list("agent", flat=True)) == {"exec-1"}
    invocation = agent.post("/api/v1/agent-invocations/", {"session": session.pk}, format="json")
    assert invocation.status_code == 201, invocation.content
    assert AgentInvocation.objects.get(pk=invocation.json()["id"]).agent == "exec-1"


def test_another_agent_name_in_a_body_is_a_409(agent: APIClient, session: Session) -> None:
    make_task(session, "task-1")
    for path, body in ((f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "exec-2"}),
                       ("/api/v1/events/", {"session": session.pk, "type": "x-note", "agent": "exec-2"}),
                       ("/api/v1/agent-invocations/", {"session": session.pk, "agent": "exec-2"})):
        assert_error_shape(agent.post(path, body, format="json"), 409, "agent_mismatch")
    invocation = AgentInvocation.objects.create(session=session, agent="exec-1")
    assert_error_shape(agent.patch(f"/api/v1/agent-invocations/{invocation.pk}/", {"agent": "exec-2"},
                                   format="json"), 409, "agent_mismatch")
    assert not LedgerEvent.objects.filter(agent="exec-2").exists()
