"""Read queries for orchestration state."""

from datetime import datetime, timedelta
from typing import Any

from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Value,
    When,
    prefetch_related_objects,
)
from django.utils import timezone

from ralphsite.core.errors import Conflict
from sessions_app.graph import kahn_layers
from sessions_app.models import (
    DEPENDENCY_BLOCKING_STATUSES,
    DEPENDENCY_SATISFIED_STATUSES,
    TASK_ENDED_STATUSES,
    AcceptanceCriterion,
    AgentInvocation,
    AttemptStatus,
    Bug,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Interview,
    InterviewQuestion,
    InvocationStatus,
    LoopRun,
    PlanSnapshot,
    ProgressSummary,
    Question,
    ReviewVerdict,
    Session,
    SessionPhase,
    SessionStateEntry,
    SessionStatus,
    Signal,
    SignalType,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskStatus,
    TaskType,
)


def session_list() -> QuerySet[Session]:
    return Session.objects.all()


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------
# Their representations name related rows by id only, so the lists need no joins.


def session_state_list() -> QuerySet[SessionStateEntry]:
    return SessionStateEntry.objects.all()


def session_phase_list() -> QuerySet[SessionPhase]:
    return SessionPhase.objects.all()


def progress_summary_list() -> QuerySet[ProgressSummary]:
    return ProgressSummary.objects.all()


def bug_list() -> QuerySet[Bug]:
    return Bug.objects.all()


def escalation_list() -> QuerySet[Escalation]:
    return Escalation.objects.all()


def acceptance_criterion_list() -> QuerySet[AcceptanceCriterion]:
    return AcceptanceCriterion.objects.all()


def feature_list() -> QuerySet[Feature]:
    return Feature.objects.all()


def context_budget_list() -> QuerySet[ContextBudget]:
    return ContextBudget.objects.all()


def context_snapshot_list() -> QuerySet[ContextSnapshot]:
    return ContextSnapshot.objects.all()


def interview_list() -> QuerySet[Interview]:
    return Interview.objects.all()


def interview_question_list() -> QuerySet[InterviewQuestion]:
    return InterviewQuestion.objects.all()


def loop_run_list() -> QuerySet[LoopRun]:
    return LoopRun.objects.all()


def session_latest_loop_run(*, session_id: str) -> LoopRun | None:
    """The session's Ralph loop that started last (running or ended), for the console's header."""
    return LoopRun.objects.filter(session_id=session_id).order_by("-started_at").first()
# -- orchestration reads ----------------------------------------------------------------------

def tasks_ready(*, session_id: str) -> QuerySet[Task]:
    """Tasks whose dependencies allow them to start now, best first: not started (a task whose lease
    expired was returned to that first, services.tasks.task_leases_expire) and every dependency completed
    or skipped; lowest wave, then sequence, then key. Whether the session may run one more
    (max_concurrency, sequential tasks) is the claim's question (services.tasks.task_claim_next)."""
    unsatisfied_dependency = TaskDependency.objects.filter(task=OuterRef("pk")).exclude(
        depends_on__status__in=DEPENDENCY_SATISFIED_STATUSES)
    return (
        Task.objects.filter(session_id=session_id)
        .filter(status=TaskStatus.NOT_STARTED)
        .filter(~Exists(unsatisfied_dependency))
        .order_by(F("wave").asc(nulls_last=True), "sequence", "key")
    )


def _running(now: datetime) -> Q:
    """In progress and held: a live lease, or none (set in progress by status/, not by a claim)."""
    return Q(status=TaskStatus.IN_PROGRESS) & (Q(lease_expires_at__isnull=True) | Q(lease_expires_at__gte=now))


def tasks_running(*, session_id: str, now: datetime) -> tuple[int, int]:
    """How many of the session's tasks count against its max_concurrency, and how many of those are
    sequential (one aggregate row, however many tasks run)."""
    counts = Task.objects.filter(_running(now), session_id=session_id).aggregate(
        running=Count("pk"), sequential=Count("pk", filter=Q(task_type=TaskType.SEQUENTIAL)))
    return counts["running"], counts["sequential"]


def session_signal_holding(*, session_id: str) -> dict[str, Any] | None:
    """The operator's signal that holds the session's work back (its `id`, `type` and `sent_at`), or None: the
    oldest Stop not yet polled, else the latest Pause when no resume signal followed it (a Pause holds, polled or
    not, until a resume signal is sent; an expired signal holds nothing). One query: stops first, oldest first,
    then pauses and resumes newest first."""
    is_stop = Q(type=SignalType.STOP)
    first = (Signal.objects.filter(is_stop & Q(is_processed=False) | Q(type__in=[SignalType.PAUSE, SignalType.RESUME]),
                                   session_id=session_id, expired_at__isnull=True)
             .order_by(Case(When(is_stop, then=Value(0)), default=Value(1)),
                       Case(When(is_stop, then=F("sent_at"))).asc(nulls_last=True), F("sent_at").desc(), F("id").desc())
             .values("id", "type", "sent_at").first())
    return first if first is not None and first["type"] != SignalType.RESUME else None


def dependency_blockers(statuses: dict[str, str], edges: list[tuple[str, str]]) -> dict[str, list[str]]:
    """The unfinished tasks held up by a failed, cancelled or blocked task upstream, each with those
    upstream tasks (found through unfinished dependencies only; skipped counts as satisfied). Tasks
    on a dependency cycle, which can never start, are held up by the cycle's tasks.

    `statuses` maps every task key of one session to its status; `edges` are (task, depends_on)."""
    layers, cyclic = kahn_layers(statuses, edges)
    depends_on: dict[str, list[str]] = {key: [] for key in statuses}
    for key, dependency in edges:
        if key in statuses and dependency in statuses:
            depends_on[key].append(dependency)
    upstream: dict[str, set[str]] = {key: set(cyclic) - {key} for key in cyclic}
    for key in (key for layer in layers for key in layer):  # dependencies before their dependents
        found: set[str] = set()
        for dependency in depends_on[key]:
            status = statuses[dependency]
            if status in DEPENDENCY_BLOCKING_STATUSES:
                found.add(dependency)
            if status not in DEPENDENCY_SATISFIED_STATUSES:
                found |= upstream.get(dependency, set())
        upstream[key] = found
    return {key: sorted(found) for key, found in sorted(upstream.items())
            if found and statuses[key] not in TASK_ENDED_STATUSES}


def claim_outlook(*, session_id: str, now: datetime, max_concurrency: int) -> dict[str, Any]:
    """Why claim-task has nothing to hand out, from the session's tasks and edges (two queries):

    * `all_done`: no task is left unfinished;
    * `at_capacity`: a task is ready (its dependencies allow it) but may not start now: max_concurrency
      tasks are in progress, or a sequential task is (it runs alone), or the ready task is sequential
      and waits until nothing else runs;
    * `waiting`: no task is ready; work in progress (or in review) will finish and unblock more;
    * `blocked`: every unfinished task is blocked (DevTeam's status) or waits on a failed, cancelled or
      blocked task.

    `details` names the tasks behind the reason: `in_progress`, `ready` (ready but not startable
    now), `blocked` ([{task, because}]) and `unfinished` (how many tasks are left)."""
    tasks = list(Task.objects.filter(session_id=session_id).values_list("key", "status", "task_type",
                                                                        "lease_expires_at"))
    statuses = {key: status for key, status, _type, _lease in tasks}
    blockers = dependency_blockers(statuses, list(TaskDependency.objects.filter(task__session_id=session_id)
                                                  .values_list("task__key", "depends_on__key")))
    running = sorted(key for key, status, _type, lease in tasks
                     if status == TaskStatus.IN_PROGRESS and (lease is None or lease >= now))
    sequential_running = [key for key, _status, kind, _lease in tasks
                          if key in running and kind == TaskType.SEQUENTIAL]
    ready = list(tasks_ready(session_id=session_id).values_list("key", flat=True))
    unfinished = [key for key, status in statuses.items() if status not in TASK_ENDED_STATUSES]
    blocked = [{"task": key, "because": because} for key, because in blockers.items()]
    details: dict[str, Any] = {"session": session_id, "max_concurrency": max_concurrency, "in_progress": running,
                               "ready": ready, "blocked": blocked, "unfinished": len(unfinished)}
    if not unfinished:
        reason, message = "all_done", "Every task of the session has ended."
    elif ready and len(running) >= max_concurrency:
        reason, message = "at_capacity", f"{len(running)} tasks are in progress (max_concurrency {max_concurrency})."
    elif ready and sequential_running:
        reason, message = "at_capacity", f"Sequential task {sequential_running[0]} runs alone."
    elif ready:
        reason, message = "at_capacity", f"Sequential task {ready[0]} waits until no other task runs."
    elif any(key not in blockers and statuses[key] != TaskStatus.BLOCKED for key in unfinished):
        reason, message = "waiting", "Tasks in progress or in review will unblock more."
    else:
        reason, message = "blocked", "Every unfinished task waits on a failed, cancelled or blocked task."
    return {"reason": reason, "message": message, "details": {"reason": reason, **details}}


def _task_detail_prefetches() -> tuple[Prefetch | str, ...]:
    return (
        Prefetch("dependencies", queryset=TaskDependency.objects.select_related("depends_on").only(
            "id", "task_id", "depends_on_id", "depends_on__key").order_by("depends_on__key")),
        "files",
        Prefetch("attempts", queryset=TaskAttempt.objects.order_by("-attempt_number")),
    )


def task_list() -> QuerySet[Task]:
    """Tasks with what GetTask returns: dependency keys, files, attempts (latest first)."""
    return Task.objects.prefetch_related(*_task_detail_prefetches())


def task_details_load(*, task: Task) -> Task:
    """What GetTask returns, loaded onto a task row already in hand and current (no re-read of it)."""
    task.__dict__.pop("_prefetched_objects_cache", None)
    prefetch_related_objects([task], *_task_detail_prefetches())
    return task


def feedback_batch_list() -> QuerySet[FeedbackBatch]:
    """Batches with items and attachment metadata (never the attachment bytes)."""
    return FeedbackBatch.objects.prefetch_related(
        "items", Prefetch("attachments", queryset=FeedbackAttachment.objects.defer("content")))


def session_feedback(*, session: Session, iteration_number: int | None = None) -> QuerySet[FeedbackBatch]:
    """GetFeedback: the session's batches (of one iteration number when given), with their items."""
    batches = feedback_batch_list().filter(session=session).select_related("iteration")
    return batches if iteration_number is None else batches.filter(iteration__number=iteration_number)


def feedback_item_list() -> QuerySet[FeedbackItem]:
    return FeedbackItem.objects.select_related("batch")


def feedback_attachment_list() -> QuerySet[FeedbackAttachment]:
    return FeedbackAttachment.objects.all()


def session_plan(*, session: Session) -> dict[str, Any]:
    """GetPlan: the current plan, the iteration it was written in, and the iterations that kept a snapshot."""
    snapshots = list(PlanSnapshot.objects.filter(session=session).values_list("iteration_number", flat=True))
    return {"session": session.pk, "content": session.current_plan_content, "iteration": session.plan_iteration,
            "snapshots": snapshots}


def session_progress(*, session: Session) -> dict[str, Any]:
    """GetProgress: counts per status and per wave, the task list, and the tasks blocked by a failed,
    cancelled or blocked task upstream (see dependency_blockers), from two queries."""
    tasks = list(Task.objects.filter(session=session).order_by(F("wave").asc(nulls_last=True), "sequence", "key")
                 .values("id", "key", "title", "status", "wave", "assigned_agent"))
    by_status = dict.fromkeys(TaskStatus.values, 0)
    by_wave: dict[int | None, dict[str, int]] = {}
    for task in tasks:
        # A status outside the enum (a row written past the services) is counted under its own name.
        by_status[task["status"]] = by_status.get(task["status"], 0) + 1
        wave = by_wave.setdefault(task["wave"], dict.fromkeys(TaskStatus.values, 0))
        wave[task["status"]] = wave.get(task["status"], 0) + 1
    return {
        "session": session.pk,
        "total": len(tasks),
        "by_status": by_status,
        "by_wave": [{"wave": wave, "total": sum(counts.values()), "by_status": counts}
                    for wave, counts in by_wave.items()],
        "tasks": tasks,
        "blocked": [{"task": key, "because": because} for key, because in dependency_blockers(
            {task["key"]: task["status"] for task in tasks}, _session_edges(session_id=session.pk)).items()],
    }


def _session_edges(*, session_id: str) -> list[tuple[str, str]]:
    """The session's dependency edges as (task key, depends-on key), one query."""
    return list(TaskDependency.objects.filter(task__session_id=session_id).values_list("task__key", "depends_on__key"))


def session_waves(*, session: Session) -> list[dict[str, Any]]:
    """Kahn layering of the session's dependency graph; a cycle is a 409 naming its tasks."""
    keys = list(Task.objects.filter(session=session).values_list("key", flat=True))
    layers, cyclic = kahn_layers(keys, _session_edges(session_id=session.pk))
    if cyclic:
        raise Conflict(f"The dependency graph has a cycle through: {', '.join(cyclic)}.", code="dependency_cycle",
                       details={"cycle": cyclic})
    return [{"wave": number, "tasks": layer} for number, layer in enumerate(layers, start=1)]


def session_task_graph(*, session: Session) -> dict[str, Any]:
    """The session's tasks laid out as `session_waves` computes them (Kahn layering), for the admin's
    task graph: two queries, whatever the number of tasks.

    Returns `waves` (lists of tasks, wave 1 first), `cyclic` (the tasks on or behind a dependency
    cycle, which no wave can hold; empty when the graph is acyclic) and `edges`. Each task is a dict of
    id, key, title, status, assigned_agent and `depends_on`, the keys it depends on.
    """
    tasks = {task["key"]: {**task, "depends_on": []} for task in Task.objects.filter(session=session).values(
        "id", "key", "title", "status", "assigned_agent")}
    edges = sorted(_session_edges(session_id=session.pk))
    for key, depends_on in edges:
        tasks[key]["depends_on"].append(depends_on)
    layers, cyclic = kahn_layers(tasks, edges)
    return {"waves": [[tasks[key] for key in layer] for layer in layers],
            "cyclic": [tasks[key] for key in cyclic], "edges": edges}


# Seed 001 does not name a threshold; five minutes without a write is well past any heartbeat.
DEFAULT_IDLE_SECONDS = 300


def sessions_interrupted(*, idle_seconds: int, project_path: str | None = None) -> QuerySet[Session]:
    """Sessions still `running` with no activity for idle_seconds (seed 001: resume interrupted runs)."""
    cutoff = timezone.now() - timedelta(seconds=idle_seconds)
    sessions = Session.objects.filter(status=SessionStatus.RUNNING, last_activity_at__lt=cutoff)
    if project_path:
        sessions = sessions.filter(project_path=project_path)
    return sessions.order_by("-last_activity_at")


# -- the session console (the admin) ------------------------------------------------------------

OPEN_QUESTION_STATUSES = ("unanswered", "research_needed")


def session_open_questions(*, session_id: str, limit: int = 20, offset: int = 0) -> tuple[list[Question], int]:
    """Questions the agents wait on, the most urgent first (high priority, then the oldest, then by id): the
    `limit` of them from `offset`, and how many there are (two queries)."""
    urgency = Case(When(priority="high", then=Value(0)), When(priority="medium", then=Value(1)), default=Value(2))
    questions = Question.objects.filter(session_id=session_id, status__in=OPEN_QUESTION_STATUSES)
    return list(questions.order_by(urgency, "created_at", "id")[offset:offset + limit]), questions.count()


def session_pending_signals(*, session_id: str) -> list[Signal]:
    """Signals sent and not yet polled by the orchestrator, oldest first (the order it polls them)."""
    return list(Signal.objects.filter(session_id=session_id, is_processed=False, expired_at__isnull=True)
                .order_by("sent_at", "id"))


def session_expired_signals(*, session_id: str) -> list[Signal]:
    """Signals the session ended without polling (each with its `expired_at` and `expired_reason`), oldest first."""
    return list(Signal.objects.filter(session_id=session_id, expired_at__isnull=False).order_by("sent_at", "id"))


def session_recent_failures(*, session_id: str, limit: int = 10) -> list[dict[str, Any]]:
    """What went wrong lately, newest first, each with its reason: failed tasks (their status note or
    error), failed attempts and failed reviews (the error, the review) and failed agent invocations
    (their errors). Three queries."""
    failures: list[dict[str, Any]] = []
    for task in (Task.objects.filter(session_id=session_id, status=TaskStatus.FAILED)
                 .order_by(F("completed_at").desc(nulls_last=True))[:limit]):
        failures.append({"kind": "task", "at": task.completed_at or task.updated_at, "task_key": task.key,
                         "who": task.assigned_agent, "reason": task.status_annotation or task.error_message,
                         "object": task})
    failed_attempts = Q(status=AttemptStatus.FAILED) | Q(review_verdict=ReviewVerdict.FAILED)
    for attempt in (TaskAttempt.objects.filter(failed_attempts, session_id=session_id)
                    .select_related("task").order_by("-created_at")[:limit]):
        review_failed = attempt.review_verdict == ReviewVerdict.FAILED
        failures.append({"kind": "review" if review_failed else "attempt",
                         "at": (attempt.reviewed_at if review_failed else attempt.ended_at) or attempt.created_at,
                         "task_key": attempt.task.key, "who": attempt.agent,
                         "reason": (attempt.review_report if review_failed else "")
                         or attempt.error_message or attempt.error_type, "object": attempt})
    for invocation in (AgentInvocation.objects.filter(session_id=session_id, status=InvocationStatus.FAILED)
                       .order_by("-started_at")[:limit]):
        failures.append({"kind": "invocation", "at": invocation.completed_at or invocation.started_at,
                         "task_key": invocation.task_key, "who": invocation.agent,
                         "reason": invocation.error_message or invocation.error_type, "object": invocation})
    failures.sort(key=lambda failure: failure["at"], reverse=True)
    return failures[:limit]


def session_change_marker(*, session_id: str) -> dict[str, Any] | None:
    """What moves whenever anything of the session changes, read from its row alone (one query on the
    primary key): every write that belongs to a session moves its `last_activity_at`
    (ralphsite.core.activity), a write to the session itself moves `updated_at`. None: no such session."""
    return (Session.objects.filter(pk=session_id)
            .values("last_activity_at", "updated_at", "status").first())


def session_current_work(*, session_id: str) -> dict[str, Any]:
    """What runs now, from the claims (two queries, however many tasks):

    * `in_progress`: the tasks in progress, the longest running first, each with its key, title, the
      agent holding it (its claim, else its assignee), `started_at`, `lease_expires_at` and its wave;
    * `wave`: the current wave, derived from the tasks: the first wave (Kahn layering of the
      dependencies, as `session_waves`) that still holds an unfinished task; None when every task has
      ended or the session has none;
    * `waves_running`: the waves the tasks in progress belong to."""
    tasks = list(Task.objects.filter(session_id=session_id).order_by()
                 .values("id", "key", "title", "status", "claimed_by", "assigned_agent", "started_at",
                         "lease_expires_at"))
    layers, _cyclic = kahn_layers((task["key"] for task in tasks), _session_edges(session_id=session_id))
    wave_of = {key: number for number, layer in enumerate(layers, start=1) for key in layer}
    unfinished = {task["key"] for task in tasks if task["status"] not in TASK_ENDED_STATUSES}
    in_progress = sorted(
        ({"id": task["id"], "key": task["key"], "title": task["title"],
          "agent": task["claimed_by"] or task["assigned_agent"], "started_at": task["started_at"],
          "lease_expires_at": task["lease_expires_at"], "wave": wave_of.get(task["key"])}
         for task in tasks if task["status"] == TaskStatus.IN_PROGRESS),
        key=lambda task: (task["started_at"] is None, task["started_at"] or 0, task["key"]))
    return {"wave": next((number for number, layer in enumerate(layers, start=1)
                          if unfinished.intersection(layer)), None),
            "waves_running": sorted({task["wave"] for task in in_progress if task["wave"] is not None}),
            "in_progress": in_progress}

