from django.db import models
from django.utils import timezone

from ralphsite.core.lifecycles import Lifecycle
from ralphsite.core.models import ULIDModel


class SignalType(models.TextChoices):
    STEER = "steer"
    PAUSE = "pause"
    STOP = "stop"
    INFO = "info"


# A signal is delivered once (poll-signal marks it processed); a processed signal stays processed.
SIGNAL_LIFECYCLE = Lifecycle("signal", {"unprocessed": frozenset({"processed"}), "processed": frozenset()})


def signal_stage(is_processed: bool) -> str:
    return "processed" if is_processed else "unprocessed"


class Signal(ULIDModel):
    """Ralph V2 `Signals` (steering messages from a person to the orchestrator): Id → id;
    SessionId → session; SignalType → type; Message → message; IsProcessed → is_processed;
    CreatedAt → created_at; ProcessedAt → processed_at. `processed_by` is ours (who polled it).
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="signals",
                                db_index=False)
    type = models.CharField(max_length=16, choices=SignalType.choices)
    message = models.TextField(blank=True, default="")
    is_processed = models.BooleanField(default=False)
    processed_at = models.DateTimeField(null=True, blank=True)
    processed_by = models.CharField(max_length=200, blank=True, default="")
    sent_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["sent_at", "id"]
        indexes = [
            models.Index(fields=["session", "is_processed", "sent_at"], name="signal_session_processed"),
            models.Index(fields=["type", "sent_at"], name="signal_type_sent"),
            models.Index(fields=["is_processed", "sent_at"], name="signal_processed_sent"),
        ]

    def __str__(self) -> str:
        return f"{self.type}: {self.message[:40]}"
