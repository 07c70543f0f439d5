"""Searching from the console (issue #31 §7): the session's search box finds a failure's text in the ledger and in
a task report (what `q=TypeError` found nowhere on the console before), Korean by a 3-character substring, only
within the session, each hit linked to its record; a poll redraws the panels and leaves the hits alone."""

from typing import Any

import pytest

from ledger_app.services import event_append
from sessions_app.models import TaskAttempt
from tests.browser.support import api_append, console_errors, horizontal_overflow, log_in, wait_for
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)
FAILURE = "TypeError: x is undefined"


@pytest.mark.parametrize("browser", [1400], indirect=True, ids=["1400px"])
def test_the_console_finds_a_failure_in_the_ledger_and_the_reports(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    session, elsewhere = make_session(key="search-loop"), make_session(key="another-loop")
    event = event_append(session_id=session.pk, type="task_failed", task_key="t-7", message=f"t-7 failed: {FAILURE}")
    event_append(session_id=session.pk, type="error_occurred", message="세션을 다시 시작했습니다")
    attempt = TaskAttempt.objects.create(task=make_task(session, "t-7"), session=session, attempt_number=1,
                                         status="failed", error_type="TypeError", error_message=FAILURE)
    event_append(session_id=elsewhere.pk, type="task_failed", message=FAILURE)  # another session's: not shown
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/")

    def search(text: str) -> list[tuple[str, str]]:
        box = browser.find_element(By.CSS_SELECTOR, "#rc-search input[name=q]")
        box.clear()
        box.send_keys(text)
        box.submit()
        wait_for(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".rc-search-count"))
        return [(hit.get_attribute("data-kind"), hit.find_element(By.TAG_NAME, "a").get_attribute("href"))
                for hit in browser.find_elements(By.CSS_SELECTOR, "#rc-search .rc-hit")]

    hits = search("TypeError")
    assert sorted(kind for kind, _ in hits) == ["event", "report"]
    assert {href.split("/admin/")[1] for _, href in hits} == {
        f"ledger_app/ledgerevent/{event.pk}/change/", f"sessions_app/taskattempt/{attempt.pk}/change/"}
    marks = browser.find_elements(By.CSS_SELECTOR, "#rc-search .rc-snippet mark")
    assert marks and {mark.text for mark in marks} == {"TypeError"}
    assert horizontal_overflow(browser) <= 0

    # A poll redraws the feed with a new event; the hits stay as they were.
    api_append(live_server, session, type="task_started", task_key="t-8", message="t-8 started")
    wait_for(browser, lambda b: "t-8 started" in b.find_element(By.ID, "rc-events").text)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#rc-search .rc-hit")) == 2

    assert [kind for kind, _ in search("시작했")] == ["event"]
    assert search("undefined widget") == []

    browser.find_element(By.CSS_SELECTOR, "#rc-search input[name=q]").clear()
    search("TypeError")
    browser.find_element(By.CSS_SELECTOR, '#rc-search .rc-hit[data-kind="report"] a').click()
    wait_for(browser, lambda b: b.title.startswith("t-7: attempt 1"))
    assert console_errors(browser) == []
