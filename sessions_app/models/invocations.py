from django.db import models
from django.utils import timezone

from ralphsite.core.fields import request_id_field, token_count_field
from ralphsite.core.models import ULIDModel
from ralphsite.core.money import MoneyField


class AgentRole(models.TextChoices):
    PLANNER = "planner"
    QUESTIONER = "questioner"
    EXECUTOR = "executor"
    REVIEWER = "reviewer"


class InvocationStatus(models.TextChoices):
    """Ralph `InvocationStatus` (started, completed, failed, cancelled) united with DevTeam
    `agent_runs.status` (running, success, failed, escalated). Ralph writes `completed` where
    DevTeam writes `success`; both are kept as sent, and statistics count either as a success.
    """

    STARTED = "started"
    RUNNING = "running"
    COMPLETED = "completed"
    SUCCESS = "success"
    FAILED = "failed"
    CANCELLED = "cancelled"
    ESCALATED = "escalated"


FINISHED_INVOCATION_STATUSES = frozenset({
    InvocationStatus.COMPLETED, InvocationStatus.SUCCESS, InvocationStatus.FAILED,
    InvocationStatus.CANCELLED, InvocationStatus.ESCALATED,
})


class AgentInvocation(ULIDModel):
    """One call of an agent: Ralph V2 `AgentInvocations` and DevTeam `agent_runs`.

    * Ralph: Id → id; SessionId → session (CASCADE); TaskItemId → task (SET NULL); AgentRole → role;
      Mode → mode; Prompt → prompt; Response → response; InvocationStatus → status;
      DurationMs → duration_ms; StartedAt → started_at; CompletedAt → completed_at.
    * DevTeam: id → id; session_id → session (CASCADE); agent, agent_type, model, started_at,
      status, error_message, error_type, iteration, attempt, tokens_input, tokens_output,
      files_changed (JSON), output_summary → same names; ended_at → completed_at;
      duration_seconds → duration_ms (times 1000); task_id (text) → task_key (and task when it
      names a task of the session); cost_cents → cost_usd.
    * Ours: request_id (its usage is counted once in the ledger's token usage); is_estimated (no
      cost was sent: the ledger priced the call from ModelPrice).
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE,
                                related_name="agent_invocations", db_index=False)
    task = models.ForeignKey("sessions_app.Task", on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="agent_invocations")
    task_key = models.CharField(max_length=100, blank=True, default="")
    role = models.CharField(max_length=16, choices=AgentRole.choices, blank=True, default="")
    agent = models.CharField(max_length=200, blank=True, default="")
    agent_type = models.CharField(max_length=100, blank=True, default="")
    mode = models.CharField(max_length=100, blank=True, default="")
    model = models.CharField(max_length=100, blank=True, default="")
    prompt = models.TextField(blank=True, default="")
    response = models.TextField(blank=True, default="")
    status = models.CharField(max_length=16, choices=InvocationStatus.choices, default=InvocationStatus.STARTED)
    error_message = models.TextField(blank=True, default="")
    error_type = models.CharField(max_length=100, blank=True, default="")
    iteration = models.PositiveIntegerField(null=True, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    tokens_input = token_count_field()
    tokens_output = token_count_field()
    cost_usd = MoneyField(default=0)
    is_estimated = models.BooleanField(default=False)
    request_id = request_id_field()
    duration_ms = models.BigIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)
    files_changed = models.JSONField(default=list, blank=True)
    output_summary = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["session", "-started_at"], name="invocation_session_started"),
            models.Index(fields=["session", "role"], name="invocation_session_role"),
            models.Index(fields=["session", "status"], name="invocation_session_status"),
            models.Index(fields=["agent", "status"], name="invocation_agent_status"),
            models.Index(fields=["role", "status"], name="invocation_role_status"),
            models.Index(fields=["model"], name="invocation_model"),
            models.Index(fields=["status"], name="invocation_status"),
            # The model-usage and agent-performance statistics filter by date across sessions.
            models.Index(fields=["started_at"], name="invocation_started"),
            models.Index(fields=["task_key"], name="invocation_task_key"),
        ]

    def __str__(self) -> str:
        return f"{self.role or self.agent} invocation {self.id}"
