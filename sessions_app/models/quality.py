"""DevTeam quality tables (seed 003): bugs, model escalations, acceptance criteria and features."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from ralphsite.core.access import SCOPE_GLOBAL_ONLY
from ralphsite.core.models import ULIDModel
from sessions_app.models.planning import Priority


class BugComplexity(models.TextChoices):
    SIMPLE = "simple"
    MODERATE = "moderate"
    COMPLEX = "complex"


class DiagnosisMethod(models.TextChoices):
    DIRECT = "direct"
    BUG_COUNCIL = "bug_council"


class BugStatus(models.TextChoices):
    OPEN = "open"
    IN_PROGRESS = "in_progress"
    RESOLVED = "resolved"
    WONT_FIX = "wont_fix"


class Bug(ULIDModel):
    """DevTeam `bugs` (local bug tracking): session_id → session; description, severity, complexity,
    root_cause, diagnosis_method, fix_summary, files_changed (JSON list), prevention_measures, status,
    created_at, resolved_at, council_activated, council_votes (JSON) → same names.

    `resolved_at` is set by the services when the status becomes `resolved` (and cleared if reopened).
    As in the seed, a bug may be recorded outside any session (session_id is nullable there).
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, null=True, blank=True,
                                related_name="bugs", db_index=False)
    description = models.TextField()
    severity = models.CharField(max_length=16, choices=Priority.choices, blank=True, default="")
    complexity = models.CharField(max_length=16, choices=BugComplexity.choices, blank=True, default="")
    root_cause = models.TextField(blank=True, default="")
    diagnosis_method = models.CharField(max_length=16, choices=DiagnosisMethod.choices, blank=True, default="")
    fix_summary = models.TextField(blank=True, default="")
    files_changed = models.JSONField(default=list, blank=True)
    prevention_measures = models.TextField(blank=True, default="")
    status = models.CharField(max_length=16, choices=BugStatus.choices, default=BugStatus.OPEN)
    resolved_at = models.DateTimeField(null=True, blank=True)
    council_activated = models.BooleanField(default=False)
    council_votes = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["session", "status"], name="bug_session_status"),
            models.Index(fields=["status", "severity"], name="bug_status_severity"),
            models.Index(fields=["severity"], name="bug_severity"),
            models.Index(fields=["complexity"], name="bug_complexity"),
        ]

    def __str__(self) -> str:
        return f"bug {self.id}: {self.description[:60]}"


class Escalation(ULIDModel):
    """DevTeam `escalations` (model escalation history): session_id → session; from_model, to_model,
    agent, reason, failure_count, iteration, timestamp → same names; task_id → task_key (text, no FK).
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="escalations",
                                db_index=False)
    from_model = models.CharField(max_length=100)
    to_model = models.CharField(max_length=100)
    agent = models.CharField(max_length=200, blank=True, default="")
    reason = models.CharField(max_length=200, help_text="consecutive_failures, complexity_increase, …")
    failure_count = models.PositiveIntegerField(null=True, blank=True)
    iteration = models.PositiveIntegerField(null=True, blank=True)
    task_key = models.CharField(max_length=100, blank=True, default="")
    timestamp = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-timestamp"]
        indexes = [
            models.Index(fields=["session", "-timestamp"], name="escalation_session_time"),
            models.Index(fields=["task_key"], name="escalation_task_key"),
            models.Index(fields=["to_model"], name="escalation_to_model"),
            models.Index(fields=["agent"], name="escalation_agent"),
        ]

    def __str__(self) -> str:
        return f"{self.from_model} → {self.to_model} ({self.reason})"


class CriterionCategory(models.TextChoices):
    FUNCTIONAL = "functional"
    VISUAL = "visual"
    PERFORMANCE = "performance"
    SECURITY = "security"


class VerificationMethod(models.TextChoices):
    AUTOMATED_TEST = "automated_test"
    MANUAL = "manual"
    VISUAL = "visual"


class AcceptanceCriterion(ULIDModel):
    """DevTeam `acceptance_criteria`: criterion_id → key (`AC-001`); task_id → task_key;
    sprint_id → sprint_key; plan_id → plan_key (text keys, no FK); description, category, passes,
    verified_at, verified_by, verification_method, verification_evidence, last_failure_reason,
    failure_count, priority, sequence, created_at, updated_at → same names.

    UNIQUE(plan_id, criterion_id) → `acceptance_criterion_plan_key_unique` (a criterion without a plan
    has plan_key ""). `passes`, `verified_at`, `failure_count` and `last_failure_reason` are written by
    the `verify` service.
    """

    scope_path = SCOPE_GLOBAL_ONLY

    key = models.CharField(max_length=100)
    plan_key = models.CharField(max_length=100, blank=True, default="")
    task_key = models.CharField(max_length=100, blank=True, default="")
    sprint_key = models.CharField(max_length=100, blank=True, default="")
    description = models.TextField()
    category = models.CharField(max_length=16, choices=CriterionCategory.choices, blank=True, default="")
    passes = models.BooleanField(default=False)
    verified_at = models.DateTimeField(null=True, blank=True)
    verified_by = models.CharField(max_length=200, blank=True, default="")
    verification_method = models.CharField(max_length=16, choices=VerificationMethod.choices, blank=True,
                                           default="")
    verification_evidence = models.TextField(blank=True, default="")
    last_failure_reason = models.TextField(blank=True, default="")
    failure_count = models.PositiveIntegerField(default=0)
    priority = models.CharField(max_length=16, choices=Priority.choices, default=Priority.MEDIUM)
    sequence = models.IntegerField(default=0)

    class Meta:
        ordering = ["plan_key", "sequence", "key"]
        verbose_name_plural = "acceptance criteria"
        constraints = [
            models.UniqueConstraint(fields=["plan_key", "key"], name="acceptance_criterion_plan_key_unique"),
        ]
        indexes = [
            models.Index(fields=["task_key", "passes"], name="criterion_task_passes"),
            models.Index(fields=["sprint_key"], name="criterion_sprint"),
            models.Index(fields=["key"], name="criterion_key"),
            models.Index(fields=["passes"], name="criterion_passes"),
            models.Index(fields=["category"], name="criterion_category"),
        ]

    def __str__(self) -> str:
        return f"{self.key} of {self.plan_key or 'no plan'}"


def validate_feature_steps(steps: Any) -> None:
    """Feature `steps` must be a list of `{"step": "<non-empty text>", "passes": true|false}`."""
    shape = 'steps must be a list of {"step": "<text>", "passes": <bool>} objects'
    if not isinstance(steps, list):
        raise ValidationError(f"{shape}; got {type(steps).__name__}.", code="invalid_steps")
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or set(step) != {"step", "passes"}:
            raise ValidationError(f"{shape}; item {index} is {step!r}.", code="invalid_steps")
        if not isinstance(step["step"], str) or not step["step"].strip():
            raise ValidationError(f"item {index}: \"step\" must be non-empty text.", code="invalid_steps")
        if not isinstance(step["passes"], bool):
            raise ValidationError(f"item {index}: \"passes\" must be true or false.", code="invalid_steps")


class Feature(ULIDModel):
    """DevTeam `features`: feature_id → key (`FEAT-001`, unique); plan_id → plan_key; sprint_id →
    sprint_key (text keys, no FK); name, description, category, steps (JSON list of
    `{"step": str, "passes": bool}`), passes, all_steps_pass, steps_total, steps_passed, verified_at,
    verified_by, priority, sequence, created_at, updated_at → same names.

    `steps_total`, `steps_passed` and `all_steps_pass` are derived from `steps` by the services on
    every write; clients never write them.
    """

    scope_path = SCOPE_GLOBAL_ONLY

    key = models.CharField(max_length=100)
    plan_key = models.CharField(max_length=100, blank=True, default="")
    sprint_key = models.CharField(max_length=100, blank=True, default="")
    name = models.CharField(max_length=500)
    description = models.TextField(blank=True, default="")
    category = models.CharField(max_length=100, blank=True, default="", help_text="auth, ui, api, data, …")
    steps = models.JSONField(default=list, blank=True, validators=[validate_feature_steps])
    passes = models.BooleanField(default=False)
    all_steps_pass = models.BooleanField(default=False)
    steps_total = models.PositiveIntegerField(default=0)
    steps_passed = models.PositiveIntegerField(default=0)
    verified_at = models.DateTimeField(null=True, blank=True)
    verified_by = models.CharField(max_length=200, blank=True, default="")
    priority = models.CharField(max_length=16, choices=Priority.choices, default=Priority.MEDIUM)
    sequence = models.IntegerField(default=0)

    class Meta:
        ordering = ["plan_key", "sequence", "key"]
        constraints = [models.UniqueConstraint(fields=["key"], name="feature_key_unique")]
        indexes = [
            models.Index(fields=["plan_key", "passes"], name="feature_plan_passes"),
            models.Index(fields=["sprint_key"], name="feature_sprint"),
            models.Index(fields=["passes"], name="feature_passes"),
            models.Index(fields=["category"], name="feature_category"),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.name}"
