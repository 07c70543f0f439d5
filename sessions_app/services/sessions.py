"""A session's lifecycle (create, update, finish, resume, delete), its state, plan, iterations and waves."""

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ralphsite.core.activity import sessions_touch
from ralphsite.core.errors import Conflict, InvalidInput, detail_time
from ralphsite.core.services import instance_create, instance_update
from sessions_app import selectors
from sessions_app.ledger import ledger
from sessions_app.models import (
    ENDING_STATES,
    FINISHED_SESSION_STATUSES,
    SESSION_STATE_LIFECYCLE,
    Iteration,
    PlanSnapshot,
    Session,
    SessionStateEntry,
    SessionStatus,
    Task,
    TaskStatus,
)
from sessions_app.services.base import (
    FINISHED_SESSION_WRITABLE_FIELDS,
    lock_rows,
    session_open_check,
    stamp_on_change,
)
from sessions_app.services.questions import signals_expire
from sessions_app.services.tasks import task_release


def session_create(*, data: dict[str, Any]) -> Session:
    """A new session; its current iteration (1 unless given) exists from the start. A session created
    finished gets its ended_at (now unless given); a running one has none."""
    data = dict(data)
    if data.get("state") in ENDING_STATES:  # Ralph V2's Complete and Stopped end the loop they name
        data.setdefault("status", ENDING_STATES[data["state"]])
    status = data.get("status", SessionStatus.RUNNING)
    if status == SessionStatus.RUNNING and data.get("ended_at") is not None:
        raise InvalidInput("A running session has no ended_at.", details={"ended_at": [_ENDED_AT_RULE]})
    if status != SessionStatus.RUNNING and data.get("ended_at") is None:
        data["ended_at"] = timezone.now()
    with transaction.atomic():
        session = instance_create(model=Session, data=data)
        _iteration_ensure(session=session)
    return session


_ENDED_AT_RULE = "ended_at changes with status only (finish/, or a status in the same write)."


def session_update(*, session: Session, data: dict[str, Any], agent: str = "") -> Session:
    """A plain update (API PATCH/PUT, admin). `status` and `ended_at` change together: a running
    session given a final status is finished as by `finish/` (ended_at now unless given, a
    `session_finished` event); a finished session keeps its status (409 `session_finished`; `resume/`
    runs it again); ended_at alone is a 400. A new current_iteration gets its iteration row."""
    data = dict(data)
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        status = data.pop("status", session.status)
        ended_at = data.pop("ended_at", session.ended_at)
        finishing = status != session.status
        if finishing and session.status in FINISHED_SESSION_STATUSES:
            raise _already_finished(session)
        if finishing and status == SessionStatus.RUNNING:
            raise InvalidInput("A finished session runs again through resume/.", details={"status": [status]})
        if not finishing and ended_at != session.ended_at:
            raise InvalidInput(_ENDED_AT_RULE, details={"ended_at": [_ENDED_AT_RULE]})
        if set(data) - FINISHED_SESSION_WRITABLE_FIELDS:
            session_open_check(session_id=session.pk, verb=f"change {', '.join(sorted(data))}")
        if "state" in data:
            _state_check(session=session, state=data["state"])
        old_state, old_iteration = session.state, session.current_iteration
        session = instance_update(instance=session, data={**data, "last_activity_at": timezone.now()})
        if session.current_iteration != old_iteration:
            _iteration_ensure(session=session)
        if session.state != old_state:
            ledger().event_append(session_id=session.id, event_type="session_state_changed", agent=agent,
                                  message=f"state {old_state} → {session.state}",
                                  data={"from": old_state, "to": session.state})
        if not finishing and session.state in ENDING_STATES and session.state != old_state:
            finishing, status = True, ENDING_STATES[session.state]
        if finishing:
            session = _session_end(session=session, status=status, exit_reason=session.exit_reason,
                                   ended_at=ended_at, agent=agent)
    return session


SESSION_COUNTERS = ("current_iteration", "consecutive_failures")


def session_counter_increment(*, session: Session, counter: str, agent: str = "") -> Session:
    """One more iteration or failure (DevTeam's increment_iteration, increment_failures): the count is read and
    written under the session's row lock (SQLite: the transaction's write lock), so increments sent at the same
    instant are all counted; a read then a PATCH from two processes could count once. As an update: a new
    iteration gets its row, a finished session refuses (409 `session_finished`)."""
    if counter not in SESSION_COUNTERS:
        raise InvalidInput(f"{counter!r} is not a counter; one of: {', '.join(SESSION_COUNTERS)}.",
                           details={"counter": [f"One of {', '.join(SESSION_COUNTERS)}."]})
    with transaction.atomic():
        locked = lock_rows(Session.objects.filter(pk=session.pk)).get()
        return session_update(session=locked, data={counter: getattr(locked, counter) + 1}, agent=agent)


def _state_check(*, session: Session, state: str) -> None:
    """The orchestrator's state follows SESSION_STATE_LIFECYCLE (409 `invalid_transition`); a finished session
    changes state only once resumed (409 `session_finished`)."""
    if state == session.state:
        return
    if session.status in FINISHED_SESSION_STATUSES:
        raise _already_finished(session)
    SESSION_STATE_LIFECYCLE.check(current=session.state, new=state, subject=f"Session {session.key or session.pk}")


def session_delete(*, session: Session) -> None:
    """Delete a finished session and what seed 003 cascades from it; its ledger events leave through
    the ledger's retention path (a retention record), rows the seed keeps lose only their session
    (a task in progress is cancelled and every claim released).
    A running session is refused: finish it first."""
    with transaction.atomic():
        session = Session.objects.select_for_update().get(pk=session.pk)
        if session.status == SessionStatus.RUNNING:
            raise Conflict(f"Session {session.pk} is running; finish it before deleting it.",
                           code="session_running", details={"session": session.pk, "status": session.status})
        ledger().events_purge(session_ids=[session.pk], reason=f"session {session.pk} deleted")
        # Its tasks are kept without a session (seed 003's SET NULL); no one can work on them any more, so
        # none stays in progress or claimed.
        session.tasks.filter(status=TaskStatus.IN_PROGRESS).update(status=TaskStatus.CANCELLED)
        session.tasks.exclude(claimed_by="").update(claimed_by="", lease_expires_at=None)
        session.delete()


def session_state_set(*, session: Session, key: str, value: Any) -> tuple[SessionStateEntry, bool]:
    """Upsert one key of a session's state (DevTeam's set_state); returns (entry, created).

    update_or_create locks the row it finds and, when two writers insert the same new key at once,
    catches the unique violation and updates the row the other one made: the last write wins.
    """
    with transaction.atomic():
        session_open_check(session_id=session.pk, verb="set the session's state")
        entry, created = SessionStateEntry.objects.update_or_create(session=session, key=key,
                                                                    defaults={"value": value})
        sessions_touch([session.pk])
    return entry, created


def plan_update(*, session: Session, content: str, agent: str = "") -> Session:
    """UpdatePlan. The plan written in an earlier iteration is kept as that iteration's snapshot."""
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        session_open_check(session_id=session.pk, verb="update the plan")
        written_in = session.plan_iteration
        if session.current_plan_content and written_in is not None and written_in < session.current_iteration:
            PlanSnapshot.objects.get_or_create(session=session, iteration_number=written_in,
                                               defaults={"content": session.current_plan_content})
        session.current_plan_content = content
        session.plan_iteration = session.current_iteration
        session.last_activity_at = timezone.now()
        session.save(update_fields=["current_plan_content", "plan_iteration", "last_activity_at", "updated_at"])
    return session


def _iteration_ensure(*, session: Session) -> None:
    """The session's current iteration has its row (iteration 1 from the session's creation on)."""
    Iteration.objects.get_or_create(session=session, number=session.current_iteration)


def iteration_create(*, data: dict[str, Any]) -> Iteration:
    with transaction.atomic():
        return instance_create(model=Iteration, data=stamp_on_change(
            data, previous=False, field="planning_complete", value=True, stamp="planning_completed_at"))


def iteration_update(*, iteration: Iteration, data: dict[str, Any]) -> Iteration:
    """planning_completed_at is set when planning_complete becomes true (and cleared if it is undone)."""
    with transaction.atomic():
        return instance_update(instance=iteration, data=stamp_on_change(
            data, previous=iteration.planning_complete, field="planning_complete", value=True,
            stamp="planning_completed_at"))


def session_waves_store(*, session: Session) -> list[dict[str, Any]]:
    """Compute the session's waves (selectors.session_waves) and write each task's `wave` to its
    number: one UPDATE per wave."""
    with transaction.atomic():
        session_open_check(session_id=session.pk, verb="store the waves")
        waves = selectors.session_waves(session=session)
        for wave in waves:
            Task.objects.filter(session=session, key__in=wave["tasks"]).exclude(wave=wave["wave"]).update(
                wave=wave["wave"], updated_at=timezone.now())
        sessions_touch([session.pk])
    return waves


def session_transition(*, session: Session, data: dict[str, Any], agent: str = "", message: str = "") -> Session:
    """The orchestrator's state change (and the iteration/wave/phase it moves to), as SESSION_STATE_LIFECYCLE
    allows. Ralph V2's Complete and Stopped end the session (completed, stopped) with the message as its exit
    reason, as finish/ does."""
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        _state_check(session=session, state=data["state"])
        old_state = session.state
        session = instance_update(instance=session, data={**data, "last_activity_at": timezone.now()})
        if "current_iteration" in data:
            _iteration_ensure(session=session)
        ledger().event_append(session_id=session.id, event_type="session_state_changed", agent=agent,
                              message=message or f"state {old_state} → {session.state}",
                              data={"from": old_state, "to": session.state,
                                    **{k: v for k, v in data.items() if k != "state"}})
        if session.state in ENDING_STATES and session.status == SessionStatus.RUNNING:
            session = _session_end(session=session, status=ENDING_STATES[session.state], exit_reason=message,
                                   ended_at=None, agent=agent)
    return session


def session_resume(*, session: Session, agent: str = "", force: bool = False,
                   idle_seconds: int = selectors.DEFAULT_IDLE_SECONDS) -> dict[str, Any]:
    """Where an interrupted session stopped; the session is marked running again.

    Seed 001 resumes *interrupted* runs ("resume or start fresh"): a session still `running` that
    went quiet, or one that ended `failed`, `stopped` or `aborted` with work left. A `completed`
    session finished successfully; there is nothing to resume (start a new session): 409
    `session_completed`. A running session written to within `idle_seconds` is not interrupted:
    someone is driving it (or has just resumed it), so a second orchestrator gets 409
    `session_active` unless it insists with `force`.
    The ledger adds the session's last checkpoint (sessions_app knows nothing of checkpoints).
    """
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        if session.status == SessionStatus.COMPLETED:
            raise Conflict(f"Session {session.pk} completed successfully; start a new session instead.",
                           code="session_completed", details={"session": session.pk, "status": session.status})
        quiet_since = timezone.now() - timedelta(seconds=idle_seconds)
        if session.status == SessionStatus.RUNNING and session.last_activity_at >= quiet_since and not force:
            raise Conflict(f"Session {session.pk} was active at {session.last_activity_at.isoformat()}, within "
                           f"{idle_seconds} s: it is not interrupted (force: true resumes it anyway).",
                           code="session_active",
                           details={"session": session.pk, "last_activity_at": detail_time(session.last_activity_at),
                                    "idle_seconds": idle_seconds})
        current = (Task.objects.filter(session=session, status=TaskStatus.IN_PROGRESS)
                   .order_by(F("started_at").desc(nulls_last=True)).first())
        following = selectors.tasks_ready(session_id=session.pk).first()
        old_status = session.status
        session = instance_update(instance=session, data={"status": SessionStatus.RUNNING, "ended_at": None,
                                                          "last_activity_at": timezone.now()})
        point: dict[str, Any] = {
            "session": session.pk, "iteration": session.current_iteration, "state": session.state,
            "wave": session.current_wave, "current_task": current.key if current else None,
            "next_task": following.key if following else None,
            "last_checkpoint": ledger().checkpoint_last(session_id=session.pk),
        }
        ledger().event_append(session_id=session.pk, event_type="session_resumed", agent=agent,
                              message=f"resumed at iteration {session.current_iteration}",
                              data={"from": old_status, "current_task": point["current_task"],
                                    "next_task": point["next_task"]})
    return point


def session_finish(*, session: Session, status: str, exit_reason: str = "", summary: str | None = None,
                   agent: str = "") -> Session:
    """Record a session's outcome: its final status, why it ended, and when. Once: a finished
    session is a 409 `session_finished` (resume/ runs it again)."""
    if status == SessionStatus.RUNNING:
        raise InvalidInput("A finished session cannot be running.", details={"status": ["running"]})
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        if session.status in FINISHED_SESSION_STATUSES:
            raise _already_finished(session)
        if summary is not None:
            session = instance_update(instance=session, data={"summary": summary})
        return _session_end(session=session, status=status, exit_reason=exit_reason, ended_at=None, agent=agent)


def _claims_release(*, session: Session, reason: str, agent: str) -> None:
    """Ending a session releases the tasks still in progress (not started again, claimable when it is resumed),
    each with a `task_released` event giving the reason and the holder: no claim outlives its session."""
    for task in lock_rows(Task.objects.filter(session=session, status=TaskStatus.IN_PROGRESS).order_by("pk")):
        task_release(task=task, agent=agent, reason=reason, operator=True)


def _already_finished(session: Session) -> Conflict:
    return Conflict(f"Session {session.pk} already finished ({session.status}); resume/ runs it again.",
                    code="session_finished",
                    details={"session": session.pk, "status": session.status,
                             "ended_at": detail_time(session.ended_at)})


def _session_end(*, session: Session, status: str, exit_reason: str, ended_at: Any, agent: str) -> Session:
    """A running session's final status, with its ended_at (now unless given) and its ledger event; its tasks in
    progress are released and its signals not yet polled expire, each with the reason and an event."""
    now = timezone.now()
    changes: dict[str, Any] = {"status": status, "exit_reason": exit_reason, "ended_at": ended_at or now,
                               "last_activity_at": now}
    # A completed (stopped) session is in Ralph V2's Complete (Stopped) state too, whichever path ended it.
    for state, ends_as in ENDING_STATES.items():
        if ends_as == status:
            changes["state"] = state
    session = instance_update(instance=session, data=changes)
    reason = f"session {status}" + (f": {exit_reason}" if exit_reason else "")
    _claims_release(session=session, reason=reason, agent=agent)
    signals_expire(session_id=session.pk, reason=reason, agent=agent)
    ledger().event_append(session_id=session.pk, event_type="session_finished", agent=agent,
                          message=f"finished: {status}" + (f" ({exit_reason})" if exit_reason else ""),
                          data={"status": status, "exit_reason": exit_reason})
    return session
