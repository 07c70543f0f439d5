"""History reads as history (issue #31 §6): from a failure on the console and from a box of the task graph,
an operator lands on the task's read-only page, titled by its key, with its attempts and their durations;
each attempt has a read-only page too; the raw form is behind an explicit "Edit"."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from sessions_app.models import Session, TaskAttempt
from tests.browser.support import console_errors, horizontal_overflow, log_in, screenshot, wait_for
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)
WIDTHS = [1400, 400]


def session_with_a_failed_task() -> Session:
    session = make_session(key="history-loop")
    first = make_task(session, "t-1", title="Schema", status="completed")
    failed = make_task(session, "t-12", title="Admin screens", depends_on=(first,), status="failed",
                       status_annotation="review failed: TypeError in widget_label()", assigned_agent="exec-b")
    start = timezone.now() - timedelta(hours=2)
    for number, minutes in ((1, 3), (2, 75)):
        TaskAttempt.objects.create(task=failed, session=session, attempt_number=number, agent="exec-b",
                                   status="failed", review_verdict="failed", review_report=f"review {number}: red",
                                   started_at=start, ended_at=start + timedelta(minutes=minutes))
    return session


@pytest.mark.parametrize("browser", WIDTHS, indirect=True, ids=[f"{w}px" for w in WIDTHS])
def test_failures_and_the_graph_lead_to_read_only_pages_titled_by_the_task_key(browser: Any,
                                                                               live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    session = session_with_a_failed_task()
    log_in(browser, live_server)
    console = f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/"

    for opening in ('#rc-failures li a[href*="/sessions_app/task/"]', '#rc-task-graph a[data-task="t-12"]'):
        browser.get(console)
        browser.find_element(By.CSS_SELECTOR, opening).click()
        wait_for(browser, lambda b: b.title.startswith("Task t-12"))
        assert browser.find_element(By.CSS_SELECTOR, "#content h1").text == "Task t-12"
        # Nothing of the record is editable here: no form field but the buttons' own inputs.
        assert browser.find_elements(By.CSS_SELECTOR, "input[name=_save], textarea:not(.rl-action *)") == []
        timeline = browser.find_element(By.ID, "rr-timeline").text
        assert "Attempts (2)" in timeline and "took 3 min 0 s" in timeline and "took 1 h 15 min" in timeline
        assert horizontal_overflow(browser) <= 0, f"the task's page scrolls sideways at {browser.width}px"

    screenshot(browser, "task")

    # An attempt: its own read-only page, titled by the task's key, marked in the task's timeline.
    browser.find_element(By.CSS_SELECTOR, '#rr-timeline li[data-attempt="2"] a').click()
    wait_for(browser, lambda b: b.title.startswith("t-12: attempt 2"))
    assert "review 2: red" in browser.find_element(By.ID, "content-main").text
    assert browser.find_elements(By.CSS_SELECTOR, "input[name=_save]") == []
    assert horizontal_overflow(browser) <= 0, f"the attempt's page scrolls sideways at {browser.width}px"

    # The raw form is one explicit step further, and leads back.
    browser.find_element(By.LINK_TEXT, "Edit").click()
    wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "input[name=_save]"))
    browser.find_element(By.CSS_SELECTOR, '.object-tools a[href$="/change/"]').click()  # "View"
    wait_for(browser, lambda b: b.title.startswith("t-12: attempt 2"))
    assert console_errors(browser) == []
