"""Safe actions (issue #31 §3): Finish has no default outcome, needs a reason and asks first; Stop needs a
reason and asks first; a pending Stop shows its age until the loop takes it, and a session that ends
without taking it says so on the console and the dashboard; Resume says it starts no process."""

from typing import Any

import pytest

from sessions_app.models import Session, SessionStatus, Signal
from tests.browser.support import Api, console_errors, log_in, wait_for
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db(transaction=True)


def console(browser: Any, live_server: Any, session: Session) -> None:
    browser.get(f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/")


@pytest.mark.parametrize("browser", [1400], indirect=True, ids=["1400px"])
def test_finish_and_stop_ask_first_and_need_a_reason(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    session = make_session(key="careful")
    log_in(browser, live_server)
    console(browser, live_server, session)
    finish = browser.find_element(By.CSS_SELECTOR, ".rl-action-finish")
    # No default outcome: the browser refuses to send the form until one is chosen.
    finish.find_element(By.NAME, "exit_reason").send_keys("all tasks reviewed")
    finish.find_element(By.CSS_SELECTOR, "button").click()
    assert not browser.execute_script("return arguments[0].checkValidity();", finish)
    Select(finish.find_element(By.NAME, "status")).select_by_value("completed")
    finish.find_element(By.CSS_SELECTOR, "button").click()
    prompt = wait_for(browser, lambda b: b.switch_to.alert)
    assert "cannot be resumed" in prompt.text
    prompt.dismiss()  # thought better of it: nothing is sent
    session.refresh_from_db()
    assert session.status == SessionStatus.RUNNING

    # Stop without a reason is refused; with one, it asks, and the pending stop shows its age.
    browser.find_element(By.CSS_SELECTOR, ".rl-action-stop button").click()
    wait_for(browser, lambda b: b.switch_to.alert).accept()
    wait_for(browser, lambda b: "Say why the loop should stop" in b.page_source)
    assert not Signal.objects.exists()
    browser.find_element(By.CSS_SELECTOR, '.rl-action-stop input[name="message"]').send_keys("wrong branch")
    browser.find_element(By.CSS_SELECTOR, ".rl-action-stop button").click()
    wait_for(browser, lambda b: b.switch_to.alert).accept()
    wait_for(browser, lambda b: "Stop signal sent" in b.page_source)
    assert list(Signal.objects.values_list("type", "message")) == [("stop", "wrong branch")]
    pending = browser.find_element(By.CSS_SELECTOR, '[data-pending="stop"]')
    assert "waiting for the loop's next poll" in pending.text and pending.find_element(By.TAG_NAME, "time")

    # The session ends without the loop taking the stop: the console and the dashboard say so.
    Api(live_server, session).call("POST", f"/sessions/{session.pk}/finish/",
                                   {"status": "failed", "exit_reason": "crashed", "agent": "orchestrator"})
    wait_for(browser, lambda b: "ended without taking the stop signal" in b.find_element(
        By.CSS_SELECTOR, '[data-region="header"]').text)
    assert "Signals the loop never took (1)" in browser.find_element(By.ID, "rc-signals").text
    browser.get(f"{live_server.url}/admin/")
    assert "ended without taking 1 signal" in browser.find_element(By.ID, "rd-ended").text

    # Resume says what it does and does not do, before and after.
    console(browser, live_server, session)
    resume = browser.find_element(By.CSS_SELECTOR, ".rl-action-resume button")
    assert "starts no process" in resume.get_attribute("title")
    resume.click()
    prompt = wait_for(browser, lambda b: b.switch_to.alert)
    assert "starts no process" in prompt.text
    prompt.accept()
    wait_for(browser, lambda b: "No process was started" in b.page_source)
    session.refresh_from_db()
    assert session.status == SessionStatus.RUNNING
    assert console_errors(browser) == []
