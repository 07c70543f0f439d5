"""The admin index dashboard (ralphsite/console/dashboard.py, templates/admin/dashboard.html)."""

from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from ledger_app.models import DeadLetter, DeadLetterStatus, Issue, TokenUsage
from ralphsite.console import dashboard
from sessions_app.models import Question, QuestionStatus, Session, SessionStatus, Signal, Task, TaskStatus
from sessions_app.services.sessions import session_finish

pytestmark = pytest.mark.django_db

INDEX = "/admin/"


def make_session(key: str, *, status: str = SessionStatus.RUNNING, idle: timedelta = timedelta(seconds=5),
                 **fields) -> Session:
    return Session.objects.create(key=key, status=status, last_activity_at=timezone.now() - idle, **fields)


def today_at(hour: int, *, days_ago: int = 0) -> datetime:
    day = timezone.now().astimezone(UTC).date() - timedelta(days=days_ago)
    return datetime.combine(day, time(hour), tzinfo=UTC)


def usage(session: Session | None, *, model: str, tokens_in: int, tokens_out: int, cost: str,
          at: datetime) -> TokenUsage:
    return TokenUsage.objects.create(session=session, model=model, input_tokens=tokens_in,
                                     output_tokens=tokens_out, cost_usd=Decimal(cost), recorded_at=at)


def populate(sessions: int = 1) -> dict:
    """Rows for every section; `sessions` running sessions with a task, a question, a signal,
    an issue, a dead letter and a usage row each (the first session's rows are the named ones)."""
    live = make_session("live-1", project_path="/srv/repos/alpha", current_iteration=3, max_iterations=12,
                        total_tokens_input=1200, total_tokens_output=34_000, total_cost_usd=Decimal("1.234567"))
    stale = make_session("stale-1", project_path="/srv/repos/beta", idle=timedelta(hours=2))
    done = make_session("done-1", status=SessionStatus.COMPLETED, idle=timedelta(days=3))
    others = [make_session(f"more-{n}") for n in range(sessions - 1)]
    for n, status in enumerate([TaskStatus.NOT_STARTED, TaskStatus.IN_PROGRESS, TaskStatus.IN_PROGRESS,
                                TaskStatus.COMPLETED, TaskStatus.FAILED]):
        Task.objects.create(session=live, key=f"task-{n}", title=f"Task {n}", status=status)
    Task.objects.create(session=stale, key="task-b", title="Blocked", status=TaskStatus.BLOCKED)
    Task.objects.create(session=done, key="task-d", title="Old", status=TaskStatus.COMPLETED)  # not running
    Question.objects.create(session=live, key="Q-TECH-001", category="technical", text="Which DB?")
    Question.objects.create(session=live, key="Q-TECH-002", category="technical", text="Why?",
                            status=QuestionStatus.RESEARCH_NEEDED)
    Question.objects.create(session=live, key="Q-TECH-003", category="technical", text="Done",
                            status=QuestionStatus.ANSWERED, answer="SQLite")
    Signal.objects.create(session=live, type="steer", message="focus")
    Signal.objects.create(session=live, type="info", message="seen", is_processed=True)
    DeadLetter.objects.create(operation_type="git_push", session=live)
    DeadLetter.objects.create(operation_type="git_push", session=live, status=DeadLetterStatus.FAILED)
    big = Issue.objects.create(session=live, task_key="task-1", kind="test_failure",
                               signature="tests/test_api.py::test_login AssertionError", message="boom", count=7)
    Issue.objects.create(session=live, task_key="task-2", kind="lint", signature="E501 line too long",
                         message="long", count=2)
    usage(live, model="claude-sonnet", tokens_in=1000, tokens_out=500, cost="0.500000", at=today_at(0))
    usage(live, model="claude-sonnet", tokens_in=2000, tokens_out=1000, cost="1.000001", at=today_at(1, days_ago=2))
    usage(live, model="gpt-5", tokens_in=300, tokens_out=200, cost="0.250000", at=today_at(2, days_ago=2))
    usage(live, model="gpt-5", tokens_in=999, tokens_out=999, cost="9.000000", at=today_at(0, days_ago=20))  # too old
    for n, session in enumerate(others):
        Task.objects.create(session=session, key=f"more-task-{n}", title="More")
        Question.objects.create(session=session, key=f"Q-MORE-{n}", category="risks", text="?")
        Signal.objects.create(session=session, type="pause")
        DeadLetter.objects.create(operation_type="notify", session=session)
        Issue.objects.create(session=session, task_key="x", kind="lint", signature=f"more-{n}", message="m")
        usage(session, model=f"model-{n}", tokens_in=1, tokens_out=1, cost="0.000001", at=today_at(0))
    return {"live": live, "stale": stale, "done": done, "issue": big}


def test_it_shows_every_section_with_figures_and_links(admin_client: Client) -> None:
    rows = populate()
    response = admin_client.get(INDEX)
    assert response.status_code == 200
    html = response.content.decode()
    d = response.context["dashboard"]

    # Running sessions, with links to their change pages; the idle one is flagged interrupted.
    assert d["session_counts"] == {"running": 2, "interrupted": 1}
    by_key = {s["key"]: s for s in d["running_sessions"]}
    assert set(by_key) == {"live-1", "stale-1"}
    assert by_key["stale-1"]["interrupted"] and not by_key["live-1"]["interrupted"]
    assert by_key["live-1"]["total_cost_usd"] == Decimal("1.234567")
    assert by_key["live-1"]["total_tokens"] == 35_200
    for session in (rows["live"], rows["stale"]):
        assert reverse("admin:sessions_app_session_change", args=[session.pk]) in html
    assert reverse("admin:sessions_app_session_change", args=[rows["done"].pk]) not in html
    assert "/srv/repos/alpha" in html and "3 / 12" in html and "35,200" in html and "1.234567" in html
    assert "interrupted?" in html and "idle &gt; 5 min" in html

    # Tasks of the running sessions only (the completed session's task is left out).
    tasks = {row["status"]: row["count"] for row in d["tasks"]["by_status"]}
    assert d["tasks"]["total"] == 6
    assert tasks == {**dict.fromkeys(TaskStatus.values, 0), "not_started": 1, "in_progress": 2, "completed": 1,
                     "failed": 1, "blocked": 1}
    assert 'id="rd-task-in_progress"' in html

    attention = {item["name"]: item["count"] for item in d["attention"]}
    assert attention == {"open_questions": 2, "unprocessed_signals": 1, "pending_dead_letters": 1}
    assert "status__in=unanswered%2Cresearch_needed" in html
    assert "is_processed__exact=0" in html and "status__exact=pending" in html

    # Top issues, biggest first, linked.
    assert [issue["count"] for issue in d["top_issues"]] == [7, 2]
    assert reverse("admin:ledger_app_issue_change", args=[rows["issue"].pk]) in html
    assert "tests/test_api.py::test_login AssertionError" in html

    # Usage: 14 UTC days, exact Decimal money, integer tokens; the 20-day-old row is outside.
    u = d["usage"]
    assert len(u["cost_chart"].bars) == 14 == len(u["tokens_chart"].bars)
    assert u["total_cost"] == Decimal("1.750001") and str(u["total_cost"]) == "1.750001"
    assert u["total_tokens"] == 5_000 and isinstance(u["total_tokens"], int)
    assert u["cost_chart"].bars[-1].title.endswith(": 0.500000 USD")
    assert u["cost_chart"].bars[-3].title.endswith(": 1.250001 USD")
    assert u["tokens_chart"].bars[-3].title.endswith(": 3,500 tokens")
    assert [(m["model"], m["cost_usd"], m["tokens"], m["calls"]) for m in u["cost_by_model"]] == [
        ("claude-sonnet", Decimal("1.500001"), 4_500, 2), ("gpt-5", Decimal("0.250000"), 500, 1)]
    assert "1.750001 USD" in html and "5,000 tokens" in html and "1.500001" in html
    assert html.count('<svg class="rd-chart"') == 2
    assert "<script" not in html.split('id="ralph-dashboard"')[1].split('id="content-main"')[0]

    # API links, and the usual app list and recent actions are still there.
    assert 'href="/api/v1/"' in html and 'href="/api/docs/"' in html
    assert 'id="content-main"' in html and "app-sessions_app" in html and "recent-actions-module" in html


def test_it_renders_on_an_empty_database(admin_client: Client) -> None:
    response = admin_client.get(INDEX)
    assert response.status_code == 200
    html = response.content.decode()
    d = response.context["dashboard"]
    assert d["session_counts"] == {"running": 0, "interrupted": 0}
    assert d["running_sessions"] == [] and d["top_issues"] == []
    assert d["tasks"]["total"] == 0
    assert {item["count"] for item in d["attention"]} == {0}
    assert d["usage"]["total_cost"] == Decimal("0.000000") and d["usage"]["total_tokens"] == 0
    assert d["usage"]["cost_chart"].empty and all(bar.height == 0 for bar in d["usage"]["cost_chart"].bars)
    for text in ("No running sessions.", "No issues reported.", "No token usage in the last 14 days.",
                 "0.000000 USD", "0 tokens"):
        assert text in html
    assert 'id="content-main"' in html


def test_it_needs_a_login(client: Client) -> None:
    response = client.get(INDEX)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_it_shows_only_what_a_staff_user_may_view(client: Client) -> None:
    populate()
    staff = get_user_model().objects.create_user(username="viewer", password="pw-viewer-1", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_deadletter"))
    client.force_login(staff)
    d = client.get(INDEX).context["dashboard"]
    assert [item["name"] for item in d["attention"]] == ["pending_dead_letters"]
    assert not {"running_sessions", "tasks", "top_issues", "usage"} & set(d)


def test_it_keeps_the_app_index_pages_as_they_were(admin_client: Client) -> None:
    response = admin_client.get(reverse("admin:app_list", args=["ledger_app"]))
    assert response.status_code == 200
    assert "dashboard" not in response.context and b"ralph-dashboard" not in response.content


def test_it_lists_the_sessions_that_failed_or_stopped_with_their_exit_reasons(admin_client: Client) -> None:
    populate()  # done-1 completed: not a failure
    make_session("broken-1", status=SessionStatus.FAILED, idle=timedelta(hours=1),
                 exit_reason="circuit_breaker_open: 3 consecutive failures")
    make_session("halted-1", status=SessionStatus.STOPPED, exit_reason="stopped by an operator")
    response = admin_client.get(INDEX)
    ended = response.context["dashboard"]["ended_sessions"]
    assert [(s["key"], s["status"]) for s in ended] == [("halted-1", "stopped"), ("broken-1", "failed")]
    html = response.content.decode()
    assert "circuit_breaker_open: 3 consecutive failures" in html and ended[1]["url"] in html
    listed = admin_client.get(response.context["dashboard"]["ended_url"])
    assert sorted(listed.context["cl"].result_list.values_list("key", flat=True)) == ["broken-1", "halted-1"]


def test_it_links_interrupted_sessions_to_a_working_changelist(admin_client: Client) -> None:
    populate()
    d = admin_client.get(INDEX).context["dashboard"]
    response = admin_client.get(d["interrupted_url"])
    assert response.status_code == 200
    assert list(response.context["cl"].result_list.values_list("key", flat=True)) == ["stale-1"]
    for url in (d["running_url"], *(item["url"] for item in d["attention"])):
        listed = admin_client.get(url)
        assert listed.status_code == 200 and "e=1" not in listed.get("Location", "")


def test_it_runs_a_constant_number_of_queries(admin_client: Client, django_assert_num_queries) -> None:
    populate(sessions=1)
    admin_client.get(INDEX)  # warm the per-request caches that do not depend on data (content types)
    with CaptureQueriesContext(connection) as small:
        admin_client.get(INDEX)
    for n in range(30):
        session = make_session(f"bulk-{n}", project_path=f"/p/{n}")
        Task.objects.create(session=session, key=f"bulk-task-{n}", title="t")
        Issue.objects.create(session=session, task_key="t", kind="k", signature=f"bulk-{n}", message="m")
        usage(session, model=f"bulk-model-{n}", tokens_in=n, tokens_out=n, cost="0.010000",
              at=today_at(0, days_ago=n % 14))
    with django_assert_num_queries(len(small.captured_queries)):
        response = admin_client.get(INDEX)
    assert len(response.context["dashboard"]["running_sessions"]) == dashboard.RUNNING_SHOWN
    dashboard_queries = [q["sql"] for q in small.captured_queries
                         if any(t in q["sql"] for t in ("sessions_app_", "ledger_app_"))]
    assert len(dashboard_queries) == 9 + 2, dashboard_queries  # what it shows, and its ETag (two aggregates)


def live(client: Client, etag: str = "") -> Any:
    return client.get(reverse("admin:dashboard_live"), headers={"If-None-Match": etag} if etag else {})


def test_its_poll_answers_304_for_two_queries_until_something_changes(admin_client: Client) -> None:
    populate(sessions=3)
    first = live(admin_client)
    assert first.status_code == 200 and 'id="rd-running"' in first.json()["regions"]["dashboard"]
    etag = first["ETag"]
    assert f'data-etag="{escape(etag)}"' in admin_client.get(INDEX).content.decode()
    with CaptureQueriesContext(connection) as unchanged:
        assert live(admin_client, etag).status_code == 304
    reads = [q["sql"] for q in unchanged if "sessions_app_" in q["sql"] or "ledger_app_" in q["sql"]]
    assert len(reads) == 2, reads
    session = Session.objects.filter(status="running").first()
    session_finish(session=session, status="failed", exit_reason="gave up", agent="orchestrator")
    changed = live(admin_client, etag)
    assert changed.status_code == 200 and "gave up" in changed.json()["regions"]["dashboard"]


def test_its_poll_is_for_people_logged_in(client: Client) -> None:
    response = live(client)
    assert response.status_code == 302 and "/admin/login/" in response.url
