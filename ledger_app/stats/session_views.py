"""Seed 003's views over the orchestration tables sessions_app keeps (sessions, agent runs, tasks,
attempts, acceptance criteria, features, context budgets).

Column names are the seed's. Where the seed names a sprint, a plan or (in acceptance_criteria) a
task by its text id, the column holds our key for it (`sprint_key`, `plan_key`, `task_key`): a
DevTeam id such as "TASK-001" is our key, our ids are ULIDs. A column holding a session's or a task's own id
holds the id the seed's file gave it when an import brought the row, else ours (`seed_id`), as the seed answers
its ids. `task-attempts-summary` groups by the task row itself, so it gives both `task_id` and `task_key`.

Statuses: an agent run succeeded when its status is `success` (DevTeam) or `completed` (Ralph
writes `completed` where DevTeam writes `success`; see `InvocationStatus`). The seed's task status
`pending` is our `not_started`.

`since`/`until` filter each view on the date named in its docstring; `session` on the row's session
(for criteria and features, which have none: the plan the session executes, `Session.plan_key`).
"""

from collections.abc import Callable

from django.db.models import Avg, Count, F, Max, Q, QuerySet, Sum, Value

from ledger_app.stats.framework import (
    Row,
    StatFilters,
    all_sources_of,
    as_money,
    as_rate,
    cents,
    count_if,
    rate,
    related_count,
    scoped,
    seed_id,
    stat,
)
from ledger_app.stats.usage import units, usage_by
from ralphsite.core.money import usd_to_cents
from sessions_app.models import (
    AcceptanceCriterion,
    AgentInvocation,
    AttemptStatus,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    FileAccess,
    InvocationStatus,
    Session,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
    TaskStatus,
)

RUN_SUCCEEDED = Q(status__in=[InvocationStatus.SUCCESS, InvocationStatus.COMPLETED])
RUN_FAILED = Q(status=InvocationStatus.FAILED)


def in_session_plan(session_id: str) -> Q:
    """Rows of the plan the session executes (criteria and features carry a plan key, no session)."""
    return Q(plan_key__in=Session.objects.filter(pk=session_id).exclude(plan_key="").values("plan_key"))


@stat("session-summary", columns=(
    "id", "command", "status", "started_at", "ended_at", "current_phase", "current_agent", "current_model",
    "current_iteration", "execution_mode", "total_tokens", "total_cost_dollars", "agent_runs", "escalations",
    "bug_council_activated"))
def session_summary(filters: StatFilters) -> list[Row]:
    """v_session_summary: every session (newest first, `since`/`until` on started_at) with its token
    total, cost in dollars (ROUND(total_cost_cents / 100.0, 2) with the cents rounded from USD half
    away from zero, as a string with 2 places) and how many agent runs and escalations it has."""
    rows = (scoped(Session.objects.all(), filters, date_field="started_at", session_field="pk")
            .order_by("-started_at", "id")
            .values("id", "command", "status", "started_at", "ended_at", "current_phase", "current_agent",
                    "current_model", "current_iteration", "execution_mode", "total_cost_usd",
                    "bug_council_activated")
            .annotate(total_tokens=F("total_tokens_input") + F("total_tokens_output"),
                      agent_runs=related_count(AgentInvocation.objects.all()),
                      escalations=related_count(Escalation.objects.all()), seed_session_id=seed_id(Session)))
    return [{**row, "id": row["seed_session_id"],
             "total_cost_dollars": as_money(usd_to_cents(row["total_cost_usd"]), places=2)} for row in rows]


def agent_runs(filters: StatFilters) -> QuerySet:
    """Agent runs (AgentInvocation) in the filters' session, `since`/`until` on started_at."""
    return scoped(AgentInvocation.objects.all(), filters, date_field="started_at")


_RUNS = {"runs": Count("*"), "successes": count_if(RUN_SUCCEEDED), "failures": count_if(RUN_FAILED),
         "success_rate": rate(RUN_SUCCEEDED)}


def _calls_by(filters: StatFilters, key: tuple[str, ...], usage: Callable[[Row], Row]) -> list[Row]:
    """The provider calls' figures per `key`, whichever path reported them (token usage, read from its rollup);
    `usage` makes the columns from a group's sums."""
    return [{**{k: row[k] for k in key}, "api_calls": row["calls"], **usage(row)}
            for row in usage_by(filters, by=key)]


@stat("model-usage", columns=("session_id", "model", "runs", "successes", "failures", "success_rate",
                              "tokens_input", "tokens_output", "cost_cents"))
def model_usage(filters: StatFilters) -> list[Row]:
    """v_model_usage: per session and model, the agent runs (`since`/`until` on started_at; success is `success`
    or `completed`) with the tokens and cost (whole cents of their summed USD) the runs themselves carry, exactly
    as its SQL sums agent_runs; `all_sources` gives the provider calls of every path per session and model."""
    rows = (agent_runs(filters).values("session_id", "model").order_by("session_id", "model")
            .annotate(**_RUNS, tokens_input=Sum("tokens_input"), tokens_output=Sum("tokens_output"),
                      cost_cents=cents())
            .annotate(seed_session_id=seed_id(Session, "session_id")))
    return [{**row, "session_id": row["seed_session_id"], "success_rate": as_rate(row["success_rate"])}
            for row in rows]


@all_sources_of("model-usage", columns=("session_id", "model", "api_calls", "tokens_input", "tokens_output",
                                        "cost_cents"))
def model_usage_all_sources(filters: StatFilters) -> list[Row]:
    """Per session and model, every provider call whichever path reported it (token usage, events, attempts,
    agent invocations, Claude Code's hooks; `since`/`until` on the call's time), cost in whole cents: a call
    an agent run and token usage both report is counted once."""
    return _calls_by(filters, ("session_id", "model"), lambda sums: {
        "tokens_input": sums["input_tokens"], "tokens_output": sums["output_tokens"],
        "cost_cents": units(sums["usd_units"], places=2)})


@stat("agent-performance", columns=("agent", "total_runs", "successes", "success_rate", "avg_duration_seconds",
                                    "total_cost_cents"))
def agent_performance(filters: StatFilters) -> list[Row]:
    """v_agent_performance: per agent, the agent runs (`since`/`until` on started_at; success is `success` or
    `completed`; the mean of the runs' known durations in seconds, to the millisecond we store, None when no run
    has one) and the cost the runs themselves carry (whole cents of their summed USD), exactly as its SQL sums
    agent_runs; `all_sources` gives the provider calls of every path per agent."""
    rows = (agent_runs(filters).values("agent").order_by("agent")
            .annotate(total_runs=Count("*"), successes=count_if(RUN_SUCCEEDED), success_rate=rate(RUN_SUCCEEDED),
                      avg_duration_ms=Avg("duration_ms"), total_cost_cents=cents()))
    return [{**row, "success_rate": as_rate(row["success_rate"]),
             "avg_duration_seconds": None if row["avg_duration_ms"] is None
             else round(float(row["avg_duration_ms"]) / 1000, 3)} for row in rows]


@all_sources_of("agent-performance", columns=("agent", "api_calls", "total_cost_cents"))
def agent_performance_all_sources(filters: StatFilters) -> list[Row]:
    """Per agent, every provider call whichever path reported it (token usage, events, attempts, agent
    invocations, Claude Code's hooks; `since`/`until` on the call's time) and its cost in whole cents."""
    return _calls_by(filters, ("agent",), lambda sums: {"total_cost_cents": units(sums["usd_units"], places=2)})


# Seed 003's `tasks` columns in its order (SELECT * FROM tasks), plus `key` after `id`: the seed's
# id is the text key ("TASK-001"), ours a ULID, so the row gives both (as task-attempts-summary does).
_TASK_COLUMNS = (
    "id", "key", "name", "description", "task_type", "plan_id", "sprint_id", "parent_task_id", "session_id",
    "status", "scope_files", "scope_json", "assigned_agent", "assigned_model", "priority", "sequence", "depends_on",
    "blocks", "estimated_effort", "actual_iterations", "files_changed", "created_at", "started_at", "completed_at",
    "result_summary", "error_message", "commit_sha",
)
# Seed column → our field, where the names differ (the three list columns are filled in below).
_TASK_FIELDS = {"name": F("title"), "task_type": F("work_type"), "plan_id": F("plan__key"),
                "sprint_id": F("sprint_key"), "parent_task_id": F("parent__key"), "scope_json": F("scope"),
                "actual_iterations": F("iteration_count")}
_TASK_LISTS = ("scope_files", "depends_on", "blocks")


def _task_lists(task_id: str) -> dict[str, list[str]]:
    """The task's allowed scope files and the keys it depends on and blocks, in one query (a UNION)."""
    def tagged(queryset: QuerySet, tag: str, value: str) -> QuerySet:
        return queryset.order_by().annotate(tag=Value(tag), value=F(value)).values_list("tag", "value")

    lists: dict[str, list[str]] = {name: [] for name in _TASK_LISTS}
    allowed_files = TaskFile.objects.filter(task_id=task_id, access_type=FileAccess.ALLOWED)
    rows = tagged(allowed_files, "scope_files", "path").union(
        tagged(TaskDependency.objects.filter(task_id=task_id), "depends_on", "depends_on__key"),
        tagged(TaskDependency.objects.filter(depends_on_id=task_id), "blocks", "task__key"), all=True,
    ).order_by()  # Django 6 orders a union by the first model's Meta.ordering unless told not to
    for tag, value in rows:
        lists[tag].append(value)
    return {name: sorted(values) for name, values in lists.items()}


@stat("current-task", columns=_TASK_COLUMNS)
def current_task(filters: StatFilters) -> list[Row]:
    """v_current_task: the in-progress task started last (`since`/`until` on its started_at; one
    never started counts as the oldest, as SQLite sorts NULL), with seed 003's tasks columns:
    id and session_id are the seed's ids of an imported task and session (else ours),
    name is our title, task_type our work_type, actual_iterations our iteration_count, scope_json
    our scope; plan_id and parent_task_id hold the plan's and parent's keys; scope_files is the
    task's allowed file paths joined by commas (as the seed stores them; null when it has none, as
    the seed's NULL), depends_on and blocks the keys of the tasks it waits for and holds up (each
    sorted)."""
    in_progress = scoped(Task.objects.filter(status=TaskStatus.IN_PROGRESS), filters, date_field="started_at")
    # Aliased: some seed names are other fields of ours (task_type is Ralph's sequential/parallel).
    task = (in_progress.order_by(F("started_at").desc(nulls_last=True), "-id")
            .values(*(column for column in _TASK_COLUMNS if column not in _TASK_FIELDS and column not in _TASK_LISTS),
                    **{f"seed_{column}": value for column, value in _TASK_FIELDS.items()},
                    seed_id=seed_id(Task), seed_session_id=seed_id(Session, "session_id"))
            .first())
    if task is None:
        return []
    lists = _task_lists(task["id"])
    seed_values = {column: task[f"seed_{column}"] for column in (*_TASK_FIELDS, "id", "session_id")}
    return [{**task, **seed_values, **lists, "scope_files": ",".join(lists["scope_files"]) or None}]


@stat("sprint-progress", columns=("sprint_id", "total_tasks", "completed", "in_progress", "failed", "pending",
                                  "completion_rate"))
def sprint_progress(filters: StatFilters) -> list[Row]:
    """v_sprint_progress: tasks per sprint key (`since`/`until` on the task's created_at; tasks
    without a sprint are left out); `pending` counts our `not_started`."""
    completed = Q(status=TaskStatus.COMPLETED)
    rows = (scoped(Task.objects.exclude(sprint_key=""), filters, date_field="created_at")
            .values("sprint_key").order_by("sprint_key")
            .annotate(total_tasks=Count("*"), completed=count_if(completed),
                      in_progress=count_if(Q(status=TaskStatus.IN_PROGRESS)),
                      failed=count_if(Q(status=TaskStatus.FAILED)), pending=count_if(Q(status=TaskStatus.NOT_STARTED)),
                      completion_rate=rate(completed)))
    return [{**row, "sprint_id": row["sprint_key"], "completion_rate": as_rate(row["completion_rate"])}
            for row in rows]


@stat("task-attempts-summary", columns=("task_id", "task_key", "total_attempts", "successes", "failures",
                                        "last_attempt", "total_tokens", "total_cost_cents"))
def task_attempts_summary(filters: StatFilters) -> list[Row]:
    """v_task_attempts_summary: attempts per task, named by id (the seed's, for an imported task) and key
    (`since`/`until` on the
    attempt's created_at, `session` on the attempt's); cost in whole cents."""
    rows = (scoped(TaskAttempt.objects.all(), filters, date_field="created_at")
            .values("task_id", task_key=F("task__key")).order_by("task_key", "task_id")
            .annotate(total_attempts=Count("*"), successes=count_if(Q(status=AttemptStatus.SUCCESS)),
                      failures=count_if(Q(status=AttemptStatus.FAILED)), last_attempt=Max("attempt_number"),
                      total_tokens=Sum(F("tokens_input") + F("tokens_output")), total_cost_cents=cents())
            .annotate(seed_task_id=seed_id(Task, "task_id")))
    return [{**row, "task_id": row["seed_task_id"]} for row in rows]


def pass_counts(queryset: QuerySet, *, key: str, filters: StatFilters) -> QuerySet:
    """Rows per `key` with how many pass and fail, `since`/`until` on created_at, `session` through
    the session's plan: the shape acceptance criteria and features share."""
    return (scoped(queryset, filters, date_field="created_at", session_field=in_session_plan)
            .values(key).order_by(key)
            .annotate(total=Count("*"), passing=count_if(Q(passes=True)), failing=count_if(Q(passes=False)),
                      pass_rate=rate(Q(passes=True))))


@stat("acceptance-criteria-status", columns=("task_id", "total_criteria", "passing", "failing", "pass_rate"))
def acceptance_criteria_status(filters: StatFilters) -> list[Row]:
    """v_acceptance_criteria_status: criteria per task key (`since`/`until` on the criterion's
    created_at; criteria naming no task form one group whose task_id is null, as the seed's NULL
    task_id does)."""
    rows = pass_counts(AcceptanceCriterion.objects.all(), key="task_key", filters=filters)
    return [{**row, "task_id": row["task_key"] or None, "total_criteria": row["total"],
             "pass_rate": as_rate(row["pass_rate"])} for row in rows]


@stat("feature-status", columns=("plan_id", "total_features", "passing", "failing", "total_steps", "steps_passed",
                                 "feature_pass_rate"))
def feature_status(filters: StatFilters) -> list[Row]:
    """v_feature_status: features per plan key (`since`/`until` on the feature's created_at;
    features of no plan form one group whose plan_id is null, as the seed's NULL plan_id does), with
    their steps."""
    rows = pass_counts(Feature.objects.all(), key="plan_key", filters=filters).annotate(
        total_steps=Sum("steps_total"), passed_steps=Sum("steps_passed"))
    return [{**row, "plan_id": row["plan_key"] or None, "total_features": row["total"],
             "steps_passed": row["passed_steps"], "feature_pass_rate": as_rate(row["pass_rate"])} for row in rows]


@stat("context-status", columns=("session_id", "model", "context_limit", "current_usage", "usage_percent", "status",
                                 "snapshots_created"))
def context_status(filters: StatFilters) -> list[Row]:
    """v_context_status: each context budget (`since`/`until` on its created_at, which is indexed)
    with how many context snapshots its session has (all of them, as the seed counts)."""
    rows = (scoped(ContextBudget.objects.all(), filters, date_field="created_at")
            .order_by("session_id", "model")
            .values("session_id", "model", "context_limit", "current_usage", "usage_percent", "status",
                    snapshots_created=related_count(ContextSnapshot.objects.all(), outer="session_id"),
                    seed_session_id=seed_id(Session, "session_id")))
    return [{**row, "session_id": row["seed_session_id"]} for row in rows]
