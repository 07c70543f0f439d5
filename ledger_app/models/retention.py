from django.db import models
from django.utils import timezone

from ralphsite.core.access import SCOPE_GLOBAL_ONLY
from ralphsite.core.models import ULIDModel


class RetentionRun(ULIDModel):
    """Ours: the durable record of one `manage.py purge_sessions` run (what it removed and why)."""

    scope_path = SCOPE_GLOBAL_ONLY

    ran_at = models.DateTimeField(default=timezone.now)
    older_than_days = models.PositiveIntegerField()
    cutoff = models.DateTimeField(help_text="Ended sessions whose ended_at is before this were removed.")
    sessions_removed = models.PositiveIntegerField(default=0)
    rows_removed = models.JSONField(default=dict, blank=True, help_text="Removed rows per model label.")
    session_ids = models.JSONField(default=list, blank=True)
    retention_event = models.ForeignKey("ledger_app.LedgerEvent", on_delete=models.PROTECT, null=True, blank=True,
                                        related_name="+", help_text="The record of this purge in the ledger's chain.")

    class Meta:
        ordering = ["-ran_at"]

    def __str__(self) -> str:
        return f"purge at {self.ran_at:%Y-%m-%d %H:%M}: {self.sessions_removed} sessions"
