"""The console in a real browser (headless Chromium through Selenium), at 1400 and 400 pixels wide:
log in through the form, open the dashboard and a session's console, watch the live feed pick up
an event appended through the API without a reload, pause the session with its button, answer a
question, read a conversation with its run's tokens and cost, and find no error in the browser's console.

Runs when Chromium and chromedriver are installed (`apt-get install chromium chromium-driver`);
under CI (CI=true) a missing browser is a failure, not a skip. With RALPH_SCREENSHOTS=<dir> the
tests save the dashboard and console screenshots the README shows (tests/screenshots/).
"""

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from conversations_app import services
from ledger_app.models import DeadLetter, LedgerEvent
from ledger_app.services import token_usage_record, usage_record
from sessions_app.models import (
    AgentInvocation,
    FeedbackItem,
    Question,
    QuestionStatus,
    Session,
    SessionStatus,
    Signal,
    Task,
    TaskAttempt,
)
from sessions_app.services.sessions import session_finish
from tests.browser.support import api_append, console_errors, horizontal_overflow, log_in, screenshot, wait_for
from tests.sessions_app.factories import make_batch, make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)
WIDTHS = [1400, 400]


def loop_session() -> Session:
    session = make_session(key="widget-loop", project_path="/srv/widget-store", current_agent="exec-a",
                           current_task_key="task-2", current_model="claude-sonnet-4",
                           user_request="Build the widget store: schema, API, admin, tests, docs.")
    first = make_task(session, "task-1", title="Database schema", status="completed", assigned_agent="exec-a")
    second = make_task(session, "task-2", title="REST endpoints", depends_on=(first,), status="in_progress",
                       assigned_agent="exec-a", claimed_by="exec-a")
    failed = make_task(session, "task-3", title="Admin screens", depends_on=(first,), status="failed",
                       status_annotation="review failed: TypeError in widget_label()", assigned_agent="exec-b")
    make_task(session, "task-4", title="Integration tests", depends_on=(second, failed))
    TaskAttempt.objects.create(task=failed, session=session, attempt_number=1, agent="exec-b", review_verdict="failed",
                               review_report="The admin list crashes on an empty widget name.")
    Question.objects.create(session=session, key="Q-REQ-002", category="requirements", priority="high",
                            text="Do admins need to bulk-import widgets from CSV in this release?")
    for n, (kind, message) in enumerate([("task_claimed", "exec-a claimed task-2"),
                                         ("agent_started", "exec-a started task-2"),
                                         ("task_failed", "review failed: TypeError in widget_label()")]):
        LedgerEvent.objects.create(session=session, type=kind, task_key=f"task-{n + 1}", agent="exec-a",
                                   message=message)
    # Through the service, as an agent's report is: the header's totals and the cost panel agree.
    token_usage_record(items=[{"session_id": session.pk, "model": model, "agent": "exec-a", "input_tokens": 12000,
                               "output_tokens": 2100, "cost_usd": Decimal(cost)}
                              for model, cost in (("claude-sonnet-4", "0.412000"), ("gpt-5-mini", "0.031500"))])
    chat = services.chat_create(data={"title": "task-6: 릴리스 노트 (release notes)", "session_id": session.pk})
    run = services.run_create(data={"chat_id": chat.pk})
    services.message_append(run_id=run.pk, items=[
        {"role": "user", "content": "릴리스 노트를 작성해 주세요 (write the release notes)"},
        {"role": "assistant", "content": "Reading the changelog first.",
         "tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "CHANGELOG.md" * 20},
                         "result": "## 2.0 " + "widgets " * 200, "status": "completed"}]}])
    # The run's calls, booked against it as Claude Code's hooks book them: its tab shows their sums.
    with transaction.atomic():  # the service locks the session's row
        usage_record(items=[{"session_id": session.pk, "model": "claude-haiku-4-5", "agent": "writer",
                             "request_id": "req-w1", "input_tokens": 1500, "output_tokens": 320,
                             "cost_usd": Decimal("0.009000"), "source": "run", "source_id": run.pk}])
    return session


@pytest.mark.parametrize("browser", WIDTHS, indirect=True, ids=[f"{w}px" for w in WIDTHS])
def test_an_operator_watches_and_steers_a_loop_from_the_console(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    session = loop_session()
    log_in(browser, live_server)
    assert browser.execute_script("return window.innerWidth;") == browser.width

    # The dashboard: what needs attention, failures first.
    assert "Sessions, conversations and the ledger" in browser.page_source
    assert browser.find_element(By.ID, "rd-open_questions").text.startswith("1")
    screenshot(browser, "dashboard")
    assert horizontal_overflow(browser) <= 0, f"horizontal scroll on the dashboard at {browser.width}px"

    # The console: header, failures, questions, the live feed.
    browser.get(f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/")
    assert browser.find_element(By.CSS_SELECTOR, ".rc-title h1").text == "widget-loop"
    assert "TypeError in widget_label()" in browser.find_element(By.ID, "rc-failures").text
    feed = browser.find_element(By.ID, "rc-events")
    assert "exec-a claimed task-2" in feed.text
    wait_for(browser, lambda b: "rc-on" in b.find_element(By.CSS_SELECTOR, '[data-live="indicator"]')
             .get_attribute("class"))
    screenshot(browser, "console")
    browser.execute_script("window.__notReloaded = true;")
    api_append(live_server, session, type="agent_completed", task_key="task-2", agent="exec-a",
               message="exec-a reported task-2: endpoints done")
    wait_for(browser, lambda b: "exec-a reported task-2: endpoints done" in b.find_element(By.ID, "rc-events").text)
    assert browser.execute_script("return window.__notReloaded === true;"), "the feed updated without a reload"
    assert browser.find_element(By.CSS_SELECTOR, "#rc-events li").text.find("agent_completed") >= 0  # newest on top

    # Pause with its button: a pause signal for the orchestrator, shown as pending.
    browser.find_element(By.CSS_SELECTOR, 'button[data-action="pause"]').click()
    wait_for(browser, lambda b: "Pause signal sent" in b.page_source)
    assert list(Signal.objects.filter(session=session).values_list("type", "is_processed")) == [("pause", False)]
    assert "pause" in browser.find_element(By.ID, "rc-signals").text

    # Answer the question in place.
    form = browser.find_element(By.CSS_SELECTOR, "#rc-questions form")
    form.find_element(By.NAME, "answer").send_keys("No: CSV import waits for the next release.")
    form.find_element(By.CSS_SELECTOR, 'button[data-action="answer"]').click()
    wait_for(browser, lambda b: "Q-REQ-002 answered" in b.page_source)
    question = Question.objects.get(session=session)
    assert (question.status, question.answer) == (QuestionStatus.ANSWERED, "No: CSV import waits for the next release.")

    # At 1400 px nothing of the header is cut off; at any width the page has no horizontal scroll.
    assert horizontal_overflow(browser) <= 0, f"horizontal scroll at {browser.width}px"

    # The cost view, from the console's cost panel: its totals scroll in their own boxes, never the page.
    console_url = browser.current_url
    assert "12,000 / 2,100" in browser.find_element(By.ID, "rc-cost").text  # grouped as the header's 28,200
    browser.find_element(By.CSS_SELECTOR, "#rc-cost h2 a").click()
    wait_for(browser, lambda b: b.find_elements(By.ID, "usage-by-agent"))
    assert "24,000" in browser.find_element(By.ID, "usage-by-agent").text  # tokens grouped as on the console
    assert horizontal_overflow(browser) <= 0, f"horizontal scroll on the cost view at {browser.width}px"
    browser.get(console_url)

    # The conversation, from the console's Conversations panel: messages by role, a tool call unfolded.
    browser.find_element(By.CSS_SELECTOR, "#rc-chats li a").click()
    wait_for(browser, lambda b: "write the release notes" in b.find_element(By.ID, "rt-messages").text)
    assert browser.find_element(By.CSS_SELECTOR, '.rt-run-usage[data-run="1"]').text == "1,500 in · 320 out · $0.009000"
    assert "1,500 tokens in, 320 out, $0.009000 over 1 call" in browser.find_element(By.ID, "rt-run-summary").text
    browser.find_element(By.CSS_SELECTOR, ".rt-tool-call summary").click()
    assert "widgets widgets" in browser.find_element(By.CSS_SELECTOR, ".rt-tool-call").text
    screenshot(browser, "conversation")
    assert horizontal_overflow(browser) <= 0, f"horizontal scroll on the conversation at {browser.width}px"

    # The loop ends while the console is open: the indicator says so, without a reload.
    browser.get(console_url)
    session_finish(session=session, status=SessionStatus.COMPLETED, exit_reason="all tasks done", agent="orchestrator")
    wait_for(browser, lambda b: b.find_element(By.CSS_SELECTOR, '[data-live="indicator"]').text == "ended")
    assert console_errors(browser) == []


# What a person scans first on each list (issue #18 §3: status, title or text, agent, session, cost,
# time), in its column order; every one of them is within sight at 1400 px beside both sidebars.
KEY_COLUMNS = {
    "sessions_app/session": ["name", "status_badge", "state_badge", "exit_reason_short", "current_agent",
                             "total_cost_usd", "last_activity_at_ago"],
    "sessions_app/task": ["key", "title_short", "status_badge", "status_annotation_short", "assigned_agent",
                          "session_link", "updated_at_ago"],
    "sessions_app/question": ["key", "text_short", "status_badge", "priority", "session_link", "created_at_ago"],
    "sessions_app/signal": ["type_badge", "message_short", "is_processed_badge", "session_link", "sent_at_ago"],
    "sessions_app/taskattempt": ["task", "status_badge", "review_verdict_badge", "error_message_short", "agent",
                                 "session_link", "created_at_ago"],
    "sessions_app/agentinvocation": ["agent", "role", "status_badge", "task_key", "error_message_short", "cost_usd",
                                     "session_link", "started_at_ago"],
    "sessions_app/feedbackitem": ["issue_key", "description_short", "severity", "is_resolved_badge", "session_link",
                                  "created_at_ago"],
    "ledger_app/ledgerevent": ["timestamp_ago", "type", "message_short", "session_link", "task_key", "agent"],
    "ledger_app/tokenusage": ["recorded_at_ago", "model", "agent", "cost_usd", "session_link"],
    "ledger_app/deadletter": ["operation_type", "status_badge", "error_message_short", "task_key", "session_link",
                              "created_at_ago"],
    "conversations_app/chat": ["title", "session_link", "run_count", "updated_at_ago"],
    "conversations_app/run": ["chat", "status_badge", "session_link", "started_at_ago"],
    "conversations_app/message": ["role_badge", "content_short", "chat_title", "session_link", "created_at_ago"],
}


@pytest.mark.parametrize("browser", [1400], indirect=True, ids=["1400px"])
def test_the_people_lists_show_their_key_columns_at_1400_pixels(browser: Any, live_server: Any) -> None:

    session = loop_session()
    Signal.objects.create(session=session, type="steer", message="Prefer small pull requests.")
    make_session(key="demo-20261127-153421", status="failed", state="executing_batch",
                 exit_reason="circuit_breaker_open: 3 consecutive failures")  # long words, the widest badges
    an_hour_ago = timezone.now() - timedelta(minutes=50)  # "50 minutes ago" is about the widest time there is
    Session.objects.update(last_activity_at=an_hour_ago)
    Task.objects.update(updated_at=an_hour_ago)
    AgentInvocation.objects.create(session=session, agent="exec-b", role="executor", task_key="task-3",
                                   status="failed", error_message="TypeError in widget_label()",
                                   cost_usd=Decimal("0.0412"))
    DeadLetter.objects.create(session=session, operation_type="git_push", task_key="task-3",
                              error_message="remote rejected: non-fast-forward")
    FeedbackItem.objects.create(batch=make_batch(session), issue_key="FB-001", severity="high",
                                description="The widget list crashes on an empty widget name.")
    log_in(browser, live_server)
    for path, columns in KEY_COLUMNS.items():
        browser.get(f"{live_server.url}/admin/{path}/")
        # The list scrolls inside its own box: a column is in sight when it ends inside that box.
        in_sight = browser.execute_script("""
            const box = document.querySelector('.results').getBoundingClientRect();
            const right = Math.min(box.right, window.innerWidth) + 1;
            return [...document.querySelectorAll('#result_list thead th')]
                .filter(th => th.getBoundingClientRect().right <= right)
                .flatMap(th => [...th.classList].filter(c => c.startsWith('column-')).map(c => c.slice(7)));""")
        assert [column for column in columns if column not in in_sight] == [], f"{path}: cut off at 1400 px"
        assert horizontal_overflow(browser) <= 0, f"{path}: the page scrolls sideways"
    assert console_errors(browser) == []
