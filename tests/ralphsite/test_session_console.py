"""The session console: its header, panels, buttons (each the API's verb), live feed and History."""

import re
from datetime import timedelta
from html import unescape
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.http import QueryDict
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from rest_framework.test import APIClient

from conversations_app.models import Chat
from conversations_app.services import message_append, run_create
from ledger_app.models import LedgerEvent, TokenUsage
from sessions_app.models import OrchestratorState, Question, Session, SessionStatus, Signal, Task, TaskAttempt
from sessions_app.services.sessions import session_finish
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
        chat = Chat.objects.create(title=f"chat {n}", session=session)
        # The conversation panel reads the latest run's last messages, however many the run holds.
        run = run_create(data={"chat_id": chat.pk})
        message_append(run_id=run.pk, items=[{"role": "assistant", "content": f"message {m}",
                                              "tool_calls": [{"id": f"call-{m}", "name": "Bash", "arguments": "{}",
                                                             "status": "completed"}]}
                                             for m in range(tasks * 2)])
    return session


def test_the_session_page_is_its_console(admin_client: Client) -> None:
    session = busy_session()
    html = admin_client.get(console(session)).content.decode()
    for expected in ("busy", "/srv/widgets", 'data-live="status"', "Recent failures", "tests red",
                     "review of 1 failed", "Open questions (3)", "question 2?", "Signals not yet polled (3)",
                     "hint 0", "Live activity", "event 2", "Cost by model", "opus", "chat 1",
                     "Conversation", "message 5", "Bash",
                     "waits for failed task-0", 'data-action="pause"', 'data-action="steer"', 'data-action="stop"',
                     'data-action="finish"', "ralphsite/live.js", 'data-live-url="', 'data-region="questions"'):
        assert expected in html, expected
    assert 'style="' not in html and "<style" not in html  # a strict Content-Security-Policy holds


def test_times_under_a_minute_old_read_just_now(admin_client: Client) -> None:
    session = busy_session()
    html = admin_client.get(console(session)).content.decode()
    assert "0 minutes" not in html and html.count("just now") >= 3  # last activity, started, a question asked
    assert 'data-age="ago">just now</time>' in live(admin_client, session).json()["regions"]["header"]
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
    ("stop", {"message": "wrong branch"}, "/api/v1/signals/", {"type": "stop", "message": "wrong branch"}),
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
    assert ">ended</span>" in live(admin_client, session).json()["regions"]["header"]
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


def test_finish_and_stop_ask_first_and_need_a_reason_and_finish_has_no_default_outcome(
        admin_client: Client) -> None:
    session = make_session(key="careful")
    html = admin_client.get(console(session)).content.decode()
    for action in ("stop", "finish"):
        form = html.split(f'data-key="action-{action}"', 1)[1].split(">", 1)[0]
        assert "data-confirm=" in form and "cannot be" in form, action
    finish = html.split('data-key="action-finish"', 1)[1].split("</form>", 1)[0]
    assert '<option value="">final status…</option>' in finish and " required>" in finish
    act(admin_client, session, "finish", status="", exit_reason="done")  # no outcome chosen
    act(admin_client, session, "finish", status="completed", exit_reason="")  # no reason
    act(admin_client, session, "stop", message="")
    session.refresh_from_db()
    assert session.status == SessionStatus.RUNNING and not Signal.objects.exists()
    act(admin_client, session, "finish", status="completed", exit_reason="all tasks reviewed")
    session.refresh_from_db()
    assert (session.status, session.exit_reason) == ("completed", "all tasks reviewed")


def test_a_pending_stop_shows_its_age_and_a_session_that_ended_without_it_says_so(admin_client: Client) -> None:
    session = make_session(key="ignored")
    Signal.objects.create(session=session, type="stop", message="wrong branch")
    header = live(admin_client, session).json()["regions"]["header"]
    assert 'data-pending="stop"' in header and "waiting for the loop's next poll" in header
    assert 'data-age="ago">just now</time>' in header.split('data-pending="stop"', 1)[1]
    session_finish(session=session, status=SessionStatus.FAILED, exit_reason="crashed", agent="orchestrator")
    regions = live(admin_client, session).json()["regions"]  # the stop expired with the session's end
    assert "ended without taking the stop signal" in regions["header"]
    assert "Signals the loop never took (1)" in regions["signals"] and "they were ignored" in regions["signals"]
    dashboard = admin_client.get(reverse("admin:index")).content.decode()
    assert "ended without taking 1 signal an operator sent" in dashboard


def test_resume_says_it_starts_no_process(admin_client: Client) -> None:
    session = make_session(key="stopped", status=SessionStatus.STOPPED, exit_reason="stopped by an operator")
    actions = live(admin_client, session).json()["regions"]["actions"]
    assert "It starts no process" in actions.split('data-key="action-resume"', 1)[1].split(">", 1)[0]
    response = act(admin_client, session, "resume", next=console(session))
    assert "No process was started" in admin_client.get(response.url).content.decode()


def test_failures_lead_to_the_read_only_pages_of_the_task_and_its_attempt(admin_client: Client) -> None:
    session = busy_session(tasks=2)
    failures = live(admin_client, session).json()["regions"]["failures"]
    failed = Task.objects.get(session=session, key="task-0")
    attempt = TaskAttempt.objects.get(task=failed)
    for page in (reverse("admin:sessions_app_task_change", args=[failed.pk]),
                 reverse("admin:sessions_app_taskattempt_change", args=[attempt.pk])):
        assert f'href="{page}"' in failures
        html = admin_client.get(page).content.decode()
        assert "task-0" in html.split("<title>")[1].split("</title>")[0] and 'name="_save"' not in html


def test_open_questions_come_a_page_at_a_time_under_their_true_count(admin_client: Client) -> None:
    session = make_session(key="asking")
    for n in range(12):
        Question.objects.create(session=session, key=f"Q-{n:02}", category="technical", text=f"question {n}?")
    first = live(admin_client, session)
    assert "Open questions (12): 1 to 5" in first.json()["regions"]["questions"]
    for page, shown in (("2", "6 to 10"), ("3", "11 to 12"), ("99", "11 to 12"), ("abc", "1 to 5"), ("-1", "1 to 5")):
        answer = admin_client.get(reverse("admin:sessions_app_session_live", args=[session.pk]), {"questions": page})
        assert f"Open questions (12): {shown}" in answer.json()["regions"]["questions"], page
    # The page is part of the ETag: the second page's poll is not answered 304 with the first page's.
    second = admin_client.get(reverse("admin:sessions_app_session_live", args=[session.pk]), {"questions": "2"},
                              headers={"If-None-Match": first["ETag"]})
    assert second.status_code == 200 and second["ETag"] != first["ETag"]
    page = admin_client.get(console(session), {"questions": "2"}).content.decode()
    assert "live/?questions=2" in page and f'value="{console(session)}?questions=2"' in page


def test_a_question_is_answered_from_the_console(admin_client: Client) -> None:
    session = busy_session(tasks=1)
    question = Question.objects.get(session=session)
    response = act(admin_client, question, "answer", answer="Use PostgreSQL", next=console(session))
    assert response.status_code == 302 and response.url == console(session)
    question.refresh_from_db()
    assert (question.status, question.answer) == ("answered", "Use PostgreSQL")
    assert "Open questions (0)" in admin_client.get(console(session)).content.decode()


# -- the live view: one poll answers every region, 304 while nothing changed -----------------------

def live(client: Client, session: Session, etag: str = "") -> Any:
    headers = {"If-None-Match": etag} if etag else {}
    return client.get(reverse("admin:sessions_app_session_live", args=[session.pk]), headers=headers)


def test_the_live_view_draws_every_region_of_the_page(admin_client: Client) -> None:
    session = busy_session(tasks=1)
    answer = live(admin_client, session)
    assert answer.status_code == 200 and answer["ETag"] and "no-store" in answer["Cache-Control"]
    regions = answer.json()["regions"]
    assert set(regions) == {"header", "actions", "failures", "questions", "signals", "feed", "cost", "conversations",
                            "transcript", "task_graph"}
    page = admin_client.get(console(session)).content.decode()
    for name in regions:
        assert f'data-region="{name}"' in page, name
    assert 'data-action="pause"' in regions["actions"] and "question 0?" in regions["questions"]
    # Forms drawn by a poll come back to the console, not to the live view.
    assert f'name="next" value="{console(session)}"' in regions["questions"]
    assert f'name="next" value="{console(session)}"' in regions["actions"]


def test_the_live_view_answers_304_until_something_of_the_session_changes(admin_client: Client,
                                                                           api: APIClient) -> None:
    session = make_session(key="live", current_task_key="task-9")
    etag = live(admin_client, session)["ETag"]
    assert live(admin_client, session, etag).status_code == 304
    page = admin_client.get(console(session)).content.decode()
    assert f'data-etag="{escape(etag)}"' in page  # the page's first poll finds it unchanged
    assert api.post("/api/v1/events/", {"session": session.pk, "type": "task_failed", "task_key": "task-9",
                                        "agent": "exec-a", "message": "boom"}, format="json").status_code == 201
    changed = live(admin_client, session, etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert "boom" in changed.json()["regions"]["feed"] and "rc-event-failed" in changed.json()["regions"]["feed"]
    assert live(admin_client, session, changed["ETag"]).status_code == 304


@pytest.mark.parametrize("change", ["question answered", "signal sent", "usage recorded", "task retried"])
def test_each_change_an_agent_makes_through_the_api_moves_the_etag(admin_client: Client, api: APIClient,
                                                                     change: str) -> None:
    session = busy_session(tasks=1)
    etag = live(admin_client, session)["ETag"]
    question, task = Question.objects.get(session=session), Task.objects.get(session=session)
    response = {
        "question answered": lambda: api.post(f"/api/v1/questions/{question.pk}/answer/", {"answer": "yes"},
                                              format="json"),
        "signal sent": lambda: api.post("/api/v1/signals/", {"session": session.pk, "type": "pause"}, format="json"),
        "usage recorded": lambda: api.post("/api/v1/token-usage/", {"session": session.pk, "model": "opus",
                                                                    "input_tokens": 5, "cost_usd": "0.25"},
                                           format="json"),
        "task retried": lambda: api.patch(f"/api/v1/tasks/{task.pk}/", {"status": "not_started"}, format="json"),
    }[change]()
    assert response.status_code in (200, 201), response.content
    assert live(admin_client, session, etag).status_code == 200


def test_a_poll_that_finds_nothing_changed_reads_the_session_row_only(admin_client: Client) -> None:
    session = busy_session(tasks=12)
    etag = live(admin_client, session)["ETag"]
    with CaptureQueriesContext(connection) as captured:
        assert live(admin_client, session, etag).status_code == 304
    beyond_login = [query["sql"] for query in captured
                    if "django_session" not in query["sql"] and "auth_user" not in query["sql"]]
    assert len(beyond_login) == 1 and "sessions_app_session" in beyond_login[0], beyond_login


def test_the_live_view_costs_the_same_queries_for_a_small_or_a_busy_session(admin_client: Client) -> None:
    def queries(session: Session) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert live(admin_client, session).status_code == 200
        return len(captured)

    assert queries(busy_session("small", tasks=1)) == queries(busy_session("large", tasks=12))


def test_the_feed_reads_one_index_range_whatever_the_ledger_holds(admin_client: Client) -> None:
    session, other = make_session(key="mine"), make_session(key="other")
    LedgerEvent.objects.bulk_create(LedgerEvent(session=s, type="x-probe") for s in (session, other) * 150)
    with CaptureQueriesContext(connection) as queries:
        feed = live(admin_client, session).json()["regions"]["feed"]
    assert feed.count("data-event=") == 40
    reads = [q["sql"] for q in queries if "ledger_app_ledgerevent" in q["sql"]]
    assert len(reads) == 1 and "LIMIT 40" in reads[0]


@pytest.mark.parametrize("session_id", ["01JUNKJUNKJUNKJUNKJUNKJUNK", "x", "9" * 40])
def test_the_live_view_of_no_session_is_a_404_with_a_code(admin_client: Client, session_id: str) -> None:
    response = admin_client.get(reverse("admin:sessions_app_session_live", args=[session_id]))
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_the_live_view_is_for_people_logged_in(client: Client) -> None:
    response = live(client, make_session())
    assert response.status_code == 302 and "/admin/login/" in response.url


# -- what runs now, from the claims ---------------------------------------------------------------

def test_the_header_shows_the_running_tasks_and_the_wave_derived_from_the_tasks(admin_client: Client) -> None:
    now = timezone.now()
    session = make_session(key="waves", current_wave=1)
    first = make_task(session, "t-1", status="completed")
    second = make_task(session, "t-2", depends_on=(first,), status="completed")
    make_task(session, "t-3", depends_on=(second,), status="in_progress", claimed_by="exec-b",
              started_at=now - timedelta(minutes=7), lease_expires_at=now + timedelta(minutes=4, seconds=30))
    make_task(session, "t-4", depends_on=(second,), status="in_progress", assigned_agent="exec-c",
              started_at=now - timedelta(minutes=2))
    header = live(admin_client, session).json()["regions"]["header"]
    wave = header.split('data-live="wave"', 1)[1].split("</dd>", 1)[0]
    assert wave.endswith(">3"), wave  # t-3 and t-4 are the third wave; the loop's stale current_wave says 1
    running = header.split('id="rc-work"', 1)[1]
    assert running.index('data-task="t-3"') < running.index('data-task="t-4"')  # the longest running first
    assert "exec-b · wave 3" in running and ">7\xa0minutes</time>" in running
    assert "lease: <time" in running and ">in 4\xa0minutes</time>" in running
    assert "exec-c · wave 3" in running and "no lease" in running


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


def test_the_search_box_finds_the_sessions_events_reports_and_messages_with_links(admin_client: Client) -> None:
    session, other = busy_session(), busy_session("other")
    html = admin_client.get(console(session), {"q": "failed"}).content.decode()
    assert "3 hits" in html and html.count("<mark>failed</mark>") == 3  # its reports: "review of n failed"
    links = {reverse("admin:sessions_app_taskattempt_change", args=[attempt.pk])
             for attempt in TaskAttempt.objects.filter(session=session)}
    assert all(f'href="{link}"' in html for link in links)
    assert not any(reverse("admin:sessions_app_taskattempt_change", args=[attempt.pk]) in html
                   for attempt in TaskAttempt.objects.filter(session=other))
    chat = Chat.objects.filter(session=session).first()
    html = admin_client.get(console(session), {"q": "message"}).content.decode()
    assert reverse("admin:conversations_app_chat_change", args=[chat.pk]) in html  # a message opens its chat
    too_long = admin_client.get(console(session), {"q": "a" * 1001})
    assert too_long.status_code == 200 and "at most 1000 characters" in too_long.content.decode()


def test_the_search_box_pages_through_every_hit(admin_client: Client) -> None:
    session = make_session(key="probed")
    for n in range(45):
        LedgerEvent.objects.create(session=session, type="x-probe", message=f"probe {n}")
    event_page = re.compile(r'href="(/admin/ledger_app/ledgerevent/\d+/change/)"')
    pager = re.compile(r'href="([^"]*)" rel="(prev|next)"')
    seen: list[str] = []
    url, query = console(session), {"q": "probe", "questions": "2"}
    for shown in ("1 to 20", "21 to 40", "41 to 45"):
        html = admin_client.get(url, query).content.decode()
        assert f"45 hits: {shown}, the best first" in html
        seen += event_page.findall(html.split('id="rc-search"')[1].split("</section>")[0])
        links = {rel: unescape(href) for href, rel in pager.findall(html)}
        assert ("prev" in links) == (shown != "1 to 20") and ("next" in links) == (shown != "41 to 45")
        if "next" in links:  # the next page keeps the search and the page of questions
            assert links["next"].startswith("?") and links["next"].endswith("#rc-search")
            query = QueryDict(links["next"][1:].removesuffix("#rc-search"))
            assert query["q"] == "probe" and query["questions"] == "2"
    assert len(seen) == len(set(seen)) == 45  # each hit once
    assert links["prev"] == "?q=probe&questions=2&hits=2#rc-search"
    past_the_last = admin_client.get(url, {"q": "probe", "hits": "99"}).content.decode()
    assert "45 hits: 41 to 45" in past_the_last and 'start="41"' in past_the_last
    first = admin_client.get(url, {"q": "probe", "hits": "2"}).content.decode()
    assert 'href="?q=probe#rc-search" rel="prev"' in first  # the first page names no page


def test_the_search_box_searches_only_what_the_person_may_view(client: Client) -> None:
    session = busy_session()
    staff = get_user_model().objects.create_user(username="viewer", password="viewer-password-1", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__in=("view_session", "view_ledgerevent")))
    client.force_login(staff)
    html = client.get(console(session), {"q": "event OR failed"}).content.decode()
    assert 'data-kind="event"' in html and 'data-kind="report"' not in html
