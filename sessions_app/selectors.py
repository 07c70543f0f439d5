"""Read queries for orchestration state."""

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet, prefetch_related_objects
from django.utils import timezone

from ralphsite.errors import Conflict
from sessions_app.graph import kahn_layers
from sessions_app.models import (
    AcceptanceCriterion,
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
    LoopRun,
    ProgressSummary,
    Session,
    SessionPhase,
    SessionStateEntry,
    SessionStatus,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskStatus,
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
# -- orchestration reads ----------------------------------------------------------------------

def tasks_ready(*, session_id: str, now: datetime) -> QuerySet[Task]:
    """Tasks an agent may start now, best first: not started (or in progress with an expired
    lease) and every dependency completed; lowest wave, then sequence, then key."""
    unfinished_dependency = TaskDependency.objects.filter(task=OuterRef("pk")).exclude(
        depends_on__status=TaskStatus.COMPLETED)
    return (
        Task.objects.filter(session_id=session_id)
        .filter(Q(status=TaskStatus.NOT_STARTED) | Q(status=TaskStatus.IN_PROGRESS, lease_expires_at__lt=now))
        .filter(~Exists(unfinished_dependency))
        .order_by(F("wave").asc(nulls_last=True), "sequence", "key")
    )


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


def feedback_item_list() -> QuerySet[FeedbackItem]:
    return FeedbackItem.objects.select_related("batch")


def feedback_attachment_list() -> QuerySet[FeedbackAttachment]:
    return FeedbackAttachment.objects.all()


def session_progress(*, session: Session) -> dict[str, Any]:
    """GetProgress: counts per status and per wave, and the task list, from one query."""
    tasks = list(Task.objects.filter(session=session).order_by(F("wave").asc(nulls_last=True), "sequence", "key")
                 .values("id", "key", "title", "status", "wave", "assigned_agent"))
    by_status = dict.fromkeys(TaskStatus.values, 0)
    by_wave: dict[int | None, dict[str, int]] = {}
    for task in tasks:
        by_status[task["status"]] += 1
        wave = by_wave.setdefault(task["wave"], dict.fromkeys(TaskStatus.values, 0))
        wave[task["status"]] += 1
    return {
        "session": session.pk,
        "total": len(tasks),
        "by_status": by_status,
        "by_wave": [{"wave": wave, "total": sum(counts.values()), "by_status": counts}
                    for wave, counts in by_wave.items()],
        "tasks": tasks,
    }


def _session_edges(*, session: Session) -> list[tuple[str, str]]:
    """The session's dependency edges as (task key, depends-on key), one query."""
    return list(TaskDependency.objects.filter(task__session=session).values_list("task__key", "depends_on__key"))


def session_waves(*, session: Session) -> list[dict[str, Any]]:
    """Kahn layering of the session's dependency graph; a cycle is a 409 naming its tasks."""
    keys = list(Task.objects.filter(session=session).values_list("key", flat=True))
    layers, cyclic = kahn_layers(keys, _session_edges(session=session))
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
    edges = sorted(_session_edges(session=session))
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
