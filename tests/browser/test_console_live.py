"""One live model drives the whole console (issue #31 §1): a console kept open while the session changes
through the API (a question answered, a task completed and one failed, a signal sent and polled, the
loop paused, usage recorded, the session finished) redraws every panel and every button together, keeps
what the operator is typing, and at every change no panel contradicts the API. One request per poll.

Each change is made while the page is known to show the state before it; the test then waits until the
page holds the server's ETag for the new state (the poll that brought it) and compares every panel
with what the API answers: no timing is asserted.
"""

import threading
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from sessions_app.admin.console import QUESTIONS_PER_PAGE, console_etag
from sessions_app.models import Question, Session, Task
from tests.browser.support import Api, attribute_values, console_errors, log_in, wait_for
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)

OPEN = ("unanswered", "research_needed")


def planned_session() -> Session:
    session = make_session(key="live-loop", current_wave=1, max_concurrency=2)
    first = make_task(session, "t-1", title="Schema", task_type="parallelizable")
    second = make_task(session, "t-2", title="Endpoints", depends_on=(first,), task_type="parallelizable")
    make_task(session, "t-10", title="Docs", depends_on=(first,), task_type="parallelizable")
    make_task(session, "t-11", title="Release", depends_on=(second,))
    for key in ("Q-1", "Q-2"):
        Question.objects.create(session=session, key=key, category="technical", text=f"{key}: integers or decimals?")
    return session


def shown(browser: Any, selector: str) -> list[str]:
    return browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent.trim());", selector)


def pause_holds(signals: list[dict[str, Any]]) -> bool:
    """Whether a Pause holds: one was sent (polled or not) and no resume signal came after it."""
    kinds = [signal["type"] for signal in sorted(signals, key=lambda signal: (signal["sent_at"], signal["id"]))
             if signal["type"] in ("pause", "resume")]
    return bool(kinds) and kinds[-1] == "pause"


def expected_buttons(session: dict[str, Any], signals: list[dict[str, Any]]) -> set[str]:
    running = session["status"] == "running"
    paused = session["state"] == "paused" or pause_holds(signals)
    buttons = {"steer", "stop", "finish", "continue" if paused else "pause"} if running else set()
    return buttons | ({"resume"} if session["status"] not in ("running", "completed") else set())


def assert_console_agrees_with_api(browser: Any, api: Api, session_id: str) -> None:
    """Every panel and button of the open console against the API's answers, read after the page drew
    the server's latest state."""
    session = api.call("GET", f"/sessions/{session_id}/")
    tasks = api.rows(f"/tasks/?session={session_id}")
    questions = [q for q in api.rows(f"/questions/?session={session_id}") if q["status"] in OPEN]
    every_signal = api.rows(f"/signals/?session={session_id}")
    # running: the signals not yet polled; ended: those the session ended without polling (expired then)
    signals = [s for s in every_signal if (s["expired_at"] is not None if session["status"] != "running"
                                           else not s["is_processed"] and s["expired_at"] is None)]
    root = "#content-main"
    assert f"rl-v-{session['status']}" in attribute_values(browser, f'{root} [data-live="status"]', "class")[0]
    assert f"rl-v-{session['state']}" in attribute_values(browser, f'{root} [data-live="state"]', "class")[0]
    assert Decimal(shown(browser, '[data-live="cost"]')[0]) == Decimal(session["total_cost_usd"])
    tokens = session["total_tokens_input"] + session["total_tokens_output"]
    assert shown(browser, '[data-live="tokens"]') == [f"{tokens:,}"]
    running = sorted(task["key"] for task in tasks if task["status"] == "in_progress")
    assert sorted(attribute_values(browser, "#rc-work [data-task]", "data-task")) == running
    # The task graph: each box drawn (the open waves') in its task's status, and every wave's counts, drawn
    # or folded, sum to the tasks' statuses.
    boxes = dict(zip(attribute_values(browser, ".tg-box", "data-task"), attribute_values(browser, ".tg-box", "class"),
                     strict=True))
    statuses = {task["key"]: task["status"] for task in tasks}
    assert set(boxes) <= set(statuses)
    for key, classes in boxes.items():
        assert f"tg-s-{statuses[key]}" in classes.split(), (key, classes)
    counted: Counter[str] = Counter()
    for classes, text in zip(attribute_values(browser, "#rc-task-graph .tg-count", "class"),
                             shown(browser, "#rc-task-graph .tg-count"), strict=True):
        counted[classes.split("tg-s-")[1]] += int(text.split()[0])
    assert counted == Counter(statuses.values())
    # Failures: every failed task is listed, and "Nothing failed" only when nothing did.
    failures = shown(browser, "#rc-failures")[0]
    failed = [task["key"] for task in tasks if task["status"] == "failed"]
    for key in failed:
        assert key in failures
    if failed:
        assert "Nothing failed" not in failures
    # Questions and signals: the true counts, one answer form per open question of the page.
    assert shown(browser, "#rc-questions h2")[0].startswith(f"Open questions ({len(questions)})")
    forms = attribute_values(browser, "#rc-questions form", "data-key")
    assert len(forms) == min(len(questions), QUESTIONS_PER_PAGE)
    assert set(forms) <= {f"answer-{q['id']}" for q in questions}
    heading = "Signals not yet polled" if session["status"] == "running" else "Signals the loop never took"
    assert shown(browser, "#rc-signals h2")[0].startswith(f"{heading} ({len(signals)})")
    # The cost panel sums to the header's cost.
    panel_usd = [Decimal(cell) for cell in shown(browser, "#rc-cost tbody tr td:last-child")]
    assert sum(panel_usd, Decimal(0)) == Decimal(session["total_cost_usd"])
    # The buttons are the ones the session's state allows.
    assert set(attribute_values(browser, '[data-region="actions"] button[data-action]', "data-action")) == \
        expected_buttons(session, every_signal)
    assert ("ended" if session["status"] != "running" else "live") in shown(browser, '[data-live="indicator"]')


def settle(browser: Any, session: Session) -> None:
    """Wait for the poll that brings the server's current state (the page then holds its ETag)."""
    user_id = get_user_model().objects.get(username="operator").pk
    wait_for(browser, lambda b: b.find_element("css selector", "#content-main").get_attribute("data-etag")
             == console_etag(session_id=session.pk, user_id=user_id))


@pytest.mark.parametrize("browser", [1400], indirect=True, ids=["1400px"])
def test_every_panel_and_button_follows_the_api_without_a_reload(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    session = planned_session()
    log_in(browser, live_server)
    api = Api(live_server, session)
    browser.get(f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/")
    # Room for every poll's timing entry (the browser keeps 250 by default).
    browser.execute_script("window.__notReloaded = true; performance.setResourceTimingBufferSize(100000);")
    settle(browser, session)
    assert_console_agrees_with_api(browser, api, session.pk)

    # The operator starts typing a steer message and an answer; polls redraw around them.
    browser.find_element(By.CSS_SELECTOR, '.rl-action-steer input[name="message"]').send_keys("prefer small PRs")
    q2 = Question.objects.get(key="Q-2")
    answer = browser.find_element(By.CSS_SELECTOR, f'form[data-key="answer-{q2.pk}"] textarea[name="answer"]')
    answer.send_keys("Integer cents, half-typed")
    # Polls while nothing changes: answered 304, and nothing is redrawn.
    wait_for(browser, lambda b: int(b.find_element(By.CSS_SELECTOR, "#content-main").get_attribute("data-polls")
                                    or 0) >= 2)

    claims: dict[str, dict[str, Any]] = {}

    def claim(agent: str) -> None:
        claims[agent] = api.call("POST", f"/sessions/{session.pk}/claim-task/", {"agent": agent, "lease_seconds": 300})

    def status(agent: str, value: str, annotation: str) -> None:
        """Set the status of the task `agent` claimed; under the claim while it holds (review ends it)."""
        task = claims[agent]
        held = Task.objects.filter(pk=task["id"], status="in_progress").exists()
        api.call("POST", f"/tasks/{task['id']}/status/", {"status": value, "annotation": annotation,
                                                          "agent": "orchestrator",
                                                          **({"claim": task["claim"]} if held else {})})

    changes = [
        ("task claimed", lambda: claim("exec-a")),
        ("question answered", lambda: api.call("POST", f"/questions/{Question.objects.get(key='Q-1').pk}/answer/",
                                               {"answer": "decimals", "agent": "orchestrator"})),
        ("usage recorded", lambda: api.call("POST", "/token-usage/", {
            "session": session.pk, "model": "claude-sonnet-4", "agent": "exec-a", "task_key": "t-1",
            "input_tokens": 12000, "output_tokens": 2100, "cost_usd": "0.412000"})),
        ("task in review", lambda: status("exec-a", "review_pending", "reported")),
        ("task completed", lambda: status("exec-a", "completed", "reviewed")),
        ("second wave claimed", lambda: (claim("exec-b"), claim("exec-c"))),
        ("task failed", lambda: status("exec-c", "failed", "TypeError in widget_label()")),
        ("pause sent", lambda: api.call("POST", "/signals/", {"session": session.pk, "type": "pause"})),
        ("pause polled", lambda: api.call("POST", f"/sessions/{session.pk}/poll-signal/", {"agent": "orchestrator"})),
        ("loop paused", lambda: api.call("POST", f"/sessions/{session.pk}/transition/", {
            "state": "paused", "agent": "orchestrator", "message": "paused by an operator"})),
        ("session finished", lambda: api.call("POST", f"/sessions/{session.pk}/finish/", {
            "status": "failed", "exit_reason": "t-2 failed", "agent": "orchestrator"})),
    ]
    for name, change in changes:
        change()
        settle(browser, session)
        try:
            assert_console_agrees_with_api(browser, api, session.pk)
        except AssertionError as error:
            raise AssertionError(f"after {name}: {error}") from error
        if name != "session finished":  # the finished session has no steer button left
            assert browser.find_element(By.CSS_SELECTOR, '.rl-action-steer input[name="message"]').get_attribute(
                "value") == "prefer small PRs", name
        typed = browser.find_element(By.CSS_SELECTOR, f'form[data-key="answer-{q2.pk}"] textarea[name="answer"]')
        assert typed.get_attribute("value") == "Integer cents, half-typed", name
        assert browser.switch_to.active_element == typed, f"the answer lost its focus after {name}"

    assert browser.execute_script("return window.__notReloaded === true;"), "the console updated without a reload"
    # One request per poll: every poll of the live view is one fetch (one more may have been answered and
    # not yet counted: the page counts a poll once it has drawn it), and unchanged polls were answered 304.
    polls, fetched = browser.execute_script("""
        return [Number(document.querySelector('#content-main').dataset.polls),
                performance.getEntriesByType('resource').filter((e) => e.name.includes('/live/'))
                    .map((e) => e.responseStatus)];""")
    assert polls <= len(fetched) <= polls + 1 and 304 in fetched and 200 in fetched
    assert console_errors(browser) == []


@pytest.mark.parametrize("browser", [1400], indirect=True, ids=["1400px"])
def test_the_dashboard_follows_the_sessions_without_a_reload(browser: Any, live_server: Any) -> None:
    from selenium.webdriver.common.by import By

    session = planned_session()
    log_in(browser, live_server)
    browser.execute_script("window.__notReloaded = true;")
    assert browser.find_element(By.ID, "rd-open_questions").text.startswith("2")
    api = Api(live_server, session)
    api.call("POST", f"/questions/{Question.objects.get(key='Q-1').pk}/answer/", {"answer": "decimals"})
    wait_for(browser, lambda b: b.find_element(By.ID, "rd-open_questions").text.startswith("1"))
    api.call("POST", f"/sessions/{session.pk}/finish/", {"status": "failed", "exit_reason": "gave up on t-2"})
    wait_for(browser, lambda b: "gave up on t-2" in b.find_element(By.ID, "rd-ended").text)
    assert browser.find_element(By.ID, "rd-running-count").text.startswith("0")
    assert browser.execute_script("return window.__notReloaded === true;")
    assert console_errors(browser) == []


@pytest.mark.parametrize("browser", [1400], indirect=True, ids=["1400px"])
@pytest.mark.long
def test_a_console_open_across_a_whole_demo_loop_never_contradicts_the_api(browser: Any, live_server: Any) -> None:
    """`make demo`'s loop (ralphsite.agents.demo) runs against the server while the console is open. The
    loop's calls pass a gate: at each check the loop waits, the page catches up with the server (its
    ETag), and every panel is compared with the API; then the loop goes on until it changes something."""
    from ralphsite.agents import demo
    from ralphsite.tokens.services import api_token_create

    log_in(browser, live_server)
    operator = get_user_model().objects.get(username="operator")
    gate = threading.Lock()

    class GatedApi(demo.Api):
        def call(self, *args: Any, **kwargs: Any) -> Any:
            with gate:
                return super().call(*args, **kwargs)

    token = api_token_create(user=operator, scope="global", label="demo").secret
    loop = demo.Loop(GatedApi(live_server.url, token), pace=0.05, say=lambda line: None)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            loop.run()
        except BaseException as error:  # reported by the test, not lost in the thread
            failures.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for(browser, lambda b: Session.objects.exists(), seconds=30)
    session = Session.objects.get()
    with gate:
        browser.get(f"{live_server.url}/admin/sessions_app/session/{session.pk}/change/")
    api = Api(live_server, session)
    checks = 0
    while True:
        with gate:
            ended = not thread.is_alive()
            settle(browser, session)
            assert_console_agrees_with_api(browser, api, session.pk)
            checks += 1
            seen = console_etag(session_id=session.pk, user_id=operator.pk)
        if ended:
            break
        # Until the loop changes the session again, or ends.
        wait_for(browser, lambda b, seen=seen: not thread.is_alive()
                 or console_etag(session_id=session.pk, user_id=operator.pk) != seen, seconds=60)
    assert failures == []
    session.refresh_from_db()
    assert session.status == "completed" and checks >= 10, (session.status, checks)
    assert console_errors(browser) == []
