"""ralph-mem memory (seed 004): observations and cross-project global patterns."""

from django.db import models
from django.db.models import Q

from ralphsite.core.access import SCOPE_SHARED
from ralphsite.core.models import ULIDModel


class ObservationType(models.TextChoices):
    TOOL_USE = "tool_use"
    BASH = "bash"
    ERROR = "error"
    SUCCESS = "success"
    NOTE = "note"


class PatternType(models.TextChoices):
    ERROR_FIX = "error_fix"
    BEST_PRACTICE = "best_practice"
    TOOL_USAGE = "tool_usage"


class Observation(ULIDModel):
    """Seed 004 `observations`: id; session_id → session; type; tool_name; content;
    content_compressed; embedding (BLOB → BinaryField, base64 in the API); importance (0 to 1);
    created_at. Ours: loop_run and iteration (optional links into the orchestration). Full-text
    search over content and tool_name: see ralphsite/core/search/.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="observations",
                                db_index=False)
    loop_run = models.ForeignKey("sessions_app.LoopRun", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="observations")
    iteration = models.ForeignKey("sessions_app.Iteration", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="observations")
    type = models.CharField(max_length=16, choices=ObservationType.choices)
    tool_name = models.CharField(max_length=200, blank=True, default="")
    content = models.TextField()
    content_compressed = models.TextField(blank=True, default="")
    embedding = models.BinaryField(null=True, blank=True)
    importance = models.FloatField(default=0.5)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(importance__gte=0) & Q(importance__lte=1),
                                   name="observation_importance_0_1"),
        ]
        indexes = [
            models.Index(fields=["session", "-created_at"], name="obs_session_created"),
            models.Index(fields=["type"], name="obs_type"),
            models.Index(fields=["tool_name"], name="obs_tool_name"),
            models.Index(fields=["importance"], name="obs_importance"),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.tool_name} ({self.id})".replace("  ", " ")


class GlobalPattern(ULIDModel):
    """Seed 004 `global_patterns`: id; pattern_type; description; embedding; source_projects
    (JSON list); frequency; created_at, updated_at. Ours: fingerprint, the sha256 of
    (pattern_type, description) that makes "the same pattern" unique whatever the description's length.
    """

    scope_path = SCOPE_SHARED

    pattern_type = models.CharField(max_length=16, choices=PatternType.choices)
    description = models.TextField()
    fingerprint = models.CharField(max_length=64, editable=False)
    embedding = models.BinaryField(null=True, blank=True)
    source_projects = models.JSONField(default=list, blank=True)
    frequency = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-frequency", "-updated_at"]
        constraints = [models.UniqueConstraint(fields=["fingerprint"], name="pattern_fingerprint_unique")]
        indexes = [
            models.Index(fields=["pattern_type", "-frequency"], name="pattern_type_frequency"),
            models.Index(fields=["-frequency"], name="pattern_frequency"),
        ]

    def __str__(self) -> str:
        return f"{self.pattern_type}: {self.description[:60]}"
