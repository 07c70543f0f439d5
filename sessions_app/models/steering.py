from django.db import models
from django.db.models import Q
from django.utils import timezone

from ralphsite.core.choices import input_aliases
from ralphsite.core.lifecycles import Lifecycle
from ralphsite.core.models import ULIDModel


@input_aliases(**{"continue": "resume"})  # what the console's button says
class SignalType(models.TextChoices):
    """Ralph V2's four, and ours: `resume` lifts a pause (a pause holds until one is sent; nothing else
    lifts it, an `info` included)."""

    STEER = "steer"
    PAUSE = "pause"
    STOP = "stop"
    INFO = "info"
    RESUME = "resume"


class SignalStage(models.TextChoices):
    """Where a signal is in its lifecycle, read from its fields (`signal_stage`)."""

    UNPROCESSED = "unprocessed"
    PROCESSED = "processed"
    EXPIRED = "expired"


# A signal is delivered once (poll-signal marks it processed); one still unprocessed when its session ends
# expires with the reason (it is never delivered); processed and expired are final.
SIGNAL_LIFECYCLE = Lifecycle("signal", {
    SignalStage.UNPROCESSED: frozenset({SignalStage.PROCESSED, SignalStage.EXPIRED}),
    SignalStage.PROCESSED: frozenset(),
    SignalStage.EXPIRED: frozenset(),
})


def signal_stage(*, is_processed: bool, expired: bool) -> str:
    return SignalStage.PROCESSED if is_processed else SignalStage.EXPIRED if expired else SignalStage.UNPROCESSED


class Signal(ULIDModel):
    """Ralph V2 `Signals` (steering messages from a person to the orchestrator): Id → id;
    SessionId → session; SignalType → type; Message → message; IsProcessed → is_processed;
    CreatedAt → created_at; ProcessedAt → processed_at. Ours: `processed_by` (who polled it), `sent_by` (who sent
    it, from the token or the admin's person), `expired_at` and `expired_reason` (its session ended before it
    was polled).
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="signals",
                                db_index=False)
    type = models.CharField(max_length=16, choices=SignalType.choices)
    message = models.TextField(blank=True, default="")
    is_processed = models.BooleanField(default=False)
    processed_at = models.DateTimeField(null=True, blank=True)
    processed_by = models.CharField(max_length=200, blank=True, default="")
    sent_by = models.CharField(max_length=200, blank=True, default="",
                               help_text="Who sent it: the token's agent or owner and name, or the admin's person.")
    sent_at = models.DateTimeField(default=timezone.now)
    expired_at = models.DateTimeField(null=True, blank=True,
                                      help_text="When it expired unpolled: its session ended first.")
    expired_reason = models.CharField(max_length=200, blank=True, default="",
                                      help_text="Why it expired unpolled (the session's end).")

    class Meta:
        ordering = ["sent_at", "id"]
        constraints = [models.CheckConstraint(condition=Q(is_processed=False) | Q(expired_at__isnull=True),
                                              name="signal_processed_or_expired")]
        indexes = [
            models.Index(fields=["session", "is_processed", "sent_at"], name="signal_session_processed"),
            models.Index(fields=["type", "sent_at"], name="signal_type_sent"),
            models.Index(fields=["is_processed", "sent_at"], name="signal_processed_sent"),
        ]

    def __str__(self) -> str:
        return f"{self.type}: {self.message[:40]}"
