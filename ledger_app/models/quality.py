from django.db import models
from django.utils import timezone

from ralphsite.core.fields import history_session_field
from ralphsite.core.models import ULIDModel


class Gate(models.TextChoices):
    TESTS = "tests"
    LINT = "lint"
    TYPECHECK = "typecheck"
    SECURITY = "security"
    COVERAGE = "coverage"


class GateResult(ULIDModel):
    """DevTeam `gate_results` (seed 003): session_id → session (CASCADE); gate, iteration, passed,
    details, error_count, warning_count, coverage_percent, timestamp, duration_seconds → same names."""

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="gate_results",
                                db_index=False)
    gate = models.CharField(max_length=16, choices=Gate.choices)
    iteration = models.PositiveIntegerField()
    passed = models.BooleanField()
    details = models.JSONField(default=dict, blank=True)
    error_count = models.PositiveIntegerField(null=True, blank=True)
    warning_count = models.PositiveIntegerField(null=True, blank=True)
    coverage_percent = models.FloatField(null=True, blank=True)
    timestamp = models.DateTimeField(default=timezone.now)
    duration_seconds = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-timestamp"]
        indexes = [
            models.Index(fields=["session", "iteration"], name="gateresult_session_iteration"),
            models.Index(fields=["gate", "timestamp"], name="gateresult_gate_at"),
            models.Index(fields=["timestamp"], name="gateresult_at"),
            models.Index(fields=["passed", "timestamp"], name="gateresult_passed_at"),
        ]

    def __str__(self) -> str:
        return f"{self.gate} {'passed' if self.passed else 'failed'} (iteration {self.iteration})"


class ErrorType(models.TextChoices):
    TRANSIENT = "transient"
    PERMANENT = "permanent"
    RECOVERABLE = "recoverable"


class ErrorLog(models.Model):
    """DevTeam `error_log` (seed 003): id → id (integer); session_id → session; task_id → task_key;
    operation, error_type, error_message, error_pattern, recovery_action, recovery_success,
    retry_count, circuit_opened, logged_at → same names."""

    scope_path = "session"

    id = models.BigAutoField(primary_key=True)
    session = history_session_field(related_name="errors")
    task_key = models.CharField(max_length=100, blank=True, default="")
    operation = models.CharField(max_length=200, blank=True, default="")
    error_type = models.CharField(max_length=16, choices=ErrorType.choices)
    error_message = models.TextField()
    error_pattern = models.CharField(max_length=500, blank=True, default="")
    recovery_action = models.CharField(max_length=500, blank=True, default="")
    recovery_success = models.BooleanField(null=True, blank=True)
    retry_count = models.PositiveIntegerField(default=0)
    circuit_opened = models.BooleanField(default=False)
    logged_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-logged_at", "-id"]
        verbose_name = "error log entry"
        verbose_name_plural = "error log"
        indexes = [
            models.Index(fields=["session", "logged_at"], name="errorlog_session_at"),
            models.Index(fields=["error_type", "logged_at"], name="errorlog_type_at"),
            models.Index(fields=["logged_at"], name="errorlog_at"),
            models.Index(fields=["task_key"], name="errorlog_task"),
        ]

    def __str__(self) -> str:
        return f"{self.error_type}: {self.error_message[:60]}"


class DeadLetterStatus(models.TextChoices):
    PENDING = "pending"
    RETRIED = "retried"
    FAILED = "failed"
    EXPIRED = "expired"


class DeadLetter(models.Model):
    """DevTeam `dead_letter` (seed 003): id → id (integer); operation_type, operation_params,
    error_message, stack_trace, attempt_count, status, retry_after, expires_at, created_at → same
    names; session_id → session; task_id → task_key. Ours: retried_at (when the last claim or
    retry took it)."""

    scope_path = "session"

    id = models.BigAutoField(primary_key=True)
    operation_type = models.CharField(max_length=200)
    operation_params = models.JSONField(default=dict, blank=True)
    error_message = models.TextField(blank=True, default="")
    stack_trace = models.TextField(blank=True, default="")
    attempt_count = models.PositiveIntegerField(default=1)
    session = history_session_field(related_name="dead_letters")
    task_key = models.CharField(max_length=100, blank=True, default="")
    status = models.CharField(max_length=16, choices=DeadLetterStatus.choices, default=DeadLetterStatus.PENDING)
    retry_after = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    retried_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "dead letter"
        indexes = [
            models.Index(fields=["status", "retry_after"], name="deadletter_status_due"),
            models.Index(fields=["session", "status"], name="deadletter_session_status"),
            models.Index(fields=["operation_type"], name="deadletter_operation"),
        ]

    def __str__(self) -> str:
        return f"{self.operation_type} ({self.status})"
