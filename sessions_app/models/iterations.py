from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

from ralphsite.core.models import ULIDModel


class Iteration(ULIDModel):
    """Ralph V2 `Iterations`: Id → id; SessionId → session; IterationNumber → number;
    PlanningComplete, PlanningCompletedAt, TasksDefined, ReviewContent, StartedAt, CompletedAt →
    planning_complete, planning_completed_at, tasks_defined, review_content, started_at, completed_at.

    Iteration 1 exists from its session's creation, and each number the session moves to gets its row
    (services.sessions.session_create / session_transition); planning_completed_at follows planning_complete.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="iterations",
                                db_index=False)
    number = models.PositiveIntegerField(validators=[MinValueValidator(1)], help_text="1, 2, 3… per session.")
    planning_complete = models.BooleanField(default=False)
    planning_completed_at = models.DateTimeField(null=True, blank=True)
    tasks_defined = models.PositiveIntegerField(default=0)
    review_content = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "number"]
        constraints = [
            models.UniqueConstraint(fields=["session", "number"], name="iteration_session_number_unique"),
            models.CheckConstraint(condition=models.Q(number__gte=1), name="iteration_number_from_1"),
        ]
        indexes = [
            models.Index(fields=["number"], name="iteration_number"),
            models.Index(fields=["planning_complete", "number"], name="iteration_planning_number"),
        ]

    def __str__(self) -> str:
        return f"iteration {self.number} of {self.session_id}"
