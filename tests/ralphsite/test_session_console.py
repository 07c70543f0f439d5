"""The session console: its header, panels, buttons (each the API's verb), live feed and History."""

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from conversations_app.models import Chat
from ledger_app.models import LedgerEvent, TokenUsage
from sessions_app.models import OrchestratorState, Question, Session, SessionStatus, Signal, Task, TaskAttempt
from tests.ralphsite.test_console_actions import act, recorded
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db


def console(session: Session) -> str:
    return reverse("admin:sessions_app_session_change", args=[session.pk])


def busy_session(key: str = "busy", tasks: int = 3) -> Session:
    session = make_session(key=key, project_path="/srv/widgets", current_agent="exec-a", current_task_key="task-1")
    previous = None
    for n in range(tasks):
        previous = make_task(session, f"task-{n}", depends_on=(previous,) if previous else (),
                             status="failed" if n == 0 else "not_started", status_annotation="tests red")
        TaskAttempt.objects.create(task=previous, session=session, attempt_number=1, review_verdict="failed",
                                   review_report=f"review of {n} failed")
        Question.objects.create(session=session, key=f"Q-{n}", category="technical", text=f"question {n}?")
        Signal.objects.create(session=session, type="steer", message=f"hint {n}")
        LedgerEvent.objects.create(session=session, type="x-probe", message=f"event {n}")
        TokenUsage.objects.create(session=session, model="opus", input_tokens=10, cost_usd="0.5")
        Chat.objects.create(title=f"chat {n}", session=session)
    return session


def test_the_session_page_is_its_console(admin_client: Client) -> None:
    session = busy_session()
    html = admin_client.get(console(session)).content.decode()
    for expected in ("busy", "/srv/widgets", 'data-live="status"', "Recent failures", "tests red",
                     "review of 1 failed", "Open questions (3)", "question 2?", "Signals not yet polled (3)",
                     "hint 0", "Live activity", "event 2", "Cost by model", "opus", "chat 1",
                     "waits for failed task-0", 'data-action="pause"', 'data-action="steer"', 'data-action="stop"',
                     'data-action="finish"', "ledger_app/live_feed.js"):
        assert expected in html, expected
    assert 'style="' not in html and "<style" not in html  # a strict Content-Security-Policy holds


def test_times_under_a_minute_old_read_just_now(admin_client: Client) -> None:
    session = busy_session()
    html = admin_client.get(console(session)).content.decode()
    assert "0 minutes" not in html and html.count("just now") >= 3  # last activity, started, a question asked
    feed = admin_client.get(reverse("admin:ledger_app_ledgerevent_feed"), {"session": session.pk, "after": 0})
    assert feed.json()["session"]["activity"] == "just now"
    assert "just now" in admin_client.get(reverse("admin:sessions_app_session_changelist")).content.decode()


def test_the_console_costs_the_same_queries_for_a_small_or_a_busy_session(admin_client: Client) -> None:
    def queries(session: Session) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(console(session)).status_code == 200
        return len(captured)

    assert queries(busy_session("small", tasks=1)) == queries(busy_session("large", tasks=12))


def test_the_raw_record_is_edited_behind_a_link_with_status_and_state_read_only(admin_client: Client) -> None:
    session = make_session(key="raw")
    edit = reverse("admin:sessions_app_session_edit", args=[session.pk])
    html = admin_client.get(edit).content.decode()
    assert 'id="id_key"' in html and 'id="id_status"' not in html and 'id="id_state"' not in html
    form = {"key": "renamed", "user_request": "", "project_path": "", "current_iteration": 1,
            "default_model": "gpt-5", "max_concurrency": 2, "max_iterations": 10, "consecutive_failures": 0,
            "max_consecutive_failures": 5, "circuit_breaker_state": "closed", "execution_mode": "normal",
            "config": "{}", "started_at_0": "2026-01-01", "started_at_1": "00:00:00", "status": "failed",
            "state": "stopped",
            **{f"{prefix}-{name}": value for prefix in ("iterations", "tasks", "questions", "signals")
               for name, value in (("TOTAL_FORMS", 0), ("INITIAL_FORMS", 0))}}
    response = admin_client.post(edit, form)
    assert response.status_code == 302, response.content.decode()[:3000]
    session.refresh_from_db()
    assert (session.key, session.status, session.state) == ("renamed", "running", "initializing")


@pytest.mark.parametrize(("button", "inputs", "api_path", "api_body"), [
    ("pause", {}, "/api/v1/signals/", {"type": "pause", "message": ""}),
    ("stop", {}, "/api/v1/signals/", {"type": "stop", "message": ""}),
    ("steer", {"message": "prefer small PRs"}, "/api/v1/signals/", {"type": "steer", "message": "prefer small PRs"}),
    ("finish", {"status": "stopped", "exit_reason": "operator"}, "/api/v1/sessions/{id}/finish/",
     {"status": "stopped", "exit_reason": "operator"}),
])
def test_each_button_writes_what_the_api_writes(admin_client: Client, api: APIClient, button: str,
                                               inputs: dict[str, str], api_path: str, api_body: dict[str, Any]) -> None:
    through_api, through_admin = make_session(key="api"), make_session(key="admin")
    body = {**api_body, "session": through_api.pk} if "{id}" not in api_path else api_body
    assert api.post(api_path.format(id=through_api.pk), body, format="json").status_code in (200, 201)
    response = act(admin_client, through_admin, button, next=console(through_admin), **inputs)
    assert response.status_code == 302 and response.url == console(through_admin)
    assert recorded(through_admin) == recorded(through_api) != []
    through_api.refresh_from_db()
    through_admin.refresh_from_db()
    assert (through_admin.status, through_admin.exit_reason) == (through_api.status, through_api.exit_reason)
    assert list(Signal.objects.filter(session=through_admin).values_list("type", "message")) == list(
        Signal.objects.filter(session=through_api).values_list("type", "message"))


def test_a_paused_loop_offers_continue_instead_of_pause(admin_client: Client) -> None:
    session = make_session(key="paused", state=OrchestratorState.PAUSED)
    html = admin_client.get(console(session)).content.decode()
    assert 'data-action="continue"' in html and 'data-action="pause"' not in html
    assert act(admin_client, session, "continue").status_code == 302
    assert list(Signal.objects.filter(session=session).values_list("type", "message")) == [("resume", "")]
    running = admin_client.get(console(make_session(key="running"))).content.decode()
    assert 'data-action="pause"' in running and 'data-action="continue"' not in running


def test_a_pause_held_by_its_signal_offers_continue_until_a_resume(admin_client: Client) -> None:
    """Issue #27 §4: a Pause holds until a resume signal, whatever the orchestrator's state says."""
    session = make_session(key="held")
    assert act(admin_client, session, "pause").status_code == 302
    Signal.objects.create(session=session, type="info", message="CI is green")
    assert 'data-action="continue"' in admin_client.get(console(session)).content.decode()
    assert act(admin_client, session, "continue").status_code == 302
    assert 'data-action="pause"' in admin_client.get(console(session)).content.decode()


def test_a_finished_session_reads_ended_not_live(admin_client: Client) -> None:
    session = make_session(key="done", status=SessionStatus.COMPLETED)
    html = admin_client.get(console(session)).content.decode()
    assert 'rc-live rc-ended" data-live="indicator"' in html and ">ended</span>" in html
    feed = admin_client.get(reverse("admin:ledger_app_ledgerevent_feed"), {"session": session.pk, "after": 0})
    assert feed.json()["session"]["finished"] is True
    assert ">live</span>" in admin_client.get(console(make_session(key="on"))).content.decode()


def test_resume_writes_what_the_api_writes(admin_client: Client, api: APIClient) -> None:
    through_api = make_session(key="api", status=SessionStatus.FAILED)
    through_admin = make_session(key="admin", status=SessionStatus.FAILED)
    assert api.post(f"/api/v1/sessions/{through_api.pk}/resume/", {}, format="json").status_code == 200
    assert 'data-action="resume"' in admin_client.get(console(through_admin)).content.decode()
    assert act(admin_client, through_admin, "resume").status_code == 302
    through_admin.refresh_from_db()
    assert through_admin.status == SessionStatus.RUNNING
    assert recorded(through_admin) == recorded(through_api)


def test_steer_needs_a_message_and_finish_a_final_status(admin_client: Client) -> None:
    session = make_session()
    act(admin_client, session, "steer", message="")
    act(admin_client, session, "finish", status="running")
    assert not Signal.objects.exists() and not LedgerEvent.objects.exists()
    session.refresh_from_db()
    assert session.status == SessionStatus.RUNNING


def test_a_question_is_answered_from_the_console(admin_client: Client) -> None:
    session = busy_session(tasks=1)
    question = Question.objects.get(session=session)
    response = act(admin_client, question, "answer", answer="Use PostgreSQL", next=console(session))
    assert response.status_code == 302 and response.url == console(session)
    question.refresh_from_db()
    assert (question.status, question.answer) == ("answered", "Use PostgreSQL")
    assert "Open questions (0)" in admin_client.get(console(session)).content.decode()


# -- the live feed ------------------------------------------------------------------------------

def feed(client: Client, session: Session, after: Any) -> Any:
    return client.get(reverse("admin:ledger_app_ledgerevent_feed"), {"session": session.pk, "after": after})


def test_the_feed_answers_the_events_after_the_last_one_shown(admin_client: Client, api: APIClient) -> None:
    session = make_session(key="live", current_task_key="task-9")
    first = LedgerEvent.objects.create(session=session, type="x-probe", message="before")
    answer = feed(admin_client, session, first.id).json()
    assert answer["events"] == [] and answer["last_id"] == first.id
    assert api.post("/api/v1/events/", {"session": session.pk, "type": "task_failed", "task_key": "task-9",
                                        "agent": "exec-a", "message": "boom"}, format="json").status_code == 201
    answer = feed(admin_client, session, first.id).json()
    [event] = answer["events"]
    assert (event["type"], event["task_key"], event["agent"], event["message"], event["failed"]) == (
        "task_failed", "task-9", "exec-a", "boom", True)
    assert answer["last_id"] == event["id"] and answer["more"] is False
    assert answer["session"]["status"] == "running" and answer["session"]["task"] == "task-9"


def test_the_feed_reads_one_index_range_whatever_the_ledger_holds(admin_client: Client) -> None:
    session, other = make_session(key="mine"), make_session(key="other")
    LedgerEvent.objects.bulk_create(LedgerEvent(session=s, type="x-probe") for s in (session, other) * 150)
    with CaptureQueriesContext(connection) as queries:
        answer = feed(admin_client, session, 0).json()
    assert len(answer["events"]) == 100 and answer["more"] is True
    reads = [q["sql"] for q in queries if "ledger_app_ledgerevent" in q["sql"]]
    assert len(reads) == 1 and "LIMIT 100" in reads[0]


@pytest.mark.parametrize("after", ["", "x", "-1", "9" * 30])
def test_the_feed_refuses_bad_parameters(admin_client: Client, after: str) -> None:
    assert feed(admin_client, make_session(), after).status_code == 400
    assert admin_client.get(reverse("admin:ledger_app_ledgerevent_feed"), {"after": 0}).status_code == 400


def test_the_feed_is_for_people_logged_in(client: Client) -> None:
    response = feed(client, make_session(), 0)
    assert response.status_code == 302 and "/admin/login/" in response.url


# -- History -----------------------------------------------------------------------------------

def test_history_shows_the_ledger_events_newest_first(admin_client: Client) -> None:
    session = make_session(key="hist")
    task = make_task(session, "task-1")
    events = [LedgerEvent.objects.create(session=session, type="x-probe", task_key="task-1" if n % 2 else "",
                                         message=f"event {n}") for n in range(60)]
    response = admin_client.get(reverse("admin:sessions_app_session_history", args=[session.pk]), follow=True)
    page = response.context["cl"]
    assert [e.id for e in page.result_list] == [e.id for e in reversed(events)][:50]  # newest first, paginated
    assert "History of session hist" in response.content.decode()
    response = admin_client.get(reverse("admin:sessions_app_task_history", args=[task.pk]), follow=True)
    assert [e.message for e in response.context["cl"].result_list][:2] == ["event 59", "event 57"]
    assert "History of session hist, task task-1" in response.content.decode()
    assert Task.objects.count() == 1
