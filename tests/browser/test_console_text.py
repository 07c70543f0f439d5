"""Long text stays inside its panel (issue #31 §5): with long unbroken text in every panel of the console,
the page never scrolls sideways at 400 or 1400 pixels, and no panel reaches past the page; a tool's
output keeps its indentation in the conversation."""

from decimal import Decimal
from typing import Any

import pytest

from conversations_app import services
from ledger_app.models import LedgerEvent
from ledger_app.services import token_usage_record
from sessions_app.models import Question, Signal, TaskAttempt
from tests.browser.support import attribute_values, console_errors, horizontal_overflow, log_in, wait_for
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)
WIDTHS = [1400, 400]
UNBROKEN = "x" * 40 + "/" + "TypeErrorInWidgetLabel" * 12  # no space to break at


@pytest.mark.parametrize("browser", WIDTHS, indirect=True, ids=[f"{w}px" for w in WIDTHS])
def test_no_panel_scrolls_the_page_sideways_with_long_unbroken_text(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    session = make_session(key="k" + UNBROKEN[:90], project_path="/srv/" + UNBROKEN, user_request=UNBROKEN,
                           current_agent="agent-" + UNBROKEN[:150])
    first = make_task(session, "t-" + UNBROKEN[:80], title=UNBROKEN, status="failed", status_annotation=UNBROKEN,
                      assigned_agent="exec-" + UNBROKEN[:150])
    make_task(session, "t-2", title=UNBROKEN, depends_on=(first,), status="in_progress",
              claimed_by="exec-" + UNBROKEN[:150])
    TaskAttempt.objects.create(task=first, session=session, attempt_number=1, review_verdict="failed",
                               review_report=UNBROKEN, agent="exec-" + UNBROKEN[:150])
    Question.objects.create(session=session, key="Q-" + UNBROKEN[:60], category="technical", text=UNBROKEN)
    Signal.objects.create(session=session, type="steer", message=UNBROKEN)
    Signal.objects.create(session=session, type="stop", message=UNBROKEN)
    LedgerEvent.objects.create(session=session, type="task_failed", task_key="t-" + UNBROKEN[:80],
                               agent="exec-" + UNBROKEN[:150], message=UNBROKEN)
    token_usage_record(items=[{"session_id": session.pk, "model": "model-" + UNBROKEN[:80], "agent": "exec-a",
                               "input_tokens": 123_456_789, "output_tokens": 98_765_432,
                               "cost_usd": Decimal("123456.123456")}])
    chat = services.chat_create(data={"title": UNBROKEN, "session_id": session.pk})
    run = services.run_create(data={"chat_id": chat.pk})
    services.message_append(run_id=run.pk, items=[
        {"role": "tool", "content": "def widget():\n    return " + UNBROKEN}])
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/")
    wait_for(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#content-main").get_attribute("data-polls"))

    assert horizontal_overflow(browser) <= 0, f"the console scrolls sideways at {browser.width}px"
    too_wide = browser.execute_script("""
        const page = document.documentElement.clientWidth;
        return [...document.querySelectorAll('[data-region]')]
            .filter((region) => region.getBoundingClientRect().right > page + 0.5)
            .map((region) => region.dataset.region);""")
    assert too_wide == [], f"regions past the page at {browser.width}px"
    regions = set(attribute_values(browser, "[data-region]", "data-region"))
    assert {"header", "actions", "failures", "questions", "signals", "feed", "cost", "conversations",
            "task_graph"} <= regions

    # The dashboard, with the same session and its long text.
    browser.get(f"{live_server.url}/admin/")
    assert horizontal_overflow(browser) <= 0, f"the dashboard scrolls sideways at {browser.width}px"

    # The conversation: the tool's output keeps its indentation, and wraps inside the message.
    browser.get(f"{live_server.url}/admin/conversations_app/chat/{chat.pk}/transcript/")
    content = browser.find_element(By.CSS_SELECTOR, ".rt-role-tool .rt-content")
    assert content.text.startswith("def widget():\n    return ")
    assert horizontal_overflow(browser) <= 0, f"the conversation scrolls sideways at {browser.width}px"
    assert console_errors(browser) == []


MEGABYTE = "y" * 1_000_000  # unbroken: the hardest text to lay out
PAGE_MAX_CHARS = 200_000  # a record's page carries the beginning of a long value, never the whole


@pytest.mark.parametrize("browser", [1400], indirect=True, ids=["1400px"])
def test_a_page_with_a_megabyte_value_shows_its_beginning_and_links_to_the_whole(browser: Any,
                                                                                 live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    session = make_session(key="megabyte", user_request=MEGABYTE)
    question = Question.objects.create(session=session, key="Q-1", category="technical", text=MEGABYTE,
                                       answer=MEGABYTE, status="answered")
    signal = Signal.objects.create(session=session, type="steer", message=MEGABYTE)
    event = LedgerEvent.objects.create(session=session, type="task_failed", message=MEGABYTE, data={"log": MEGABYTE})
    attempt = TaskAttempt.objects.create(task=make_task(session, "t-1"), session=session, attempt_number=1,
                                         review_report=MEGABYTE)
    run = services.run_create(data={"chat_id": services.chat_create(data={"session_id": session.pk}).pk})
    [message] = services.message_append(run_id=run.pk, items=[{"role": "assistant", "content": MEGABYTE}])
    log_in(browser, live_server)
    pages = {f"/admin/sessions_app/question/{question.pk}/change/": 2,
             f"/admin/sessions_app/signal/{signal.pk}/change/": 1,
             f"/admin/ledger_app/ledgerevent/{event.pk}/change/": 2,
             f"/admin/sessions_app/taskattempt/{attempt.pk}/change/": 1,
             f"/admin/conversations_app/message/{message.pk}/change/": 1,
             f"/admin/sessions_app/session/{session.pk}/change/": 1, "/admin/sessions_app/question/": 0,
             "/admin/sessions_app/signal/": 0, "/admin/ledger_app/ledgerevent/": 0, "/admin/": 0,
             f"/admin/conversations_app/chat/{run.chat_id}/transcript/": 1}
    for page, long_values in pages.items():
        browser.get(live_server.url + page)
        wait_for(browser, lambda b: b.execute_script("return document.readyState") == "complete")
        assert browser.execute_script("return document.documentElement.outerHTML.length") < PAGE_MAX_CHARS, page
        links = attribute_values(browser, "a.rl-whole-text", "href")
        assert len(links) >= long_values, page
        assert horizontal_overflow(browser) <= 0, page
        assert console_errors(browser) == [], page

    # The question's page is usable: saved as it is, it keeps the whole answer.
    browser.get(f"{live_server.url}/admin/sessions_app/question/{question.pk}/change/")
    answer_link = browser.find_element(By.CSS_SELECTOR, ".field-answer a.rl-whole-text")
    assert answer_link.text == "read all 1,000,000 characters"
    whole = answer_link.get_attribute("href")
    browser.find_element(By.CSS_SELECTOR, "input[name=_save]").click()
    wait_for(browser, lambda b: b.current_url.endswith("/admin/sessions_app/question/"))
    question.refresh_from_db()
    assert question.answer == MEGABYTE

    # The link reads the whole value, as text.
    browser.get(whole)
    assert browser.execute_script("return document.body.textContent") == MEGABYTE
    browser.get(f"{live_server.url}/admin/ledger_app/ledgerevent/{event.pk}/text/data/")
    assert browser.execute_script("return JSON.parse(document.body.textContent)") == {"log": MEGABYTE}
