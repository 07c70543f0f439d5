from django.db import models
from django.utils import timezone

from ralphsite.core.models import ULIDModel


class Issue(ULIDModel):
    """ralphy `issues` (seed 001), deduplicated by signature within a session.

    Seed column → field: id → id; run_id → session; task_id → task_key; kind, signature, message,
    file, line, count → same names; ts → first_seen_at (the first report) and last_seen_at (the
    latest one: a repeat increments `count` and moves `last_seen_at` instead of adding a row).
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="issues", db_index=False)
    task_key = models.CharField(max_length=100)
    kind = models.CharField(max_length=64)
    signature = models.CharField(max_length=500)
    message = models.TextField()
    file = models.CharField(max_length=1000, blank=True, default="")
    line = models.PositiveIntegerField(null=True, blank=True)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)
    count = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-count", "-last_seen_at"]
        constraints = [
            models.UniqueConstraint(fields=["session", "signature"], name="issue_session_signature"),
        ]
        indexes = [
            models.Index(fields=["signature"], name="issue_signature"),
            models.Index(fields=["session", "task_key"], name="issue_session_task"),
            models.Index(fields=["task_key"], name="issue_task"),
            models.Index(fields=["kind"], name="issue_kind"),
            models.Index(fields=["-count"], name="issue_count"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.signature} x{self.count}"
