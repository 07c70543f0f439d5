"""The Ralph loop's turn rule: what happens when Claude Code's agent stops at the end of a turn.

One pure function (standard library only, no Django), used by the server's Stop hook and by the `ralph`
client when the server cannot be reached, so both decide alike.

The completion promise is met when the last assistant message holds `<promise>TEXT</promise>` whose text,
whitespace collapsed, equals the loop's promise (the convention of Claude Code's own ralph-loop plugin:
a bare mention of the words, e.g. quoting the prompt, completes nothing).
"""

import re
from dataclasses import dataclass
from enum import StrEnum

_PROMISE_TAG = re.compile(r"<promise>(.*?)</promise>", re.DOTALL | re.IGNORECASE)


class TurnAction(StrEnum):
    CONTINUE = "continue"  # block the stop: the agent takes `prompt` as its next input
    COMPLETE = "complete"  # the completion promise was met: the loop (and its session) completes
    STOP = "stop"  # the iteration limit or the operator's Stop: the loop stops
    HOLD = "hold"  # paused by the operator: ask again later, spend nothing


class TurnReason(StrEnum):
    PROMPT = "prompt"
    STEER = "steer"
    COMPLETION_PROMISE = "completion_promise"
    ITERATION_LIMIT = "iteration_limit"
    OPERATOR_STOP = "operator_stop"
    PAUSED = "paused"


@dataclass(frozen=True)
class LoopSpec:
    """What `ralph loop start` registers: the prompt fed back each turn, the limit (None: none) and the promise
    (None or empty: none)."""

    prompt: str
    max_iterations: int | None = None
    completion_promise: str | None = None


@dataclass(frozen=True)
class TurnDecision:
    action: TurnAction
    reason: TurnReason
    prompt: str | None = None  # the next input, for CONTINUE only

    @property
    def steer_used(self) -> bool:
        """The operator's Steer message became this turn's prompt: it is spent (used once)."""
        return self.reason == TurnReason.STEER

    @property
    def ends_loop(self) -> bool:
        return self.action in (TurnAction.COMPLETE, TurnAction.STOP)


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def completion_promise_met(*, promise: str | None, last_assistant_message: str) -> bool:
    if not promise or not promise.strip():
        return False
    wanted = _collapsed(promise)
    return any(_collapsed(found) == wanted for found in _PROMISE_TAG.findall(last_assistant_message or ""))


def loop_turn_decide(*, loop: LoopSpec, iteration: int, last_assistant_message: str, steer: str | None,
                     stop_requested: bool, paused: bool) -> TurnDecision:
    """The decision at the end of turn `iteration` (1 for the first turn the loop ran).

    In this order: the completion promise completes (the work is done, whatever else was asked); the operator's
    Stop stops; the iteration limit stops (`iteration >= max_iterations`: a limit of 3 runs three turns); a Pause
    holds; otherwise the loop continues with the operator's Steer message when one is pending (used once), else
    with the loop's prompt.
    """
    if completion_promise_met(promise=loop.completion_promise, last_assistant_message=last_assistant_message):
        return TurnDecision(TurnAction.COMPLETE, TurnReason.COMPLETION_PROMISE)
    if stop_requested:
        return TurnDecision(TurnAction.STOP, TurnReason.OPERATOR_STOP)
    if loop.max_iterations is not None and iteration >= loop.max_iterations:
        return TurnDecision(TurnAction.STOP, TurnReason.ITERATION_LIMIT)
    if paused:
        return TurnDecision(TurnAction.HOLD, TurnReason.PAUSED)
    if steer is not None and steer.strip():
        return TurnDecision(TurnAction.CONTINUE, TurnReason.STEER, prompt=steer)
    return TurnDecision(TurnAction.CONTINUE, TurnReason.PROMPT, prompt=loop.prompt)


def stop_hook_output(decision: TurnDecision) -> dict[str, str]:
    """What the Stop hook prints: a block with the next prompt to continue, nothing to let the agent stop."""
    if decision.action == TurnAction.CONTINUE and decision.prompt is not None:
        return {"decision": "block", "reason": decision.prompt}
    return {}
