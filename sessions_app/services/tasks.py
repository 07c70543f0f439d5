"""Tasks: the plan's dependencies and files, status, claims and leases, reports (attempts) and reviews."""

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Max, Q, QuerySet
from django.utils import timezone

from ralphsite.core.access import current_scope
from ralphsite.core.errors import Conflict, InvalidInput, NotFound
from ralphsite.core.services import column_holds, instance_create, instance_update, instances_delete
from sessions_app import selectors
from sessions_app.graph import kahn_layers
from sessions_app.ledger import ledger
from sessions_app.models import (
    ATTEMPT_STATUS_LIFECYCLE,
    ATTEMPT_VERDICT_LIFECYCLE,
    DEPENDENCY_SATISFIED_STATUSES,
    FINISHED_SESSION_STATUSES,
    TASK_ENDED_STATUSES,
    TASK_STATUS_LIFECYCLE,
    AgentInvocation,
    ReviewVerdict,
    Session,
    SignalType,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
    TaskStatus,
    TaskType,
    path_is_pattern,
)
from sessions_app.services.base import lock_rows, session_open_check
from sessions_app.services.usage import usage_row_create, usage_row_delete, usage_row_update


def _dependency_targets(*, session_id: str | None, keys: list[str], task_key: str) -> list[Task]:
    if task_key in keys:
        raise InvalidInput(f"Task {task_key} cannot depend on itself.", details={"depends_on": [task_key]})
    targets = list(Task.objects.filter(session_id=session_id, key__in=keys)) if keys else []
    unknown = sorted(set(keys) - {t.key for t in targets})
    if unknown:
        raise InvalidInput(f"Unknown dependency keys in this session: {', '.join(unknown)}.",
                           code="unknown_dependency", details={"depends_on": unknown})
    return targets


def _dependencies_set(*, task: Task, keys: list[str]) -> None:
    """Replace the task's dependencies; a change that would close a cycle is refused naming it."""
    targets = _dependency_targets(session_id=task.session_id, keys=keys, task_key=task.key)
    edges = [(a, b) for a, b in TaskDependency.objects.filter(task__session_id=task.session_id)
             .exclude(task=task).values_list("task__key", "depends_on__key")]
    edges += [(task.key, target.key) for target in targets]
    nodes = Task.objects.filter(session_id=task.session_id).values_list("key", flat=True)
    _, cyclic = kahn_layers(nodes, edges)
    if cyclic:
        raise InvalidInput(f"These dependencies would make a cycle through: {', '.join(cyclic)}.",
                           code="dependency_cycle", details={"depends_on": keys, "cycle": cyclic})
    TaskDependency.objects.filter(task=task).delete()
    TaskDependency.objects.bulk_create(TaskDependency(task=task, depends_on=target) for target in targets)


def _task_links_check(*, task: Task, old_session_id: str | None) -> None:
    """A task's parent is another task of its session, never itself or one of its own subtasks; a task
    with dependency edges stays in its session (the edges may not cross sessions)."""
    if task.session_id != old_session_id and (
            TaskDependency.objects.filter(Q(task=task) | Q(depends_on=task)).exists()):
        raise InvalidInput(f"Task {task.key} has dependencies or dependents and cannot move to another session.",
                           details={"session": ["A task with dependency edges cannot change session."]})
    ancestor_id, seen = task.parent_id, {task.pk}
    while ancestor_id is not None:
        if ancestor_id in seen:
            raise InvalidInput(f"Task {task.key} cannot be its own ancestor.",
                               details={"parent": ["The parent chain would form a loop."]})
        seen.add(ancestor_id)
        ancestor = Task.objects.filter(pk=ancestor_id).values("session_id", "parent_id").get()
        if ancestor_id == task.parent_id and ancestor["session_id"] != task.session_id:
            raise InvalidInput("The parent task belongs to another session.",
                               details={"parent": ["The parent task belongs to another session."]})
        ancestor_id = ancestor["parent_id"]


def _files_set(*, task: Task, files: list[dict[str, Any]]) -> None:
    TaskFile.objects.filter(task=task).delete()
    TaskFile.objects.bulk_create(TaskFile(task=task, **spec) for spec in files)


def task_links_import(*, task: Task, depends_on: list[str], parent: Task | None) -> Task:
    """A moved-in task's parent and dependency edges (import_seed), under the rules the API's writes follow
    (keys of its own session, no self-edge, no cycle, no parent loop nor parent in another session: 400),
    whatever its session's status: history arrives finished, which the API's task writes refuse to change."""
    with transaction.atomic():
        if parent is not None and parent.pk != task.parent_id:
            task.parent = parent
            task.save(update_fields=["parent", "updated_at"])
            _task_links_check(task=task, old_session_id=task.session_id)
        _dependencies_set(task=task, keys=depends_on)
    return task


def task_scope_import(*, task: Task, paths: list[str], dropped: Sequence[str] = ()) -> int:
    """A moved-in task's scope (DevTeam's `scope_files`): each path the task has no file row for becomes the
    row the API's `files` makes of a bare path (allowed, a glob pattern when it has `*`, `?` or `[`); a row the
    task already has for a path (DevTeam's own `task_files` row) stays as it is. The rows of `dropped` (paths a
    newer copy of the file took out of the scope) go. Whatever its session's status, as `task_links_import`.
    Returns how many rows were added; a path longer than a file row holds is refused."""
    longest = TaskFile._meta.get_field("path").max_length
    too_long = [path for path in paths if len(path) > longest]
    if too_long:
        raise InvalidInput(f"Task {task.key}: a file path is longer than {longest} characters.",
                           details={"files": [f"Ensure this field has no more than {longest} characters."]})
    TaskFile.objects.filter(task=task, path__in=[path for path in dropped if path not in paths]).delete()
    present = set(TaskFile.objects.filter(task=task).values_list("path", flat=True))
    added = [TaskFile(task=task, path=path, is_pattern=path_is_pattern(path))
             for path in dict.fromkeys(paths) if path not in present]
    TaskFile.objects.bulk_create(added)
    return len(added)


def task_create(*, data: dict[str, Any]) -> Task:
    """CreateTask: the task, its dependencies (keys in the same session) and files, one transaction. Not in
    progress: only claim-task puts a task there (409 `claim_required`)."""
    data = dict(data)
    depends_on: list[str] = data.pop("depends_on", [])
    files: list[dict[str, Any]] = data.pop("files", [])
    _claim_required_check(key=data.get("key", ""), current="", new=data.get("status", TaskStatus.NOT_STARTED))
    with transaction.atomic():
        session = data.get("session")
        session_open_check(session_id=session.pk if session is not None else None, verb="create a task")
        if session is not None:
            data.setdefault("iteration_created", session.current_iteration)
            data.setdefault("iteration_updated", session.current_iteration)
        task = instance_create(model=Task, data=data)
        _task_links_check(task=task, old_session_id=task.session_id)
        if depends_on:
            _dependencies_set(task=task, keys=depends_on)
        _files_set(task=task, files=files)
    return task


def task_update(*, task: Task, data: dict[str, Any], agent: str = "") -> Task:
    data = dict(data)
    depends_on: list[str] | None = data.pop("depends_on", None)
    files: list[dict[str, Any]] | None = data.pop("files", None)
    status = data.pop("status", task.status)
    annotation = data.pop("status_annotation", None)
    with transaction.atomic():
        session_open_check(session_id=task.session_id, verb="update a task")  # once, for the status too
        old_session_id, old_key = task.session_id, task.key
        task = instance_update(instance=task, data=data)
        if task.key != old_key:  # invocations name their task by key too (AgentInvocation.task_key)
            AgentInvocation.objects.filter(task=task).update(task_key=task.key)
        if {"session", "parent"} & set(data):
            _task_links_check(task=task, old_session_id=old_session_id)
        if depends_on is not None:
            _dependencies_set(task=task, keys=depends_on)
        if files is not None:
            _files_set(task=task, files=files)
        if status != task.status or annotation is not None:
            # The same verb as status/: the lifecycle, the dependencies and the fence (a PATCH carries no claim,
            # so only the holder's agent-bound token changes a claimed task's status here).
            task = _status_apply(task=lock_rows(Task.objects.filter(pk=task.pk).select_related("session")).get(),
                                 status=status, agent=agent, claim=None, fenced=True,
                                 annotation=task.status_annotation if annotation is None else annotation)
    return task


def task_delete(*, task: Task, claim: int | None = None) -> None:
    """Delete a task with its attempts, files and own dependency edges. A task other tasks depend on
    is kept (seed 000's Restrict): 409 `has_dependents` naming them; delete or re-plan them first.
    A claimed task is deleted under its claim only (`_claim_fence`: 409 `stale_claim` or
    `claim_required`), so no agent's work in progress vanishes under it; release it first otherwise."""
    _tasks_delete(tasks=[task], claims={task.pk: claim})


def tasks_delete(*, tasks: list[Task]) -> None:
    """Delete these tasks together (the admin's bulk delete): only dependents outside the set keep
    them (409 `has_dependents` naming each task and its dependents); a claimed one is refused as by
    task_delete (no claim is sent: release it first)."""
    _tasks_delete(tasks=tasks, claims={})


def _tasks_delete(*, tasks: list[Task], claims: dict[str, int | None]) -> None:
    ids = [task.pk for task in tasks]
    with transaction.atomic():
        for session_id in sorted({task.session_id for task in tasks if task.session_id}):
            session_open_check(session_id=session_id, verb="delete a task")
        locked = list(lock_rows(Task.objects.filter(pk__in=ids).order_by("pk")))
        edges = (TaskDependency.objects.filter(depends_on_id__in=ids).exclude(task_id__in=ids)
                 .order_by("depends_on__key", "task__key").values_list("depends_on__key", "task__key"))
        dependents: dict[str, list[str]] = {}
        for key, dependent in edges:
            dependents.setdefault(key, []).append(dependent)
        if dependents:
            named = "; ".join(f"{', '.join(keys)} depend on {key}" for key, keys in dependents.items())
            first = next(iter(dependents))
            raise Conflict(f"Not deleted: {named}.", code="has_dependents",
                           details={"task": first, "dependents": dependents[first]} if len(dependents) == 1
                           else {"dependents": dependents})
        for task in locked:
            _claim_fence(task=task, claim=claims.get(task.pk))
        instances_delete(instances=tasks)


def _task_status_event(*, task: Task, old_status: str, agent: str) -> None:
    if task.session_id:
        ledger().event_append(session_id=task.session_id, event_type="task_status_changed", task_key=task.key,
                              agent=agent, message=f"{task.key}: {old_status} → {task.status}",
                              data={"task": task.id, "from": old_status, "to": task.status,
                                    "annotation": task.status_annotation})


def task_status_set(*, task: Task, status: str, annotation: str = "", agent: str = "", claim: int | None = None,
                    fenced: bool = True) -> Task:
    """UpdateTaskStatus: the status, its annotation and the times it implies, as the task lifecycle
    allows (TASK_STATUS_LIFECYCLE: 409 `invalid_transition` naming the allowed next statuses). Only
    claim-task puts a task in progress (409 `claim_required` here); a task completes only when every
    task it depends on is completed or skipped (409 `dependencies_unfinished`). On a claimed task the
    caller acts under the current claim (`_claim_fence`) unless not `fenced` (a person in the
    console, a qualified review). Handing the task to review or ending it ends the claim."""
    with transaction.atomic():
        task = lock_rows(Task.objects.filter(pk=task.pk).select_related("session")).get()
        session_open_check(session_id=task.session_id, verb="set a task's status")
        return _status_apply(task=task, status=status, annotation=annotation, agent=agent, claim=claim, fenced=fenced)


def _status_apply(*, task: Task, status: str, annotation: str, agent: str, claim: int | None, fenced: bool) -> Task:
    """task_status_set's change, on `task` locked (with its session) in an open session."""
    if fenced:
        _claim_fence(task=task, claim=claim)
    old_status = task.status
    _status_change_check(task=task, status=status)
    now = timezone.now()
    changes: dict[str, Any] = {"status": status, "status_annotation": annotation}
    if task.session is not None:
        changes["iteration_updated"] = task.session.current_iteration
    if status in TASK_ENDED_STATUSES:
        changes["completed_at"] = now
    if status != TaskStatus.IN_PROGRESS:
        changes |= {"claimed_by": "", "lease_expires_at": None}
    task = instance_update(instance=task, data=changes)
    if status != old_status:
        _task_status_event(task=task, old_status=old_status, agent=agent)
    return task


def _claim_required_check(*, key: str, current: str, new: str) -> None:
    """Only claim-task puts a task in progress (a new one included): no task is in progress without a live
    claim (409 `claim_required`)."""
    if new == TaskStatus.IN_PROGRESS and current != TaskStatus.IN_PROGRESS:
        raise Conflict(f"Only claim-task puts {key or 'a task'} in progress: it gives the claim the work is done "
                       "under.", code="claim_required", details={"status": current, "to": new})


def _status_change_check(*, task: Task, status: str) -> None:
    TASK_STATUS_LIFECYCLE.check(current=task.status, new=status, subject=f"Task {task.key}")
    _claim_required_check(key=task.key, current=task.status, new=status)
    if status == TaskStatus.COMPLETED and task.status != TaskStatus.COMPLETED:
        unfinished = list(Task.objects.filter(dependents__task=task).exclude(status__in=DEPENDENCY_SATISFIED_STATUSES)
                          .order_by("key").values_list("key", flat=True))
        if unfinished:
            raise Conflict(f"{task.key} cannot complete before {', '.join(unfinished)}: a task completes after the "
                           "tasks it depends on are completed or skipped.", code="dependencies_unfinished",
                           details={"task": task.key, "unfinished": unfinished})


def _claim_fence(*, task: Task, claim: int | None) -> None:
    """Fenced claims: a write on a claimed task (heartbeat, release, status, report, delete) is made under
    the claim its caller holds, the `claim` value claim-task returned to the claimer only (`task` is locked).
    A claim holds while the task is in progress under it and its lease has not expired, at the moment of the
    request (the sweep may not have run yet). A token bound to another agent than the holder is 409
    `not_claim_holder` whatever it sends. A value that is not a live claim is 409 `stale_claim`, whose
    `details.reason` says what happened: `never_issued`, `expired`, `ended` (released, handed to review or
    finished) or `taken_over` (claimed again since): the late holder changes nothing. Without a value only
    the holder's agent-bound token acts (its agent name is bound to its token): 409 `claim_required`."""
    held = task.status == TaskStatus.IN_PROGRESS and bool(task.claimed_by)
    live = held and (task.lease_expires_at is None or task.lease_expires_at > timezone.now())
    details = {"claimed_by": task.claimed_by if live else "", "status": task.status}
    bound = current_scope().agent
    if live and bound and bound != task.claimed_by:
        raise Conflict(f"{task.key} is claimed by {task.claimed_by!r}, not by this token's agent {bound!r}.",
                       code="not_claim_holder", details=details)
    if claim is None and held and not live:
        claim = task.claim  # whoever acts without a value on an expired claim is its late holder
    if claim is not None:
        if live and claim == task.claim:
            return
        reason = ("never_issued" if claim > task.claim or claim == 0 else "taken_over" if claim < task.claim
                  else "expired" if held else "ended")
        said = {"never_issued": "was never issued", "taken_over": "was taken over by a later claim",
                "expired": "expired with its lease", "ended": f"ended (the task is {task.status})"}[reason]
        raise Conflict(f"Claim {claim} on {task.key} {said}. Nothing was changed.", code="stale_claim",
                       details={**details, "claim": claim, "reason": reason})
    if live and bound != task.claimed_by:
        raise Conflict(f"{task.key} is claimed by {task.claimed_by!r}: send the `claim` value claim-task returned.",
                       code="claim_required", details=details)


def _leases_expire(*, expired: QuerySet[Task], skip_locked: bool = True) -> int:
    """Return the tasks of `expired` (in progress, lease past) to the ready pool, each with a
    `lease_expired` event naming the agent that held it. Rows another transaction holds are skipped
    (their holder is acting on them; the next sweep sees them) unless not `skip_locked`."""
    tasks = list(lock_rows(expired, skip_locked=skip_locked))
    for task in tasks:
        holder, lease = task.claimed_by, task.lease_expires_at
        instance_update(instance=task, data={"status": TaskStatus.NOT_STARTED, "claimed_by": "",
                                             "assigned_agent": "", "lease_expires_at": None})
        if task.session_id:
            ledger().event_append(session_id=task.session_id, event_type="lease_expired", task_key=task.key,
                                  agent=holder,
                                  message=f"{holder or 'the holder'}'s lease on {task.key} expired: "
                                          "it is ready to claim again",
                                  data={"task": task.id, "lease_expires_at": lease.isoformat()})
    return len(tasks)


LEASE_SWEEP_BATCH = 200


def task_leases_expire(*, now: datetime | None = None) -> int:
    """Every task whose lease expired goes back to the ready pool by itself (the upkeep job
    `task_leases_expire` runs this on one host at a time); claim-task does the same for its session
    first, so a claim never waits for the sweep. Batches of LEASE_SWEEP_BATCH, one transaction each.
    Returns how many tasks were returned."""
    now = now or timezone.now()
    returned = 0
    while True:
        with transaction.atomic():
            batch = _leases_expire(expired=Task.objects.filter(status=TaskStatus.IN_PROGRESS, lease_expires_at__lt=now)
                                   .order_by("lease_expires_at", "pk")[:LEASE_SWEEP_BATCH])
        returned += batch
        if batch < LEASE_SWEEP_BATCH:
            return returned


class NothingToClaim(Conflict):
    """claim-task has no task for the caller: `details.reason` says why, machine-readably
    (`all_done`, `waiting`, `blocked`, `at_capacity`, `session_finished`, see selectors.claim_outlook; `stop`
    while an operator's Stop waits to be polled, `paused` while a Pause holds: until a resume signal is sent)."""

    code = "nothing_to_claim"


def task_claim_next(*, session: Session, agent: str, lease_seconds: int) -> Task:
    """Atomically give `agent` the next task the plan lets start, or raise NothingToClaim saying why.

    The plan: the dependencies are completed or skipped (selectors.tasks_ready); at most the
    session's `max_concurrency` tasks are in progress; a `sequential` task (seed 000 TaskItemType)
    never runs beside another task of the session, so while one runs nothing is handed out and
    while others run only parallelizable tasks are. A finished session hands out nothing
    (`session_finished`). The session row is locked first: two claimers count the same tasks in
    progress, and the status is the one at claim time, not the caller's copy.
    """
    with transaction.atomic():
        limits = lock_rows(Session.objects.filter(pk=session.pk)).values("status", "max_concurrency").first()
        if limits is None:
            raise NotFound(f"Session {session.pk} does not exist.", details={"session": session.pk})
        if limits["status"] in FINISHED_SESSION_STATUSES:
            raise NothingToClaim(f"Session {session.pk} is {limits['status']}: it hands out no more tasks.",
                                 details={"reason": "session_finished", "session": session.pk,
                                          "status": limits["status"]})
        # An operator's Stop not yet polled comes before any more work (`stop`), and a Pause holds until a
        # resume signal is sent (`paused`): the agent is told so, and its orchestrator polls the signal.
        holding = selectors.session_signal_holding(session_id=session.pk)
        if holding is not None:
            reason = "stop" if holding["type"] == SignalType.STOP else "paused"
            said = ("has a stop signal not yet polled" if reason == "stop"
                    else "is paused until a resume signal is sent")
            raise NothingToClaim(f"Session {session.pk} {said}: no task is handed out.",
                                 details={"reason": reason, "session": session.pk, "signal": holding["id"]})
        now = timezone.now()
        # Waiting, not skipping: a late holder locking its expired task is refused (stale_claim) without
        # writing anything else, so the wait is short and the task is handed out, never lost to the race.
        _leases_expire(expired=Task.objects.filter(session_id=session.pk, status=TaskStatus.IN_PROGRESS,
                                                   lease_expires_at__lt=now), skip_locked=False)
        running, sequential_running = selectors.tasks_running(session_id=session.pk, now=now)
        task = None
        if running < limits["max_concurrency"] and not sequential_running:
            candidates = selectors.tasks_ready(session_id=session.pk)
            if running:
                candidates = candidates.filter(task_type=TaskType.PARALLELIZABLE)
            task = lock_rows(candidates, skip_locked=True).first()
        if task is None:
            outlook = selectors.claim_outlook(session_id=session.pk, now=now,
                                              max_concurrency=limits["max_concurrency"])
            raise NothingToClaim(outlook["message"], details=outlook["details"])
        old_status = task.status
        task = instance_update(instance=task, data={
            "status": TaskStatus.IN_PROGRESS, "claimed_by": agent, "assigned_agent": agent,
            "lease_expires_at": now + timedelta(seconds=lease_seconds), "started_at": task.started_at or now,
            "iteration_count": task.iteration_count + 1, "claim": task.claim + 1})
        ledger().event_append(session_id=session.pk, event_type="task_claimed", task_key=task.key, agent=agent,
                              message=f"{agent} claimed {task.key}",
                              data={"task": task.id, "from": old_status,
                                    "lease_expires_at": task.lease_expires_at.isoformat()})
    return task


def _held_task(*, task: Task, agent: str, claim: int | None) -> Task:
    task = lock_rows(Task.objects.filter(pk=task.pk)).get()
    session_open_check(session_id=task.session_id, verb="act on a claimed task")
    _claim_fence(task=task, claim=claim)
    if task.status != TaskStatus.IN_PROGRESS or task.claimed_by != agent:
        raise Conflict(f"{task.key} is not claimed by {agent!r}.", code="not_claim_holder",
                       details={"claimed_by": task.claimed_by, "status": task.status})
    return task


def task_heartbeat(*, task: Task, agent: str, lease_seconds: int, claim: int | None = None) -> Task:
    """Extend the lease of a claimed task; only its holder may, under its current claim."""
    with transaction.atomic():
        task = _held_task(task=task, agent=agent, claim=claim)
        lease_expires_at = timezone.now() + timedelta(seconds=lease_seconds)
        return instance_update(instance=task, data={"lease_expires_at": lease_expires_at})


def task_release(*, task: Task, agent: str, reason: str = "", operator: bool = False,
                 claim: int | None = None) -> Task:
    """Give a claimed task back: not started again, assigned to nobody, claimable by anyone.

    Only the claim's holder may, unless `operator` (a person in the console named by `agent`, or the end of
    the session) takes the task back from an agent that is stuck or gone: then any task in progress is
    released and the event names the holder it was taken from. A `reason` becomes the status annotation."""
    with transaction.atomic():
        if operator:
            task = lock_rows(Task.objects.filter(pk=task.pk)).get()
            if task.status != TaskStatus.IN_PROGRESS:
                raise Conflict(f"{task.key} is not claimed.", code="not_claimed",
                               details={"claimed_by": task.claimed_by, "status": task.status})
        else:
            task = _held_task(task=task, agent=agent, claim=claim)
        holder = task.claimed_by
        task = instance_update(instance=task, data={"status": TaskStatus.NOT_STARTED, "claimed_by": "",
                                                    "assigned_agent": "", "lease_expires_at": None,
                                                    **({"status_annotation": reason} if reason else {})})
        if task.session_id:
            taken = f" (claimed by {holder or 'nobody'})" if operator else ""
            ledger().event_append(session_id=task.session_id, event_type="task_released", task_key=task.key,
                                  agent=agent,
                                  message=f"{agent or 'the server'} released {task.key}{taken}"
                                          + (f": {reason}" if reason else ""),
                                  data={"task": task.id, "reason": reason,
                                        **({"claimed_by": holder} if operator else {})})
    return task


def task_attempt_record(*, data: dict[str, Any]) -> tuple[TaskAttempt, bool]:
    """SubmitReport and attempt creates (REST, the admin, MCP); returns (attempt, created). The attempt number is
    the task's next one unless given; the task row is locked first so concurrent reports get distinct numbers.

    A number the task already has names that attempt: DevTeam's `task_attempts` row and Ralph V2's report of
    the same attempt are one row here, so a second record of it describes it (`_attempt_described`) and its
    provider call stays one usage row, whichever record came first and however often either is sent."""
    data = dict(data)
    with transaction.atomic():
        task = lock_rows(Task.objects.filter(pk=data["task"].pk).select_related("session")).get()
        data["task"] = task
        if data.get("attempt_number"):
            named = lock_rows(TaskAttempt.objects.filter(task=task, attempt_number=data["attempt_number"])
                              .select_related("task")).first()
            if named is not None:
                return _attempt_described(attempt=named, data=data), False
        else:
            last = TaskAttempt.objects.filter(task=task).aggregate(last=Max("attempt_number"))["last"]
            data["attempt_number"] = (last or 0) + 1
        if "session" not in data:
            data["session"] = task.session
        if "iteration_number" not in data and task.session is not None:
            data["iteration_number"] = task.session.current_iteration
        return usage_row_create(model=TaskAttempt, data=data), True


def _attempt_described(*, attempt: TaskAttempt, data: dict[str, Any]) -> TaskAttempt:
    """Another record of an existing attempt: what it says differently is set on the attempt (its lifecycles
    apply), so its tokens and cost replace the attempt's call rather than add one; what it repeats changes
    nothing (a retry). An attempt holds one report (Ralph V2: one report per attempt): a different one is a
    409 `attempt_reported`."""
    changes = {name: value for name, value in data.items()
               if name != "task" and column_holds(attempt, name, value) is False}
    if changes.get("implementation_report") and attempt.implementation_report:
        subject = f"Attempt {attempt.attempt_number} of {attempt.task.key}"
        raise Conflict(f"{subject} already has another implementation report.", code="attempt_reported",
                       details={"task": attempt.task_id, "attempt_number": attempt.attempt_number})
    if not changes:
        return attempt
    _attempt_lifecycles_check(attempt=attempt, data=changes)
    return usage_row_update(row=attempt, data=changes)


def task_report_submit(*, task: Task, data: dict[str, Any], claim: int | None = None) -> tuple[TaskAttempt, bool]:
    """SubmitReport: the task's next attempt, or the one its `attempt_number` names (`task_attempt_record`),
    made under the current claim when the task is claimed; returns (attempt, created)."""
    with transaction.atomic():
        session_open_check(session_id=task.session_id, verb="report on a task")
        _claim_fence(task=lock_rows(Task.objects.filter(pk=task.pk)).get(), claim=claim)
        return task_attempt_record(data={**data, "task": task})


def _attempt_lifecycles_check(*, attempt: TaskAttempt, data: dict[str, Any]) -> None:
    subject = f"Attempt {attempt.attempt_number} of {attempt.task.key}"
    if "status" in data:
        ATTEMPT_STATUS_LIFECYCLE.check(current=attempt.status, new=data["status"], subject=subject)
    if "review_verdict" in data:
        ATTEMPT_VERDICT_LIFECYCLE.check(current=attempt.review_verdict, new=data["review_verdict"], subject=subject)


def task_attempt_update(*, attempt: TaskAttempt, data: dict[str, Any]) -> TaskAttempt:
    """An attempt's outcome and review follow their lifecycles (ATTEMPT_STATUS_LIFECYCLE, ATTEMPT_VERDICT_LIFECYCLE)."""
    with transaction.atomic():
        attempt = lock_rows(TaskAttempt.objects.filter(pk=attempt.pk).select_related("task")).get()
        _attempt_lifecycles_check(attempt=attempt, data=data)
        return usage_row_update(row=attempt, data=data)


def task_attempt_delete(*, attempt: TaskAttempt) -> None:
    with transaction.atomic():
        usage_row_delete(row=attempt)


def task_review_submit(*, task: Task, review_report: str, verdict: str, agent: str = "",
                       complete: bool = False, send_back: bool = False) -> TaskAttempt:
    """SubmitReview: the review and verdict go on the task's latest attempt. The reviewer's verbs need no
    claim (seed 000's flow: the executor reports, the reviewer decides): with `complete`, a `qualified`
    verdict also completes the task, with `send_back` a `failed` one returns it to not_started (its claim
    ends), in the same transaction and as the task lifecycle allows; otherwise the task's status is left
    to the orchestrator."""
    with transaction.atomic():
        session_open_check(session_id=task.session_id, verb="review a task")
        attempt = lock_rows(TaskAttempt.objects.filter(task=task).order_by("-attempt_number")
                            .select_related("task")).first()
        if attempt is None:
            raise Conflict(f"{task.key} has no report to review.", code="no_report", details={"task": task.pk})
        _attempt_lifecycles_check(attempt=attempt, data={"review_verdict": verdict})
        attempt = instance_update(instance=attempt, data={"review_report": review_report, "review_verdict": verdict,
                                                          "reviewed_at": timezone.now()})
        if complete and verdict == ReviewVerdict.QUALIFIED:
            task_status_set(task=task, status=TaskStatus.COMPLETED, agent=agent, fenced=False,
                            annotation=f"qualified at attempt {attempt.attempt_number}")
        if send_back and verdict == ReviewVerdict.FAILED:
            task_status_set(task=task, status=TaskStatus.NOT_STARTED, agent=agent, fenced=False,
                            annotation=f"sent back at attempt {attempt.attempt_number}")
    return attempt
