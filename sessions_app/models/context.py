"""DevTeam context-window management (seed 003): budgets per model and summarization snapshots."""

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from ralphsite.core.models import ULIDModel


class ContextStatus(models.TextChoices):
    OK = "ok"
    WARNING = "warning"
    CRITICAL = "critical"


class ContextAction(models.TextChoices):
    NONE = "none"
    WARNED = "warned"
    SUMMARIZED = "summarized"


def validate_context_thresholds(*, warn_threshold: int, summarize_threshold: int) -> None:
    """Warn before summarizing: a set warn_threshold may not exceed a set summarize_threshold."""
    if warn_threshold and summarize_threshold and warn_threshold > summarize_threshold:
        raise ValidationError({"warn_threshold": [
            f"warn_threshold {warn_threshold} exceeds summarize_threshold {summarize_threshold}."]})


class ContextBudget(ULIDModel):
    """DevTeam `context_budgets`: session_id → session; model, context_limit, current_usage,
    usage_percent, warn_threshold, summarize_threshold, status, last_action, updated_at → same names.

    One budget per (session, model): `context_budget_session_model_unique`. `usage_percent` and
    `status` are derived by the services from current_usage against context_limit and the two
    thresholds (token counts; 0 means "no threshold").
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="context_budgets",
                                db_index=False)
    model = models.CharField(max_length=100)
    context_limit = models.BigIntegerField(validators=[MinValueValidator(1)])
    current_usage = models.BigIntegerField(default=0, validators=[MinValueValidator(0)])
    usage_percent = models.FloatField(default=0.0)
    warn_threshold = models.BigIntegerField(default=0, validators=[MinValueValidator(0)])
    summarize_threshold = models.BigIntegerField(default=0, validators=[MinValueValidator(0)])
    status = models.CharField(max_length=16, choices=ContextStatus.choices, default=ContextStatus.OK)
    last_action = models.CharField(max_length=16, choices=ContextAction.choices, blank=True, default="")

    class Meta:
        ordering = ["session", "model"]
        constraints = [
            models.UniqueConstraint(fields=["session", "model"], name="context_budget_session_model_unique"),
        ]
        indexes = [
            models.Index(fields=["status"], name="context_budget_status"),
            models.Index(fields=["model"], name="context_budget_model"),
        ]

    def __str__(self) -> str:
        return f"{self.model} budget of {self.session_id}"

    def clean(self) -> None:
        validate_context_thresholds(warn_threshold=self.warn_threshold, summarize_threshold=self.summarize_threshold)


class SnapshotType(models.TextChoices):
    AUTO = "auto"
    CHECKPOINT = "checkpoint"
    OVERFLOW_PREVENTION = "overflow_prevention"


class ContextSnapshot(ULIDModel):
    """DevTeam `context_snapshots`: session_id → session; snapshot_type, tokens_before, tokens_after,
    tokens_saved, preserved_items (JSON), summarized_items (JSON), summary_text, trigger_reason,
    created_at → same names. `tokens_saved` is derived as before - after when not given.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE,
                                related_name="context_snapshots", db_index=False)
    snapshot_type = models.CharField(max_length=24, choices=SnapshotType.choices)
    tokens_before = models.BigIntegerField(null=True, blank=True)
    tokens_after = models.BigIntegerField(null=True, blank=True)
    tokens_saved = models.BigIntegerField(null=True, blank=True)
    preserved_items = models.JSONField(null=True, blank=True)
    summarized_items = models.JSONField(null=True, blank=True)
    summary_text = models.TextField(blank=True, default="")
    trigger_reason = models.CharField(max_length=100, blank=True, default="",
                                      help_text="approaching_limit, iteration_complete, phase_change, …")

    class Meta:
        ordering = ["session", "-created_at"]
        indexes = [
            models.Index(fields=["session", "-created_at"], name="context_snapshot_session_time"),
            models.Index(fields=["snapshot_type"], name="context_snapshot_type"),
        ]

    def __str__(self) -> str:
        return f"{self.snapshot_type} snapshot of {self.session_id}"
