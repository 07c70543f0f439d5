"""The task graph at scale (issue #31 §4): with 1,000 tasks in 20 waves, the console and the graph's page
load with the current and next waves open first and the finished waves folded, the filters by status and
agent work, a folded wave opens, and nothing scrolls the page sideways at 400 or 1400 pixels."""

from typing import Any

import pytest

from sessions_app.models import Session
from tests.browser.support import attribute_values, console_errors, horizontal_overflow, log_in, wait_for
from tests.sessions_app.factories import make_session, make_thousand_tasks

pytestmark = pytest.mark.django_db(transaction=True)
WIDTHS = [1400, 400]


def open_waves(browser: Any) -> list[str]:
    return attribute_values(browser, "details.tg-wave[open]", "data-wave")


@pytest.mark.parametrize("browser", WIDTHS, indirect=True, ids=[f"{w}px" for w in WIDTHS])
def test_a_thousand_tasks_read_wave_by_wave_and_filter(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    session: Session = make_session(key="big-loop")
    make_thousand_tasks(session)
    log_in(browser, live_server)

    # The console: the current wave (10) and the next drawn first, every other wave one line.
    browser.get(f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/")
    wait_for(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#content-main").get_attribute("data-polls"))
    assert open_waves(browser) == ["Wave 10", "Wave 11"]
    panel = browser.find_element(By.ID, "rc-task-graph")
    assert len(panel.find_elements(By.CSS_SELECTOR, "a.tg-box")) == 100
    assert attribute_values(browser, "#rc-task-graph .tg-folded", "data-wave")[:2] == ["Wave 12", "Wave 13"]
    assert horizontal_overflow(browser) <= 0, f"the console scrolls sideways at {browser.width}px"

    # A finished wave, from its line on the console: the graph's page opens it there.
    panel.find_element(By.CSS_SELECTOR, '.tg-folded[data-wave="Wave 1"] a').click()
    wait_for(browser, lambda b: "Wave 1" in open_waves(b))
    assert browser.find_element(By.CSS_SELECTOR, '#tg-wave-1 a[data-task="t-0"]').is_displayed()
    assert horizontal_overflow(browser) <= 0, f"the graph's page scrolls sideways at {browser.width}px"

    # Filter by status, then by agent too.
    Select(browser.find_element(By.NAME, "status")).select_by_value("in_progress")
    browser.find_element(By.CSS_SELECTOR, 'button[data-action="filter"]').click()
    wait_for(browser, lambda b: "50 of 1000 tasks" in b.find_element(By.CSS_SELECTOR, ".tg-filters").text)
    assert set(attribute_values(browser, "a.tg-box", "class")) == {"tg-box tg-s-in_progress"}
    Select(browser.find_element(By.NAME, "agent")).select_by_value("exec-3")
    browser.find_element(By.CSS_SELECTOR, 'button[data-action="filter"]').click()
    wait_for(browser, lambda b: "7 of 1000 tasks" in b.find_element(By.CSS_SELECTOR, ".tg-filters").text)
    keys = attribute_values(browser, "a.tg-box", "data-task")
    assert keys == [f"t-{n}" for n in range(450, 500) if n % 7 == 3]
    assert horizontal_overflow(browser) <= 0, f"the filtered graph scrolls sideways at {browser.width}px"
    assert console_errors(browser) == []
