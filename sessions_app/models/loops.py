from django.db import models
from django.utils import timezone

from ralphsite.core.models import ULIDModel


class LoopRunStatus(models.TextChoices):
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    STOPPED = "stopped"


class LoopRun(ULIDModel):
    """ralph-mem `loop_runs` (seed 004): id, session_id → session, task, criteria (JSON list),
    status, iterations, max_iterations, started_at, ended_at, snapshot_path → same names.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="loop_runs",
                                db_index=False)
    task = models.TextField()
    criteria = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=LoopRunStatus.choices, default=LoopRunStatus.RUNNING)
    iterations = models.PositiveIntegerField(default=0)
    max_iterations = models.PositiveIntegerField(default=10)
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    snapshot_path = models.CharField(max_length=1000, blank=True, default="")

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["session", "status"], name="looprun_session_status"),
            models.Index(fields=["status"], name="looprun_status"),
        ]

    def __str__(self) -> str:
        return f"loop run {self.id}"
