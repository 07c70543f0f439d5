from datetime import timedelta

from django.db import models
from django.db.models import F, Q

from ralphsite.core.choices import input_aliases
from ralphsite.core.db.lookups import key_not_shaped_like_id
from ralphsite.core.fields import request_id_field, token_count_field
from ralphsite.core.lifecycles import Lifecycle
from ralphsite.core.models import ULIDModel
from ralphsite.core.money import MoneyField
from ralphsite.core.shapes import JSONList, JSONString, json_type_check
from sessions_app.models.planning import Priority


@input_aliases(pending="not_started", running="in_progress", done="completed")
class TaskStatus(models.TextChoices):
    """Ralph V2 `TaskItemStatus` plus DevTeam's `blocked` and `skipped`.

    DevTeam / ralphy values map onto these: pending → not_started, running → in_progress,
    done → completed; in_progress, completed, failed, blocked, skipped keep their names.
    """

    NOT_STARTED = "not_started"
    IN_PROGRESS = "in_progress"
    REVIEW_PENDING = "review_pending"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    BLOCKED = "blocked"
    SKIPPED = "skipped"


_S = TaskStatus
# The task lifecycle (seed 000's TaskItemStatus flow, with DevTeam's blocked and skipped; ralphy's and DevTeam's
# spellings arrive through TaskStatus's aliases). Only claim-task enters in_progress (a live claim); the
# executor hands the work to review (review_pending, the claim ends) or finishes it; the reviewer completes
# it, sends it back to the pool (not_started) or fails it; failed, cancelled, blocked and skipped tasks are
# retried through not_started (a task that cannot be done fails or is cancelled before it starts, too);
# completed is final.
TASK_STATUS_LIFECYCLE = Lifecycle("task status", {
    _S.NOT_STARTED: frozenset({_S.IN_PROGRESS, _S.BLOCKED, _S.SKIPPED, _S.CANCELLED, _S.FAILED}),
    _S.IN_PROGRESS: frozenset({_S.NOT_STARTED, _S.REVIEW_PENDING, _S.COMPLETED, _S.FAILED, _S.BLOCKED,
                               _S.CANCELLED}),
    _S.REVIEW_PENDING: frozenset({_S.COMPLETED, _S.NOT_STARTED, _S.FAILED, _S.CANCELLED}),
    _S.COMPLETED: frozenset(),
    _S.FAILED: frozenset({_S.NOT_STARTED, _S.CANCELLED}),
    _S.CANCELLED: frozenset({_S.NOT_STARTED}),
    _S.BLOCKED: frozenset({_S.NOT_STARTED, _S.SKIPPED, _S.CANCELLED, _S.FAILED}),
    _S.SKIPPED: frozenset({_S.NOT_STARTED}),
})

# A task in one of these has ended: it holds no claim and nothing more is claimable in it.
TASK_ENDED_STATUSES = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.SKIPPED})
# A dependency in one of these lets its dependents start (skipped counts as satisfied) …
DEPENDENCY_SATISFIED_STATUSES = frozenset({TaskStatus.COMPLETED, TaskStatus.SKIPPED})
# … and one in these blocks them until someone retries it (DevTeam's `blocked` is set by hand).
DEPENDENCY_BLOCKING_STATUSES = frozenset({TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.BLOCKED})


class TaskType(models.TextChoices):
    """Ralph V2 `TaskItemType`: how the task may be scheduled within its wave."""

    SEQUENTIAL = "sequential"
    PARALLELIZABLE = "parallelizable"


class WorkType(models.TextChoices):
    """DevTeam `tasks.task_type`: what kind of work the task is."""

    FEATURE = "feature"
    BUGFIX = "bugfix"
    REFACTOR = "refactor"
    TEST = "test"
    DOCS = "docs"


class EstimatedEffort(models.TextChoices):
    SMALL = "small"
    MEDIUM = "medium"
    LARGE = "large"
    XL = "xl"


class Task(ULIDModel):
    """One unit of work: Ralph V2 `TaskItem`, DevTeam `tasks` and ralphy `tasks` in one row.

    Seed column → field:

    * Ralph V2 `Tasks`: Id → id; SessionId → session; TaskId → key; Title → title;
      Objective → objective; TaskType → task_type (sequential/parallelizable); Status → status;
      StatusAnnotation → status_annotation; FilesJson → TaskFile rows (`files`);
      SuccessCriteriaJson → success_criteria (JSON list); Notes → notes; WaveNumber → wave;
      IterationCreated → iteration_created; IterationUpdated → iteration_updated;
      CreatedAt, UpdatedAt → created_at, updated_at.
    * DevTeam `tasks`: id ("TASK-001") → key; name → title; description → description;
      task_type → work_type (feature/bugfix/refactor/test/docs); plan_id → plan (SET NULL);
      sprint_id → sprint_key; parent_task_id → parent (SET NULL); session_id → session (SET NULL);
      status → status (pending → not_started); scope_files → TaskFile rows with is_pattern;
      scope_json → scope; assigned_agent, assigned_model, priority, sequence, estimated_effort →
      same names; depends_on / blocks JSON → TaskDependency rows; actual_iterations →
      iteration_count; files_changed (JSON), created_at, started_at, completed_at, result_summary,
      error_message, commit_sha → same names.
    * ralphy `tasks`: run_id → session; task_id → key; status (pending/running/done/failed/
      skipped → not_started/in_progress/completed/failed/skipped); iter_count → iteration_count;
      started_at → started_at; ended_at → completed_at; last_phase → last_phase.

    `claimed_by` / `lease_expires_at` / `claim` are ours: an agent's claim on the task (claim-task)
    and its fencing value; a task whose lease expired goes back to the ready pool by itself
    (services.tasks.task_leases_expire, an upkeep job).
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.SET_NULL, null=True, blank=True,
                                related_name="tasks", db_index=False)
    key = models.CharField(max_length=100)
    session_path_key = "key"  # named by key within its session in paths (ralphsite.core.addressing.key_in_paths_of)
    title = models.CharField(max_length=500)
    objective = models.TextField(blank=True, default="")
    description = models.TextField(blank=True, default="")
    task_type = models.CharField(max_length=16, choices=TaskType.choices, default=TaskType.SEQUENTIAL)
    work_type = models.CharField(max_length=16, choices=WorkType.choices, blank=True, default="")
    status = models.CharField(max_length=16, choices=TaskStatus.choices, default=TaskStatus.NOT_STARTED)
    status_annotation = models.CharField(max_length=500, blank=True, default="")
    success_criteria = models.JSONField(default=list, blank=True, validators=[JSONList(JSONString())])
    notes = models.TextField(blank=True, default="")
    wave = models.PositiveIntegerField(null=True, blank=True)
    iteration_created = models.PositiveIntegerField(default=1)
    iteration_updated = models.PositiveIntegerField(default=1)
    plan = models.ForeignKey("sessions_app.Plan", on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="tasks", db_index=False)
    sprint_key = models.CharField(max_length=100, blank=True, default="")
    parent = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="subtasks")
    priority = models.CharField(max_length=16, choices=Priority.choices, default=Priority.MEDIUM)
    sequence = models.IntegerField(default=0)
    assigned_agent = models.CharField(max_length=200, blank=True, default="")
    assigned_model = models.CharField(max_length=100, blank=True, default="")
    estimated_effort = models.CharField(max_length=16, choices=EstimatedEffort.choices, blank=True, default="")
    iteration_count = models.PositiveIntegerField(default=0)
    last_phase = models.CharField(max_length=100, blank=True, default="")
    result_summary = models.TextField(blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    commit_sha = models.CharField(max_length=64, blank=True, default="")
    files_changed = models.JSONField(default=list, blank=True)
    scope = models.JSONField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.CharField(max_length=200, blank=True, default="")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    claim = models.PositiveBigIntegerField(
        default=0, help_text="The fencing value: one more with every claim of the task. heartbeat/, release/, "
                             "status/ and report/ on a claimed task send the value their claim returned.")

    class Meta:
        ordering = ["session", F("wave").asc(nulls_last=True), "sequence", "key"]
        constraints = [
            models.UniqueConstraint(fields=["session", "key"], name="task_session_key_unique"),
            json_type_check("success_criteria", "array", model="task"),
            key_not_shaped_like_id("key", "task_key_not_ulid"),
        ]
        indexes = [
            models.Index(fields=["session", "status"], name="task_session_status"),
            models.Index(fields=["session", "wave", "sequence", "key"], name="task_session_wave_order"),
            models.Index(fields=["wave"], name="task_wave"),
            models.Index(fields=["key"], name="task_key"),
            models.Index(fields=["status", "started_at"], name="task_status_started"),
            models.Index(fields=["plan", "status"], name="task_plan_status"),
            models.Index(fields=["sprint_key", "status"], name="task_sprint_status"),
            models.Index(fields=["assigned_agent"], name="task_assigned_agent"),
            models.Index(fields=["claimed_by"], name="task_claimed_by"),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.title}"

    @property
    def duration(self) -> timedelta | None:
        """From its start to its end; None while it has not ended (or never started)."""
        return self.completed_at - self.started_at if self.started_at and self.completed_at else None


class TaskDependency(models.Model):
    """Ralph V2 `TaskDependencies` (TaskItemId → task, DependsOnTaskItemId → depends_on) and
    DevTeam's `depends_on` / `blocks` JSON arrays, as rows. Both tasks belong to one session (the
    service checks it); no self-loop and no duplicate (database constraints).

    Deletes follow seed 000's Restrict: a task that another task depends on cannot be deleted (the
    task service answers 409 `has_dependents` naming them) unless its dependents go in the same
    delete; a task's own edges go with it.
    """

    scope_path = "task__session"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="dependencies", db_index=False)
    depends_on = models.ForeignKey(Task, on_delete=models.RESTRICT, related_name="dependents")

    class Meta:
        verbose_name_plural = "task dependencies"
        ordering = ["task", "depends_on"]
        constraints = [
            models.UniqueConstraint(fields=["task", "depends_on"], name="taskdependency_unique"),
            models.CheckConstraint(condition=~Q(task=F("depends_on")), name="taskdependency_no_self_loop"),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} depends on {self.depends_on_id}"


class ReviewVerdict(models.TextChoices):
    QUALIFIED = "qualified"
    FAILED = "failed"


class AttemptStatus(models.TextChoices):
    SUCCESS = "success"
    FAILED = "failed"
    ESCALATED = "escalated"


# An attempt's outcome (DevTeam task_attempts.status) is written once, except that a failure may be escalated;
# its review (seed 000 ReviewVerdict) is given once: a failed review is answered by a new attempt.
ATTEMPT_STATUS_LIFECYCLE = Lifecycle("attempt status", {
    "": frozenset({AttemptStatus.SUCCESS, AttemptStatus.FAILED, AttemptStatus.ESCALATED}),
    AttemptStatus.SUCCESS: frozenset(),
    AttemptStatus.FAILED: frozenset({AttemptStatus.ESCALATED}),
    AttemptStatus.ESCALATED: frozenset(),
})
ATTEMPT_VERDICT_LIFECYCLE = Lifecycle("attempt review verdict", {
    "": frozenset({ReviewVerdict.QUALIFIED, ReviewVerdict.FAILED}),
    ReviewVerdict.QUALIFIED: frozenset(),
    ReviewVerdict.FAILED: frozenset(),
})


class TaskAttempt(ULIDModel):
    """Ralph V2 `TaskReports` and DevTeam `task_attempts`, one row per attempt at a task.

    * Ralph: Id → id; TaskItemId → task; AttemptNumber → attempt_number (server-assigned);
      IterationNumber → iteration_number; ImplementationReport → implementation_report;
      ReviewReport → review_report; ReviewVerdict → review_verdict; CreatedAt → created_at;
      ReviewedAt → reviewed_at.
    * DevTeam: id → id; task_id → task (CASCADE); session_id → session (SET NULL);
      attempt_number, model, agent, started_at, ended_at, duration_seconds, status, error_type,
      error_message, tokens_input, tokens_output → same names; cost_cents → cost_usd.

    Ours: request_id; is_estimated (no cost was sent: the ledger priced the call from ModelPrice).
    Tokens and cost are counted in the ledger's token usage (one row per provider call) by the
    services, which also move the session totals.
    """

    scope_path = "task__session"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="attempts", db_index=False)
    session = models.ForeignKey("sessions_app.Session", on_delete=models.SET_NULL, null=True, blank=True,
                                related_name="task_attempts", db_index=False)
    attempt_number = models.PositiveIntegerField()
    iteration_number = models.PositiveIntegerField(default=1)
    implementation_report = models.TextField(blank=True, default="")
    review_report = models.TextField(blank=True, default="")
    review_verdict = models.CharField(max_length=16, choices=ReviewVerdict.choices, blank=True, default="")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    model = models.CharField(max_length=100, blank=True, default="")
    agent = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=16, choices=AttemptStatus.choices, blank=True, default="")
    error_type = models.CharField(max_length=100, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    # Null: not reported (DevTeam's NULL), which its v_task_attempts_summary leaves out of the sum; the ledger's
    # usage book counts it as 0.
    tokens_input = token_count_field(unknown_is_null=True)
    tokens_output = token_count_field(unknown_is_null=True)
    cost_usd = MoneyField(default=0)
    is_estimated = models.BooleanField(default=False)
    request_id = request_id_field()
    duration_seconds = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task", "attempt_number"]
        constraints = [
            models.UniqueConstraint(fields=["task", "attempt_number"], name="taskattempt_task_number_unique"),
        ]
        indexes = [
            models.Index(fields=["session", "status"], name="taskattempt_session_status"),
            models.Index(fields=["model"], name="taskattempt_model"),
            models.Index(fields=["status"], name="taskattempt_status"),
            models.Index(fields=["review_verdict"], name="taskattempt_review_verdict"),
        ]

    def __str__(self) -> str:
        return f"attempt {self.attempt_number} of {self.task_id}"

    @property
    def tokens_total(self) -> int | None:
        """Input plus output tokens; None when either is not known (as the seed's `tokens_input + tokens_output`)."""
        if self.tokens_input is None or self.tokens_output is None:
            return None
        return self.tokens_input + self.tokens_output

    @property
    def duration(self) -> timedelta | None:
        """How long it ran: as its agent reported it (duration_seconds), else from its start to its end."""
        if self.duration_seconds is not None:
            return timedelta(seconds=self.duration_seconds)
        return self.ended_at - self.started_at if self.started_at and self.ended_at else None


class FileType(models.TextChoices):
    SOURCE = "source"
    TEST = "test"
    CONFIG = "config"
    DOCS = "docs"


class FileAccess(models.TextChoices):
    ALLOWED = "allowed"
    FORBIDDEN = "forbidden"
    READ_ONLY = "read_only"


def path_is_pattern(path: str) -> bool:
    """A task file's path is a glob pattern when it has any of `*`, `?` or `[`."""
    return bool(set("*?[") & set(path))


class TaskFile(ULIDModel):
    """DevTeam `task_files`: id → id; task_id → task (CASCADE); file_path → path; file_type,
    access_type, is_pattern → same names. Ralph's `FilesJson` entries and DevTeam's `scope_files`
    become these rows (a path containing * ? or [ is a glob pattern).
    """

    scope_path = "task__session"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="files", db_index=False)
    path = models.CharField(max_length=1000)
    is_pattern = models.BooleanField(default=False)
    file_type = models.CharField(max_length=16, choices=FileType.choices, blank=True, default="")
    access_type = models.CharField(max_length=16, choices=FileAccess.choices, default=FileAccess.ALLOWED)

    class Meta:
        ordering = ["task", "path"]
        constraints = [models.UniqueConstraint(fields=["task", "path"], name="taskfile_task_path_unique")]
        indexes = [models.Index(fields=["access_type"], name="taskfile_access_type")]

    def __str__(self) -> str:
        return self.path
