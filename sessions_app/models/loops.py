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

    Ours, for the Claude Code Ralph loop (`ralph loop start`): `task` is the prompt fed back each turn;
    max_iterations None is no limit; `completion_promise` (blank: none) completes the loop when the last
    assistant message holds `<promise>TEXT</promise>` (ralphsite.core.ralph_loop); `pause_timeout_seconds` (None:
    none) is how long an operator's Pause holds the loop before it goes on; `last_turn` is the last Stop decision
    (its transcript position and answer), so the same Stop reported twice decides once.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="loop_runs",
                                db_index=False)
    task = models.TextField()
    criteria = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=LoopRunStatus.choices, default=LoopRunStatus.RUNNING)
    iterations = models.PositiveIntegerField(default=0)
    max_iterations = models.PositiveIntegerField(default=10, null=True, blank=True,
                                                 help_text="None: no limit.")
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    snapshot_path = models.CharField(max_length=1000, blank=True, default="")
    completion_promise = models.TextField(blank=True, default="")
    pause_timeout_seconds = models.PositiveIntegerField(null=True, blank=True)
    last_turn = models.JSONField(default=dict, blank=True, editable=False)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["session", "status"], name="looprun_session_status"),
            models.Index(fields=["status"], name="looprun_status"),
        ]

    def __str__(self) -> str:
        return f"loop run {self.id}"
