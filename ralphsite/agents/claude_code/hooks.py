"""A Claude Code hook, recorded: `claude_code_hook_record` is the one service behind `POST /api/v1/claude-code/hooks/`.

In one transaction: the Claude Code session's Ralph Site session (sessions.claude_session_get); the transcript's new
entries as the session's conversation (one chat and run per session; each entry one message whose id derives from
the entry's uuid, so an entry sent twice is stored once; a tool's result joins its call); each API call's usage as
one TokenUsage row (request id = the API message id: counted once), priced from the model prices, booked against the
session's run (source "run": the conversation shows each run's tokens and cost), in the session's current iteration
(a subagent's own transcript, sent at its SubagentStop, for its usage only); each tool use
(PostToolUse, PostToolUseFailure) as an observation (id from its tool_use_id); then the event's own answer:
SessionStart's context, Stop's loop decision, SessionEnd's finish (SubagentStop decides nothing).
"""

import hashlib
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import transaction

from conversations_app.models import Chat, Message, MessageRole, Observation, ObservationType, Run
from conversations_app.services import chat_create, message_append, message_update, observation_create, run_create
from ledger_app.models import TokenUsage, UsageSource
from ledger_app.services import PriceList, usage_record
from ralphsite.agents.claude_code.context import session_start_context
from ralphsite.agents.claude_code.sessions import claude_session_get
from ralphsite.agents.claude_code.transcript import TranscriptBatch, transcript_read
from ralphsite.core.access import Scope
from ralphsite.core.errors import InvalidInput
from ralphsite.core.ralph_loop import TurnAction
from ralphsite.core.ulid import ulid_derived, ulid_new
from sessions_app.models import FINISHED_SESSION_STATUSES, LoopRun, LoopRunStatus, Session
from sessions_app.services.loops import LOOP_AGENT, LoopTurn, loop_paused, loop_run_running, loop_turn_end
from sessions_app.services.sessions import session_finish, session_update

OBSERVATION_MAX_CHARS = 4000
# Hooks that mean the person (or Claude Code) is working in the session again: a finished session runs again.
_REOPENING_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
_IMPORTANCE = {ObservationType.ERROR: 0.8, ObservationType.BASH: 0.5, ObservationType.TOOL_USE: 0.4,
               ObservationType.SUCCESS: 0.9}
_LOOP_STATES = {LoopRunStatus.SUCCESS: "completed", LoopRunStatus.STOPPED: "stopped", LoopRunStatus.FAILED: "stopped"}


@dataclass(frozen=True)
class HookAnswer:
    output: dict[str, Any]
    session: Session
    loop: dict[str, Any] | None


def _text(payload: dict[str, Any], name: str, *, required: bool = False) -> str:
    value = payload.get(name, "")
    if not isinstance(value, str) or (required and not value):
        raise InvalidInput(f"The hook's payload has no {name} string.", code="invalid_hook_payload",
                           details={f"payload.{name}": ["A non-empty string." if required else "A string."]})
    return value


def claude_code_hook_record(*, scope: Scope, event: str, payload: dict[str, Any],
                            transcript: dict[str, Any]) -> HookAnswer:
    claude_session = _text(payload, "session_id", required=True)
    cwd = _text(payload, "cwd", required=True)
    if payload.get("hook_event_name", event) != event:
        raise InvalidInput("The event and the payload's hook_event_name differ.", code="invalid_hook_payload",
                           details={"event": [f"{event!r} is not {payload.get('hook_event_name')!r}."]})
    batch = transcript_read(transcript.get("entries", []))
    with transaction.atomic():
        session, _created = claude_session_get(scope=scope, key=claude_session, path=cwd,
                                               reopen=event in _REOPENING_EVENTS,
                                               join_pending=event in _REOPENING_EVENTS | {"Stop"})
        if not transcript.get("subagent"):  # a subagent's conversation is its own: its tokens count, not its words
            _conversation_record(session=session, batch=batch)
        _usage_record(session=session, batch=batch)
        if event in ("PostToolUse", "PostToolUseFailure"):
            _tool_observed(session=session, payload=payload, failed=event == "PostToolUseFailure")
        output, turn = _event_answer(session=session, event=event, payload=payload, batch=batch,
                                     turn_key=str(transcript.get("next_offset", "")))
        session.refresh_from_db()
        loop_run = turn.loop_run if turn else LoopRun.objects.filter(session=session).order_by("-started_at").first()
    return HookAnswer(output=output, session=session, loop=loop_state(loop_run, turn))


def loop_state(loop_run: LoopRun | None, turn: LoopTurn | None = None) -> dict[str, Any] | None:
    if loop_run is None:
        return None
    held = turn is not None and turn.decision.action == TurnAction.HOLD
    paused = held or (turn is None and loop_paused(loop_run=loop_run))
    state = "paused" if paused else _LOOP_STATES.get(loop_run.status, "running")
    return {"id": loop_run.pk, "state": state, "iteration": loop_run.iterations,
            "max_iterations": loop_run.max_iterations, "wait_seconds": turn.wait_seconds if turn else None}


# -- the conversation ---------------------------------------------------------------------------

def _run_id(session: Session) -> str:
    """The id of the session's one run, derived from the session's (no query)."""
    return ulid_derived("claude-code run", session.pk)


def _run_of(session: Session) -> Run:
    """The session's one chat and run (ids derived from the session's: made once)."""
    chat_id, run_id = ulid_derived("claude-code chat", session.pk), _run_id(session)
    if not Chat.objects.filter(pk=chat_id).exists():
        chat_create(data={"id": chat_id, "title": f"Claude Code {session.key}"[:500], "session": session,
                          "tags": ["claude-code"]})
    run = Run.objects.filter(pk=run_id).first()
    return run if run is not None else run_create(data={"id": run_id, "chat_id": chat_id})


def _conversation_record(*, session: Session, batch: TranscriptBatch) -> None:
    if not batch.messages and not batch.tool_results:
        return
    run = _run_of(session)
    items = [{"id": ulid_derived("claude-code message", f"{session.pk}:{m.uuid}"), "role": m.role,
              "content": m.content, "tool_calls": m.tool_calls or None} for m in batch.messages]
    for start in range(0, len(items), 500):
        message_append(run_id=run.pk, items=items[start:start + 500], reopen=True)
    if batch.tool_results:
        _tool_results_join(run=run, batch=batch)


def _tool_results_join(*, run: Run, batch: TranscriptBatch) -> None:
    """Each tool result joins its call in the assistant message that made it (the run's latest calls)."""
    results = {result.tool_use_id: result for result in batch.tool_results}
    callers = (Message.objects.filter(run=run, role=MessageRole.ASSISTANT, tool_calls__isnull=False)
               .order_by("-sequence_number")[:200])
    for message in callers:
        calls = message.tool_calls or []
        if not any(isinstance(call, dict) and call.get("id") in results for call in calls):
            continue
        joined = [{**call, "status": "failed" if results[call["id"]].is_error else "completed",
                   "result": results[call["id"]].content} if call.get("id") in results else call for call in calls]
        if joined != calls:
            message_update(message=message, data={"tool_calls": joined})


# -- usage --------------------------------------------------------------------------------------

def _usage_record(*, session: Session, batch: TranscriptBatch) -> None:
    """Each call once (its request id), booked against the session's run; priced by the model prices. A model with
    no price is recorded with its tokens at cost 0 (an operator adds its price in the admin): a hook never loses
    the tokens it reports."""
    if not batch.usages:
        return
    known = set(TokenUsage.objects.filter(session=session, request_id__in=list(batch.usages))
                .values_list("request_id", flat=True))
    prices, items = PriceList(), []
    # Every call of the Claude session is its run's, a subagent's too (whose batch may come before the run is made).
    run_id = _run_id(session)
    for usage in batch.usages.values():
        if usage.request_id in known:
            continue
        item = {"session_id": session.pk, "request_id": usage.request_id,
                "model": usage.model, "agent": LOOP_AGENT,
                "operation": "claude-code", "iteration": session.current_iteration, "cost_usd": None,
                "source": UsageSource.RUN, "source_id": run_id,
                **usage.tokens, **({"recorded_at": usage.timestamp} if usage.timestamp else {})}
        try:
            items.append(prices.priced(item))
        except InvalidInput:
            items.append({**item, "cost_usd": Decimal(0)})
    if items:
        usage_record(items=items)


# -- memory -------------------------------------------------------------------------------------

def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for name in ("command", "file_path", "pattern", "url", "query", "stdout", "content", "output"):
            if isinstance(value.get(name), str):
                return value[name] + (f"\n{value['stderr']}" if name == "stdout" and value.get("stderr") else "")
    return "" if value is None else str(value)


def _tool_observed(*, session: Session, payload: dict[str, Any], failed: bool) -> None:
    tool_use_id, tool_name = payload.get("tool_use_id"), payload.get("tool_name")
    if not isinstance(tool_name, str) or not tool_name:
        return
    has_key = isinstance(tool_use_id, str) and bool(tool_use_id)
    observation_id = ulid_derived("claude-code tool use", f"{session.pk}:{tool_use_id}") if has_key else ulid_new()
    if has_key and Observation.objects.filter(pk=observation_id).exists():
        return
    kind = ObservationType.ERROR if failed or payload.get("is_error") is True else (
        ObservationType.BASH if tool_name == "Bash" else ObservationType.TOOL_USE)
    outcome = payload.get("error") if failed else payload.get("tool_response")
    content = f"{tool_name}: {_compact(payload.get('tool_input'))}\n→ {_compact(outcome)}".strip()
    loop_run = loop_run_running(session_id=session.pk)
    observation_create(data={"id": observation_id, "session": session, "type": kind, "tool_name": tool_name[:200],
                             "content": content[:OBSERVATION_MAX_CHARS] or tool_name, "importance": _IMPORTANCE[kind],
                             "loop_run": loop_run, "iteration": session.iterations.filter(
                                 number=session.current_iteration).first()})


# -- each event's answer --------------------------------------------------------------------------

def _event_answer(*, session: Session, event: str, payload: dict[str, Any], batch: TranscriptBatch,
                  turn_key: str) -> tuple[dict[str, Any], LoopTurn | None]:
    if event == "SessionStart":
        return {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                       "additionalContext": session_start_context(session=session)}}, None
    if event == "UserPromptSubmit":
        prompt = payload.get("prompt")
        if isinstance(prompt, str) and prompt and not session.user_request \
                and session.status not in FINISHED_SESSION_STATUSES:
            session_update(session=session, data={"user_request": prompt[:100_000]}, agent=LOOP_AGENT)
        return {}, None
    if event == "Stop":
        loop_run = loop_run_running(session_id=session.pk)
        if loop_run is None:
            return {}, None
        last = payload.get("last_assistant_message")
        last = last if isinstance(last, str) else batch.last_assistant_text
        # A Stop is known by where the transcript ended and what the agent last said: the same Stop sent again
        # (a spooled copy, a re-ask while paused) decides once; the next turn differs in both, or at least one.
        turn_key = f"{turn_key}:{hashlib.sha256(last.encode()).hexdigest()[:16]}"
        turn = loop_turn_end(loop_run=loop_run, turn_key=turn_key, last_assistant_message=last)
        if turn.decision.action == TurnAction.COMPLETE:
            _loop_success_observed(session=session, loop_run=turn.loop_run)
        return ({"decision": "block", "reason": turn.decision.prompt}
                if turn.decision.action == TurnAction.CONTINUE else {}), turn
    if event == "SessionEnd" and session.status not in FINISHED_SESSION_STATUSES \
            and loop_run_running(session_id=session.pk) is None:
        # Stopped, not completed: Claude Code resumes a session (`--continue`), and a completed one is final.
        reason = payload.get("reason")
        session_finish(session=session, status="stopped", agent=LOOP_AGENT,
                       exit_reason=f"Claude Code session ended ({reason})"[:200] if isinstance(reason, str) else "")
    return {}, None


def _loop_success_observed(*, session: Session, loop_run: LoopRun) -> None:
    observation_create(data={
        "id": ulid_derived("claude-code loop success", loop_run.pk), "session": session,
        "type": ObservationType.SUCCESS, "tool_name": "ralph-loop", "loop_run": loop_run,
        "importance": _IMPORTANCE[ObservationType.SUCCESS],
        "content": f"Loop completed after {loop_run.iterations} iteration(s): {loop_run.task}"[:OBSERVATION_MAX_CHARS]})
