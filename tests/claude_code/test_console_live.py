"""The console follows a real Claude Code loop while it runs (issue #30): the real CLI runs a Ralph loop headless
against the scripted Messages API, recorded by `ralph hook` into the live server, while a real browser keeps the
session's console open. At the start of each turn (the CLI waits for the stub's answer, so nothing moves) and
once the loop has ended, the open page shows, without a reload, what the API answers at that moment: the loop's
turns, the session's iteration, its cost and tokens, and the conversation's latest messages with their tool calls.

The page is waited for until it shows the API's state (it polls every 250 ms): no timing is asserted."""

import importlib
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from ledger_app.models import ModelPrice
from ralphsite.tokens.services import api_token_create
from tests.browser.support import console_errors, log_in, open_browser, screenshot, wait_for
from tests.claude_code.messages_stub import MessagesStub, RecordedRequest, Usage
from tests.claude_code.project import ClaudeProject, new_project
from tests.claude_code.script import (
    API,
    Iteration,
    bash,
    cost_of,
    every,
    price_list,
    promise,
    script_of,
    turn,
)
from tests.e2e.client import Agent

pytestmark = [pytest.mark.smoke, pytest.mark.django_db(transaction=True)]

PROMPT = "Count to three, one number a turn."
PROMISE = "COUNTED"
MAX_ITERATIONS = 5
CLAUDE_SESSION = "6c1f0e2a-9b3d-4f5e-8a7b-2d4c6e8f0a13"
# The price list the server ships (a data migration): a transactional test that ran before this one flushed it.
SHIPPED_PRICES = importlib.import_module("ledger_app.migrations.0012_token_usage_iteration_and_claude_prices")


@pytest.fixture
def browser(request: pytest.FixtureRequest, settings: Any) -> Iterator[Any]:
    """The browser tests' Chromium (parametrize its width indirectly), on consoles that poll every 250 ms as
    theirs do (tests/browser/conftest.py)."""
    settings.RALPH_CONSOLE_POLL_MS = 250
    yield from open_browser(request)


def console_view(browser: Any) -> dict[str, Any]:
    """What the open console shows of the loop, read in one round trip."""
    view = browser.execute_script("""
        const text = (selector, root = document) => root.querySelector(selector)?.textContent.trim() ?? null;
        return {
            status: document.querySelector('[data-live="status"]')?.className ?? null,
            iteration: text('[data-live="iteration"]'),
            loop: text('[data-live="loop"]'),
            cost: text('[data-live="cost"]'),
            tokens: text('[data-live="tokens"]'),
            messages: [...document.querySelectorAll('#rc-transcript [data-message]')].map((item) => [
                Number(item.dataset.message), item.dataset.role, text('.rc-message-text', item) ?? '',
                [...item.querySelectorAll('[data-tool-call]')].map((call) => call.textContent.trim())]),
        };""")
    view["cost"] = Decimal(view["cost"]) if view["cost"] else None
    return view


def api_view(operator: Agent, browser: Any) -> dict[str, Any]:
    """What the console must show, from the API (the transcript: the messages the console has room for)."""
    session = operator.ok("GET", f"{API}/sessions/{CLAUDE_SESSION}/")
    [loop] = every(operator, "loop-runs", session=session["id"])
    # The chat is made at the first hook that carries a transcript entry: none before the first answer.
    runs = [run for chat in every(operator, "chats", session=session["id"]) for run in every(operator, "runs",
                                                                                             chat=chat["id"])]
    messages = sorted((message for run in runs for message in every(operator, "messages", run=run["id"])),
                      key=lambda message: message["sequence_number"])
    shown = browser.execute_script(
        "return Number(document.querySelector('#rc-transcript')?.dataset.shown ?? 0);")
    return {
        "status": f"rl-badge rl-v-{session['status']}",
        "iteration": f"{session['current_iteration']} / {session['max_iterations']}",
        "loop": f"{loop['iterations']} of {loop['max_iterations']} turns, {loop['status']}",
        "cost": Decimal(session["total_cost_usd"]),
        "tokens": f"{session['total_tokens_input'] + session['total_tokens_output']:,}",
        "messages": [[message["sequence_number"], message["role"], message["content"],
                      [f"{call['name']} {call.get('status') or 'pending'}".strip()
                       for call in message["tool_calls"] or []]]
                     for message in messages[-shown:] if shown],
    }


def console_agrees(browser: Any, operator: Agent) -> dict[str, Any]:
    """Wait until the open page shows what the API answers now (the page polls); that view."""
    expected = api_view(operator, browser)
    try:
        wait_for(browser, lambda b: console_view(b) == expected)
    except Exception:  # the wait's timeout: show the difference
        assert console_view(browser) == expected
    return expected


@pytest.mark.parametrize("browser", [1400], indirect=True, ids=["1400px"])
def test_the_console_shows_a_claude_code_loop_live_while_it_runs(browser: Any, live_server: Any, tmp_path: Path,
                                                                 claude_cli: Path,
                                                                 messages_stub: MessagesStub) -> None:
    for model, prices in SHIPPED_PRICES.CLAUDE_PRICES.items():
        ModelPrice.objects.get_or_create(model=model, valid_from=SHIPPED_PRICES.PRICES_FROM, defaults=dict(zip(
            ("input_per_mtok", "output_per_mtok", "cached_read_per_mtok", "cached_write_per_mtok"),
            map(Decimal, prices), strict=True)))
    log_in(browser, live_server)
    admin = get_user_model().objects.get(username="operator")
    admin_token = api_token_create(user=admin, scope="global", label="claude code test").secret
    project: ClaudeProject = new_project(tmp_path, server_url=live_server.url, admin_token=admin_token,
                                         stub=messages_stub)
    project.ralph("loop", "start", PROMPT, "--max-iterations", str(MAX_ITERATIONS), "--completion-promise", PROMISE,
                  token=project.project_token())
    operator = project.operator()
    prices = price_list(operator)
    seen: list[dict[str, Any]] = []

    def check(*, first: bool = False) -> Callable[[RecordedRequest], None]:
        """At the start of a turn: the console (opened at the first) agrees with the API."""
        def at_turn(request: RecordedRequest) -> None:
            checker = project.operator()  # this runs on the stub's thread: a connection of its own
            try:
                if first:
                    session = checker.ok("GET", f"{API}/sessions/{CLAUDE_SESSION}/")
                    browser.get(f"{live_server.url}/admin/sessions_app/session/{session['id']}/change/")
                    browser.execute_script("window.__notReloaded = true;")
                seen.append(console_agrees(browser, checker))
            finally:
                checker.close()
        return at_turn

    iterations = [
        Iteration((turn("msg_live_1a", Usage(1200, 80, 300, 0), "Counting.", bash("echo 1"),
                        before=check(first=True)),
                   turn("msg_live_1b", Usage(1500, 40, 0, 1200), "One.", before=check()))),
        Iteration((turn("msg_live_2a", Usage(1700, 60, 0, 1500), "", bash("echo 2"), before=check()),
                   turn("msg_live_2b", Usage(1800, 25, 0, 1700), "Two.", before=check()))),
        Iteration((turn("msg_live_3", Usage(1900, 20, 0, 1800), f"Three. {promise(PROMISE)}", before=check()),)),
    ]
    project.stub.load(script_of(iterations))

    _, run = project.loop(PROMPT, session_id=CLAUDE_SESSION)

    assert (run.status, run.result()["result"]) == (0, f"Three. {promise(PROMISE)}"), run.stderr
    final = console_agrees(browser, operator)
    assert browser.execute_script("return window.__notReloaded === true;"), "the console was reloaded"
    assert console_errors(browser) == []
    screenshot(browser, "console-claude-code-loop")

    # What the page showed along the way: each turn's state, not only the last. Within a turn a call's usage
    # arrives with the next hook that finds its transcript entry written; at a turn's Stop the whole turn is in.
    def cost_of_iterations(count: int) -> Decimal:
        return sum((cost_of(t.usage, prices) for t in script_of(iterations[:count])), Decimal(0))

    assert [view["loop"] for view in seen] == [
        f"0 of {MAX_ITERATIONS} turns, running", f"0 of {MAX_ITERATIONS} turns, running",
        f"1 of {MAX_ITERATIONS} turns, running", f"1 of {MAX_ITERATIONS} turns, running",
        f"2 of {MAX_ITERATIONS} turns, running"]
    costs = [view["cost"] for view in seen]
    assert costs == sorted(costs) and (costs[0], costs[2], costs[4]) == (
        Decimal(0), cost_of_iterations(1), cost_of_iterations(2))
    # The conversation grows turn by turn: "One." shows while the second turn runs.
    assert seen[0]["messages"] == [] or all(message[2] != "One." for message in seen[0]["messages"])
    assert any(message[2] == "One." for message in seen[2]["messages"])
    assert any("Bash" in call for message in seen[2]["messages"] for call in message[3])
    # At the end: the loop's three turns, its session completed, every call's cost, the promise last.
    assert final["loop"] == f"3 of {MAX_ITERATIONS} turns, success"
    assert final["status"] == "rl-badge rl-v-completed"
    assert final["cost"] == sum((cost_of(t.usage, prices) for t in script_of(iterations)), Decimal(0))
    assert final["messages"][-1][1:] == ["assistant", f"Three. {promise(PROMISE)}", []]
    operator.close()
