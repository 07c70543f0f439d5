from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from ralphsite.core.choices import input_aliases
from ralphsite.core.db.lookups import key_not_shaped_like_id
from ralphsite.core.fields import token_count_field
from ralphsite.core.lifecycles import Lifecycle
from ralphsite.core.models import ULIDModel
from ralphsite.core.money import MoneyField, usd_to_cents


class OrchestratorState(models.TextChoices):
    """Ralph V2 `OrchestratorState`."""

    INITIALIZING = "initializing"
    PLANNING = "planning"
    BATCHING = "batching"
    EXECUTING_BATCH = "executing_batch"
    REVIEWING_BATCH = "reviewing_batch"
    SESSION_REVIEW = "session_review"
    COMPLETE = "complete"
    REPLANNING = "replanning"
    AWAITING_FEEDBACK = "awaiting_feedback"
    PAUSED = "paused"
    STOPPED = "stopped"


class SessionStatus(models.TextChoices):
    """Union of ralphy `runs.status` and DevTeam `sessions.status`."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    STOPPED = "stopped"
    ABORTED = "aborted"


# A session in any of these has ended: it hands out no more work (see services.tasks.task_claim_next).
FINISHED_SESSION_STATUSES = frozenset(SessionStatus) - {SessionStatus.RUNNING}

# A running session finishes once (finish/, or a status in a PATCH); resume/ runs an interrupted one again;
# a completed one is final (seed 001: start a new session).
SESSION_STATUS_LIFECYCLE = Lifecycle("session status", {
    status: (FINISHED_SESSION_STATUSES if status == SessionStatus.RUNNING
             else frozenset() if status == SessionStatus.COMPLETED else frozenset({SessionStatus.RUNNING}))
    for status in SessionStatus
})

# Ralph V2's states that end its loop, and the session status each ends it with, on every path (transition/,
# a PATCH, the import): Complete completes the session, Stopped stops it.
ENDING_STATES = {OrchestratorState.COMPLETE: SessionStatus.COMPLETED, OrchestratorState.STOPPED: SessionStatus.STOPPED}
_WORKING_STATES = frozenset(OrchestratorState) - set(ENDING_STATES) - {OrchestratorState.INITIALIZING}
# The orchestrator moves freely between its working states (seed 000 gives no order between them: it replans,
# pauses and awaits feedback from any of them) and never back to initializing; complete is final; a stopped
# loop, once resumed (resume/), goes on in any working state.
SESSION_STATE_LIFECYCLE = Lifecycle("session state", {
    state: (frozenset() if state == OrchestratorState.COMPLETE
            else _WORKING_STATES if state == OrchestratorState.STOPPED
            else (_WORKING_STATES | set(ENDING_STATES)) - {state})
    for state in OrchestratorState
})


class CommandType(models.TextChoices):
    """DevTeam `sessions.command_type`."""

    PLAN = "plan"
    IMPLEMENT = "implement"
    BUG = "bug"
    ISSUE = "issue"


@input_aliases(**{"half-open": "half_open"})  # DevTeam's spelling (the folding rule accepts it too; listed here)
class CircuitBreakerState(models.TextChoices):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class ExecutionMode(models.TextChoices):
    NORMAL = "normal"
    ECO = "eco"


class Session(ULIDModel):
    """One orchestration session: the row four systems kept in four different tables.

    Seed column → field:

    * Ralph V2 `Sessions` (seed 000): Id → id (ULID instead of GUID); SessionId → key;
      UserRequest → user_request; CurrentState → state; CurrentIteration → current_iteration;
      CurrentWave → current_wave; CurrentPlanContent → current_plan_content;
      DefaultModel → default_model; MaxConcurrency → max_concurrency; CreatedAt → created_at;
      UpdatedAt → updated_at; CompletedAt → ended_at.
    * ralphy `runs` (seed 001): id → id; status → status; started_at → started_at;
      ended_at → ended_at; config_json → config.
    * DevTeam `sessions` (seed 003): id → id; started_at, ended_at, command, command_type, status,
      exit_reason, current_phase, current_agent, current_model, current_iteration,
      max_iterations, consecutive_failures, max_consecutive_failures, circuit_breaker_state,
      execution_mode, bug_council_activated, bug_council_reason → same names;
      current_task_id → current_task_key; plan_id → plan_key; sprint_id → sprint_key;
      total_tokens_input / total_tokens_output → same names (64-bit);
      total_cost_cents → total_cost_usd (Decimal USD; cents = usd * 100).
    * ralph-mem `sessions` (seed 004): id → id; project_path, started_at, ended_at, summary,
      summary_embedding, token_count → same names.

    `plan_iteration` is ours: the iteration the current plan was written in, so that an update in
    a later iteration keeps it as that iteration's PlanSnapshot.
    `last_activity_at` is ours: services touch it so interrupted runs can be detected (seed 001).
    The token and cost totals are maintained by services only (never written by clients).
    """

    scope_path = ""
    address_key = "key"  # agents may name a session by its key wherever an id is taken (ralphsite.core.addressing)

    key = models.CharField(max_length=100, blank=True, default="",
                           help_text="Human-readable session id (Ralph SessionId), unique in its project when set.")
    user_request = models.TextField(blank=True, default="")
    state = models.CharField(max_length=32, choices=OrchestratorState.choices,
                             default=OrchestratorState.INITIALIZING)
    status = models.CharField(max_length=16, choices=SessionStatus.choices, default=SessionStatus.RUNNING)
    current_iteration = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    current_wave = models.PositiveIntegerField(null=True, blank=True)
    current_plan_content = models.TextField(blank=True, default="")
    plan_iteration = models.PositiveIntegerField(
        null=True, blank=True, help_text="The iteration in which current_plan_content was last written.")
    default_model = models.CharField(max_length=100, default="gpt-5")
    max_concurrency = models.PositiveIntegerField(
        default=2, help_text="At most this many of the session's tasks in progress at once (claim-task).")
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(default=timezone.now)
    config = models.JSONField(default=dict, blank=True, help_text="ralphy run configuration (config_json).")
    command = models.CharField(max_length=500, blank=True, default="")
    command_type = models.CharField(max_length=16, choices=CommandType.choices, blank=True, default="")
    exit_reason = models.CharField(max_length=200, blank=True, default="")
    current_phase = models.CharField(max_length=100, blank=True, default="")
    current_task_key = models.CharField(max_length=100, blank=True, default="")
    current_agent = models.CharField(max_length=200, blank=True, default="")
    current_model = models.CharField(max_length=100, blank=True, default="")
    max_iterations = models.PositiveIntegerField(default=10)
    consecutive_failures = models.PositiveIntegerField(default=0)
    max_consecutive_failures = models.PositiveIntegerField(default=5)
    circuit_breaker_state = models.CharField(max_length=16, choices=CircuitBreakerState.choices,
                                             default=CircuitBreakerState.CLOSED)
    plan_key = models.CharField(max_length=100, blank=True, default="")
    sprint_key = models.CharField(max_length=100, blank=True, default="")
    execution_mode = models.CharField(max_length=16, choices=ExecutionMode.choices,
                                      default=ExecutionMode.NORMAL)
    total_tokens_input = models.BigIntegerField(default=0)
    total_tokens_output = models.BigIntegerField(default=0)
    total_cost_usd = MoneyField(default=0)
    bug_council_activated = models.BooleanField(default=False)
    bug_council_reason = models.TextField(blank=True, default="")
    project_path = models.CharField(max_length=1000, blank=True, default="")
    summary = models.TextField(blank=True, default="")
    summary_embedding = models.BinaryField(null=True, blank=True)
    token_count = token_count_field()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # A key is unique within its project only: one project neither learns nor blocks another's keys.
            models.UniqueConstraint(fields=["key", "project_path"], condition=~Q(key=""),
                                    name="session_key_project_unique"),
            key_not_shaped_like_id("key", "session_key_not_ulid"),
            models.CheckConstraint(condition=Q(current_iteration__gte=1), name="session_iteration_from_1"),
        ]
        indexes = [
            models.Index(fields=["status", "-started_at"], name="session_status_started"),
            models.Index(fields=["state"], name="session_state"),
            models.Index(fields=["project_path", "-started_at"], name="session_project_started"),
            models.Index(fields=["command_type"], name="session_command_type"),
            models.Index(fields=["started_at"], name="session_started"),
            models.Index(fields=["status", "last_activity_at"], name="session_status_activity"),
        ]

    @property
    def total_cost_cents(self) -> int:
        return usd_to_cents(self.total_cost_usd)
