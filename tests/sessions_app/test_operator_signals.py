"""Operator signals are obeyed or visibly not, and every answer and signal keeps its author (issue #27 §2-§4):
who answered a question and who sent a signal come from the token (its agent, or its owner and name) or the
admin's person, on every door; a session ending with a signal not yet polled expires it with the reason, in
the ledger and the API; a Pause holds until a resume signal, whatever else is sent."""

import json
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent
from ralphsite.core.models import TokenScope
from ralphsite.tokens.services import MintedToken, api_token_create
from sessions_app.models import Question, Session, Signal
from tests.api_mixins import assert_error_shape
from tests.cli.conftest import RalphRunner, ralph, ralph_env  # noqa: F401 (the CLI tests' fixtures)
from tests.mcp.conftest import mcp_agent
from tests.sessions_app.factories import make_session, make_task


def token_client(secret: str) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {secret}")


def agent_token(user: Any, session: Session, agent: str = "exec-1") -> MintedToken:
    return api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk, agent=agent)


def named(token: MintedToken) -> str:
    """What an unbound token's writes are recorded as: its owner and its name."""
    return f"agent (token {token.token.label or token.token.prefix})"


def ask(session: Session, key: str = "Q-TECH-001") -> Question:
    return Question.objects.create(session=session, key=key, category="technical", text="Which database?")


def events_of(session: Session, event_type: str) -> list[LedgerEvent]:
    return list(LedgerEvent.objects.filter(session_id=session.pk, type=event_type).order_by("id"))


def claim(client: APIClient, session: Session) -> Any:
    return client.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "exec-1"}, format="json")


# -- who answered, who sent: REST ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_answer_by_key_records_the_tokens_agent_not_the_body_and_keeps_the_first(user: Any) -> None:
    session = make_session(key="run-1")
    ask(session)
    client = token_client(agent_token(user, session, agent="questioner").secret)
    answered = client.post("/api/v1/sessions/run-1/questions/Q-TECH-001/answer/",
                           {"answer": "PostgreSQL", "answer_confidence": "high"}, format="json")
    assert answered.status_code == 200, answered.content
    body = answered.json()
    assert (body["answer"], body["answered_by"], body["answer_source"]) == ("PostgreSQL", "questioner", "questioner")
    again = client.post("/api/v1/sessions/run-1/questions/Q-TECH-001/answer/", {"answer": "SQLite"}, format="json")
    assert (again.status_code, again.json()["code"]) == (409, "already_answered")
    event = events_of(session, "question_answered")[0]
    assert (event.agent, event.data["answered_by"]) == ("questioner", "questioner")


@pytest.mark.django_db
def test_an_unbound_tokens_answer_and_signal_name_its_owner_and_token(api: APIClient, token: MintedToken) -> None:
    session = make_session(key="run-1")
    question = ask(session)
    answered = api.post(f"/api/v1/questions/{question.pk}/answer/",
                        {"answer": "PostgreSQL", "answer_source": "ADR-7", "agent": "someone-else"}, format="json")
    assert (answered.json()["answered_by"], answered.json()["answer_source"]) == (named(token), "ADR-7")
    sent = api.post("/api/v1/signals/", {"session": session.pk, "type": "stop", "message": "halt"}, format="json")
    assert sent.status_code == 201, sent.content
    assert sent.json()["sent_by"] == named(token)
    event = events_of(session, "signal_sent")[0]
    assert (event.agent, event.data["sent_by"]) == (named(token), named(token))


@pytest.mark.django_db
def test_a_patch_that_answers_records_who_answered_as_answer_does(api: APIClient, token: MintedToken) -> None:
    session = make_session()
    question = ask(session)
    patched = api.patch(f"/api/v1/questions/{question.pk}/", {"status": "answered", "answer": "PostgreSQL"},
                        format="json")
    assert patched.status_code == 200, patched.content
    assert (patched.json()["answered_by"], patched.json()["answer"]) == (named(token), "PostgreSQL")
    assert patched.json()["answered_at"] is not None
    assert events_of(session, "question_answered")[0].data["answered_by"] == named(token)


@pytest.mark.django_db
def test_the_sender_is_not_written_by_the_body(api: APIClient) -> None:
    session = make_session()
    sent = api.post("/api/v1/signals/", {"session": session.pk, "type": "info", "sent_by": "the boss"}, format="json")
    assert list(assert_error_shape(sent, 400, "validation_error")["details"]) == ["sent_by"]
    assert not Signal.objects.exists()


@pytest.mark.django_db
def test_questions_by_key_stay_within_their_session_and_the_tokens_scope(user: Any, api: APIClient) -> None:
    mine, other = make_session(key="run-1"), make_session(key="run-2")
    ask(mine)
    ask(other, "Q-REQ-002")
    assert api.get("/api/v1/sessions/run-1/questions/Q-TECH-001/").json()["session"] == mine.pk
    assert api.get("/api/v1/sessions/run-1/questions/Q-REQ-002/").status_code == 404
    scoped = token_client(agent_token(user, mine).secret)
    assert scoped.get("/api/v1/sessions/run-2/questions/Q-REQ-002/").status_code == 404
    assert scoped.post("/api/v1/sessions/run-2/questions/Q-REQ-002/answer/", {"answer": "no"},
                       format="json").status_code == 404
    assert Question.objects.get(session=other).answer == ""


# -- who answered, who sent: the admin ----------------------------------------------------------------------


@pytest.mark.django_db
def test_the_admins_answer_and_signals_name_the_person(admin_client: Any, admin_user: Any) -> None:
    session = make_session()
    question = ask(session)
    admin_client.post(reverse("admin:sessions_app_question_act", args=[question.pk, "answer"]),
                      {"answer": "PostgreSQL"})
    question.refresh_from_db()
    person = f"admin:{admin_user.get_username()}"
    assert (question.status, question.answered_by, question.answer_source) == ("answered", person, person)
    admin_client.post(reverse("admin:sessions_app_session_act", args=[session.pk, "pause"]))
    admin_client.post(reverse("admin:sessions_app_signal_add"), {"session": session.pk, "type": "info",
                                                                 "message": "hello", "sent_at_0": "2026-01-01",
                                                                 "sent_at_1": "10:00:00"})
    assert sorted(Signal.objects.values_list("type", "sent_by")) == [("info", person), ("pause", person)]
    page = admin_client.get(reverse("admin:sessions_app_signal_changelist"))
    assert person in page.content.decode()


# -- a session never ends with an operator's signal silently unpolled ----------------------------------------


@pytest.mark.django_db
def test_ending_a_session_expires_its_unpolled_signals_with_the_reason(api: APIClient, user: Any) -> None:
    session = make_session(key="run-1")
    make_task(session, "task-1")
    stop = api.post("/api/v1/signals/", {"session": session.pk, "type": "stop"}, format="json").json()
    finished = api.post(f"/api/v1/sessions/{session.pk}/finish/",
                        {"status": "completed", "exit_reason": "all_tasks_done"}, format="json")
    assert finished.status_code == 200, finished.content
    shown = api.get(f"/api/v1/signals/{stop['id']}/").json()
    assert (shown["is_processed"], shown["expired_reason"]) == (False, "session completed: all_tasks_done")
    assert shown["expired_at"] is not None
    expired = events_of(session, "signal_expired")
    assert [(event.data["signal"], event.data["type"], event.data["reason"]) for event in expired] == [
        (stop["id"], "stop", "session completed: all_tasks_done")]
    assert api.post(f"/api/v1/sessions/{session.pk}/poll-signal/", {"agent": "o"}, format="json").status_code == 204
    refused = api.patch(f"/api/v1/signals/{stop['id']}/", {"is_processed": True}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (409, "invalid_transition")
    assert refused.json()["details"]["from"] == "expired"


@pytest.mark.django_db
def test_a_transition_that_ends_the_session_expires_its_signals_too(api: APIClient) -> None:
    session = make_session(state="executing_batch")
    api.post("/api/v1/signals/", {"session": session.pk, "type": "pause"}, format="json")
    api.post(f"/api/v1/sessions/{session.pk}/transition/", {"state": "complete", "message": "done"}, format="json")
    assert Signal.objects.get(session=session).expired_reason == "session completed: done"


# -- a Pause holds until a resume signal ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_pause_holds_through_info_and_steer_until_a_resume(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    for kind in ("pause", "info", "steer"):
        api.post("/api/v1/signals/", {"session": session.pk, "type": kind, "message": "CI is green"}, format="json")
    for _ in range(3):  # the orchestrator polls all three: the pause is not undone by the others
        assert api.post(f"/api/v1/sessions/{session.pk}/poll-signal/", {"agent": "o"}, format="json").status_code \
            == 200
    held = claim(api, session)
    assert (held.status_code, held.json()["details"]["reason"]) == (409, "paused")
    resumed = api.post("/api/v1/signals/", {"session": session.pk, "type": "Continue"}, format="json")
    assert resumed.json()["type"] == "resume"  # the console's word for it is taken too
    assert claim(api, session).status_code == 200


@pytest.mark.django_db
def test_a_stop_not_yet_polled_comes_before_a_pause(api: APIClient) -> None:
    session = make_session()
    make_task(session, "task-1")
    api.post("/api/v1/signals/", {"session": session.pk, "type": "pause"}, format="json")
    api.post("/api/v1/signals/", {"session": session.pk, "type": "stop"}, format="json")
    assert claim(api, session).json()["details"]["reason"] == "stop"


# -- the other doors: MCP and the CLI -------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_mcp_records_the_tokens_agent_and_holds_a_pause_until_a_resume(live_server: Any, user: Any) -> None:
    session = make_session(key="run-1")
    make_task(session, "task-1")
    ask(session)
    minted = agent_token(user, session)
    with mcp_agent(f"{live_server.url}/mcp/", minted.secret) as agent:
        assert agent.ok("answer_question", question="Q-TECH-001", answer="PostgreSQL")["answer_source"] == "exec-1"
        agent.ok("create_signal", type="pause")
        assert agent.ok("poll_signal")["signal"]["type"] == "pause"
        agent.ok("create_signal", type="info", message="CI is green")
        assert agent.ok("claim_task")["reason"] == "paused"
        agent.ok("create_signal", type="resume")
        assert agent.ok("claim_task")["task"]["key"] == "task-1"
    assert Question.objects.get(session=session).answered_by == "exec-1"
    assert set(Signal.objects.values_list("sent_by", flat=True)) == {"exec-1"}


@pytest.mark.django_db(transaction=True)
def test_the_cli_sends_as_the_tokens_agent_and_a_paused_claim_says_so(ralph: RalphRunner,  # noqa: F811
                                                                       user: Any) -> None:
    session = make_session(key="loop-1")
    make_task(session, "task-1")
    env = {"RALPH_SESSION": "loop-1", "RALPH_TOKEN": agent_token(user, session).secret}
    assert ralph("signal", "send", "pause", "hold on", **env).status == 0
    held = ralph("--json", "task", "claim", **env)
    assert held.status == 3 and json.loads(held.stderr)["code"] == "paused"
    assert ralph("signal", "send", "resume", "go on", **env).status == 0
    assert ralph("task", "claim", **env).status == 0
    assert set(Signal.objects.values_list("sent_by", flat=True)) == {"exec-1"}
