"""The Ralph loop driven by Claude Code's Stop hook: a LoopRun in a session, decided each turn by
`ralphsite.core.ralph_loop.loop_turn_decide` against the operator's signals (Steer used once, Stop, Pause)."""

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from ralphsite.core.errors import Conflict
from ralphsite.core.ralph_loop import LoopSpec, TurnAction, TurnDecision, TurnReason, loop_turn_decide
from ralphsite.core.services import instance_create, instance_update
from sessions_app import selectors
from sessions_app.models import (
    FINISHED_SESSION_STATUSES,
    Iteration,
    LoopRun,
    LoopRunStatus,
    Session,
    SessionStatus,
    Signal,
    SignalType,
)
from sessions_app.services.base import lock_rows, session_open_check
from sessions_app.services.questions import signal_create, signal_take
from sessions_app.services.sessions import iteration_update, session_finish, session_update

PAUSE_POLL_SECONDS = 5  # how long a held Stop hook waits before asking again
REVIEW_MAX_CHARS = 4000  # the last assistant message kept as the iteration's review
LOOP_AGENT = "claude-code"

_LOOP_END = {  # decision reason → (loop status, session status)
    TurnReason.COMPLETION_PROMISE: (LoopRunStatus.SUCCESS, SessionStatus.COMPLETED),
    TurnReason.OPERATOR_STOP: (LoopRunStatus.STOPPED, SessionStatus.STOPPED),
    TurnReason.ITERATION_LIMIT: (LoopRunStatus.STOPPED, SessionStatus.STOPPED),
}
_EXIT_REASONS = {
    TurnReason.COMPLETION_PROMISE: "completion promise met",
    TurnReason.OPERATOR_STOP: "stopped by the operator",
    TurnReason.ITERATION_LIMIT: "iteration limit reached",
}


@dataclass(frozen=True)
class LoopTurn:
    """A Stop hook's answer: the decision, the loop as it now is, and how long to wait when held."""

    decision: TurnDecision
    loop_run: LoopRun
    wait_seconds: int | None = None


def loop_spec(loop_run: LoopRun) -> LoopSpec:
    return LoopSpec(prompt=loop_run.task, max_iterations=loop_run.max_iterations,
                    completion_promise=loop_run.completion_promise or None)


def loop_run_running(*, session_id: str) -> LoopRun | None:
    return LoopRun.objects.filter(session_id=session_id, status=LoopRunStatus.RUNNING).order_by("-started_at").first()


def loop_run_start(*, session: Session, prompt: str, max_iterations: int | None, completion_promise: str = "",
                   pause_timeout_seconds: int | None = None) -> LoopRun:
    """Start a loop in a running session; a loop already running there is stopped (the newer one replaces it)."""
    with transaction.atomic():
        session_open_check(session_id=session.pk, verb="start a loop")
        for running in lock_rows(LoopRun.objects.filter(session=session, status=LoopRunStatus.RUNNING)):
            instance_update(instance=running, data={"status": LoopRunStatus.STOPPED, "ended_at": timezone.now()})
        return instance_create(model=LoopRun, data={
            "session": session, "task": prompt, "max_iterations": max_iterations,
            "completion_promise": completion_promise, "pause_timeout_seconds": pause_timeout_seconds})


def loop_run_move(*, loop_run: LoopRun, session: Session) -> LoopRun:
    """A loop started before its Claude Code session was known joins that session."""
    with transaction.atomic():
        return instance_update(instance=loop_run, data={"session": session})


def _pending_signals(session_id: str) -> dict[str, Signal]:
    """The oldest unprocessed Steer and Stop of the session, by type (locked: taken at most once)."""
    pending: dict[str, Signal] = {}
    rows = lock_rows(Signal.objects.filter(session_id=session_id, is_processed=False, expired_at__isnull=True,
                                           type__in=[SignalType.STEER, SignalType.STOP])
                     .order_by("sent_at", "id"))
    for signal in rows:
        pending.setdefault(signal.type, signal)
    return pending


def _pause_expired(pause: dict[str, Any], loop_run: LoopRun) -> bool:
    timeout = loop_run.pause_timeout_seconds
    return timeout is not None and timezone.now() >= pause["sent_at"] + timedelta(seconds=timeout)


def _pause_holding(session_id: str) -> dict[str, Any] | None:
    """The operator's Pause that holds the session (its `id`, `type` and `sent_at`; one holds, polled or not,
    until a resume signal is sent: the rule claim-task follows, selectors.session_signal_holding), unless a Stop
    is waiting, which goes first."""
    holding = selectors.session_signal_holding(session_id=session_id)
    return holding if holding and holding["type"] == SignalType.PAUSE else None


def loop_paused(*, loop_run: LoopRun) -> bool:
    """A running loop is paused while an operator's Pause holds (until a resume signal: the console's Continue,
    `ralph loop continue`) and its loop's pause timeout has not passed."""
    if loop_run.status != LoopRunStatus.RUNNING:
        return False
    pause = _pause_holding(loop_run.session_id)
    return pause is not None and not _pause_expired(pause, loop_run)


def loop_turn_end(*, loop_run: LoopRun, turn_key: str, last_assistant_message: str) -> LoopTurn:
    """The Stop hook at the end of a turn of a running loop: decide (loop_turn_decide), then record it. A Steer
    used is taken; a Stop obeyed is taken; a Pause past the loop's pause timeout is taken and the loop goes on.
    The turn's iteration completes (its review is the last assistant message); continuing moves the session to
    its next iteration; completing or stopping finishes the loop and the session. Held (paused): nothing changes.
    The same `turn_key` (the transcript position of the Stop) answers the decision recorded for it."""
    with transaction.atomic():
        loop_run = lock_rows(LoopRun.objects.filter(pk=loop_run.pk)).get()
        recorded = loop_run.last_turn
        if turn_key and recorded.get("key") == turn_key:
            return LoopTurn(_recorded_decision(recorded), loop_run)
        if loop_run.status != LoopRunStatus.RUNNING:
            raise Conflict(f"Loop run {loop_run.pk} is {loop_run.status}, not running.", code="loop_not_running",
                           details={"loop": loop_run.pk, "status": loop_run.status})
        signals = _pending_signals(loop_run.session_id)
        pause = _pause_holding(loop_run.session_id)
        if pause is not None and _pause_expired(pause, loop_run):  # the loop lifts it itself, as a resume
            signal_create(data={"session": loop_run.session, "type": SignalType.RESUME,
                                "message": f"The pause outlasted the loop's {loop_run.pause_timeout_seconds} s."},
                          actor=f"{LOOP_AGENT} (pause timeout)")
            pause = None
        steer = signals.get(SignalType.STEER)
        decision = loop_turn_decide(loop=loop_spec(loop_run), iteration=loop_run.iterations + 1,
                                    last_assistant_message=last_assistant_message,
                                    steer=steer.message if steer else None,
                                    stop_requested=SignalType.STOP in signals, paused=pause is not None)
        if decision.action == TurnAction.HOLD:
            return LoopTurn(decision, loop_run, wait_seconds=PAUSE_POLL_SECONDS)
        if decision.reason == TurnReason.OPERATOR_STOP:
            signal_take(signal=signals[SignalType.STOP], agent=LOOP_AGENT)
        if decision.steer_used and steer is not None:
            signal_take(signal=steer, agent=LOOP_AGENT)
        loop_run = _turn_record(loop_run=loop_run, decision=decision, turn_key=turn_key,
                                last_assistant_message=last_assistant_message)
    return LoopTurn(decision, loop_run)


def _recorded_decision(recorded: dict[str, Any]) -> TurnDecision:
    return TurnDecision(TurnAction(recorded["action"]), TurnReason(recorded["reason"]), prompt=recorded.get("prompt"))


def _turn_record(*, loop_run: LoopRun, decision: TurnDecision, turn_key: str, last_assistant_message: str) -> LoopRun:
    session = lock_rows(Session.objects.filter(pk=loop_run.session_id)).get()
    now = timezone.now()
    iteration = Iteration.objects.filter(session=session, number=session.current_iteration,
                                         completed_at__isnull=True).first()
    if iteration is not None:
        iteration_update(iteration=iteration, data={"completed_at": now,
                                                    "review_content": last_assistant_message[:REVIEW_MAX_CHARS]})
    changes: dict[str, Any] = {
        "iterations": loop_run.iterations + 1,
        "last_turn": {"key": turn_key, "action": decision.action.value, "reason": decision.reason.value,
                      "prompt": decision.prompt},
    }
    ending = _LOOP_END.get(decision.reason)
    if ending is not None:
        changes |= {"status": ending[0], "ended_at": now}
    loop_run = instance_update(instance=loop_run, data=changes)
    if ending is not None and session.status not in FINISHED_SESSION_STATUSES:
        session_finish(session=session, status=ending[1], exit_reason=_EXIT_REASONS[decision.reason],
                       agent=LOOP_AGENT)
    elif ending is None and session.status not in FINISHED_SESSION_STATUSES:
        session_update(session=session, data={"current_iteration": session.current_iteration + 1}, agent=LOOP_AGENT)
    return loop_run
