"""Forty open questions (issue #31 §4): the console's heading says forty, the answer forms come five a
page instead of a tower in the narrow column, the pages follow the urgency, a page stays the same page
across live polls, and an answer given on page two comes back to page two."""

from typing import Any

import pytest

from sessions_app.models import Question, QuestionStatus
from tests.browser.support import Api, attribute_values, console_errors, horizontal_overflow, log_in, wait_for
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db(transaction=True)
WIDTHS = [1400, 400]


@pytest.mark.parametrize("browser", WIDTHS, indirect=True, ids=[f"{w}px" for w in WIDTHS])
def test_forty_open_questions_are_paged_under_their_true_count(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    session = make_session(key="asking-loop")
    for n in range(40):
        Question.objects.create(session=session, key=f"Q-{n:02}", category="technical", text=f"question {n}?",
                                priority="high" if n < 3 else "low")
    log_in(browser, live_server)
    browser.get(f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/")
    heading = browser.find_element(By.CSS_SELECTOR, "#rc-questions h2").text
    assert heading.startswith("Open questions (40): 1 to 5, the most urgent first")
    forms = attribute_values(browser, "#rc-questions form", "data-key")
    assert len(forms) == 5
    assert browser.find_element(By.ID, "rc-questions").size["height"] < 1200, "the answer forms stack into a tower"
    assert "Q-00" in browser.find_element(By.ID, "rc-questions").text  # high priority first

    browser.find_element(By.CSS_SELECTOR, '#rc-questions [data-page="next"]').click()
    wait_for(browser, lambda b: "6 to 10" in b.find_element(By.CSS_SELECTOR, "#rc-questions h2").text)
    page_two = attribute_values(browser, "#rc-questions form", "data-key")
    assert len(page_two) == 5 and not set(page_two) & set(forms)

    # A question asked meanwhile: the live poll redraws the count, and stays on page two.
    Api(live_server, session).call("POST", "/questions/", {"session": session.pk, "key": "Q-NEW",
                                                           "text": "one more?", "category": "technical",
                                                           "priority": "low"})  # the least urgent: last
    wait_for(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#rc-questions h2").text.startswith(
        "Open questions (41): 6 to 10"))
    assert attribute_values(browser, "#rc-questions form", "data-key") == page_two

    # Answering on page two comes back to page two, one question fewer.
    form = browser.find_element(By.CSS_SELECTOR, "#rc-questions form")
    form.find_element(By.NAME, "answer").send_keys("Yes.")
    form.find_element(By.CSS_SELECTOR, 'button[data-action="answer"]').click()
    wait_for(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#rc-questions h2").text.startswith(
        "Open questions (40): 6 to 10"))
    assert Question.objects.filter(status=QuestionStatus.ANSWERED).count() == 1
    assert horizontal_overflow(browser) <= 0, f"the console scrolls sideways at {browser.width}px"
    assert console_errors(browser) == []
