"""The Ralph loop's turn rule (ralphsite.core.ralph_loop): pure, shared by the server and the `ralph` client."""

import pytest

from ralphsite.core.ralph_loop import (
    LoopSpec,
    TurnAction,
    TurnReason,
    completion_promise_met,
    loop_turn_decide,
    stop_hook_output,
)

LOOP = LoopSpec(prompt="Fix the next failing test.", max_iterations=3, completion_promise="ALL GREEN")


def decide(**overrides):
    arguments = {"loop": LOOP, "iteration": 1, "last_assistant_message": "", "steer": None,
                 "stop_requested": False, "paused": False, **overrides}
    return loop_turn_decide(**arguments)


def test_it_continues_with_the_prompt():
    decision = decide()
    assert (decision.action, decision.reason, decision.prompt) == (TurnAction.CONTINUE, TurnReason.PROMPT, LOOP.prompt)
    assert stop_hook_output(decision) == {"decision": "block", "reason": LOOP.prompt}
    assert not decision.steer_used and not decision.ends_loop


def test_it_continues_with_the_steer_message_instead_of_the_prompt():
    decision = decide(steer="Look at the parser first.")
    assert (decision.action, decision.prompt) == (TurnAction.CONTINUE, "Look at the parser first.")
    assert decision.steer_used


def test_it_ignores_a_blank_steer():
    assert decide(steer="  \n").reason == TurnReason.PROMPT


def test_it_completes_on_the_promise_tag():
    decision = decide(last_assistant_message="Done.\n<promise>ALL\n  GREEN</promise>", stop_requested=True,
                      iteration=3, paused=True)
    assert (decision.action, decision.reason) == (TurnAction.COMPLETE, TurnReason.COMPLETION_PROMISE)
    assert decision.ends_loop and stop_hook_output(decision) == {}


@pytest.mark.parametrize("message", ["ALL GREEN", "<promise>ALL GREEN SOON</promise>", "<promise></promise>", ""])
def test_it_does_not_complete_without_the_exact_promise_in_its_tag(message):
    assert decide(last_assistant_message=message).action == TurnAction.CONTINUE


def test_a_loop_without_a_promise_never_completes():
    assert not completion_promise_met(promise=None, last_assistant_message="<promise></promise>")
    assert not completion_promise_met(promise=" ", last_assistant_message="<promise> </promise>")


def test_it_stops_on_the_operators_stop_before_the_limit_and_the_pause():
    decision = decide(stop_requested=True, iteration=3, paused=True, steer="x")
    assert (decision.action, decision.reason) == (TurnAction.STOP, TurnReason.OPERATOR_STOP)
    assert stop_hook_output(decision) == {}


@pytest.mark.parametrize(("iteration", "action"),
                         [(2, TurnAction.CONTINUE), (3, TurnAction.STOP), (4, TurnAction.STOP)])
def test_it_stops_at_the_iteration_limit(iteration, action):
    decision = decide(iteration=iteration, steer="steer")
    assert decision.action == action
    if action == TurnAction.STOP:
        assert decision.reason == TurnReason.ITERATION_LIMIT and not decision.steer_used


def test_a_loop_without_a_limit_goes_on():
    assert decide(loop=LoopSpec(prompt="p"), iteration=10_000).action == TurnAction.CONTINUE


def test_it_holds_while_paused_and_keeps_the_steer():
    decision = decide(paused=True, steer="later")
    assert (decision.action, decision.reason) == (TurnAction.HOLD, TurnReason.PAUSED)
    assert not decision.steer_used and stop_hook_output(decision) == {}
