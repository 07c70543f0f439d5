"""DevTeam requirement interviews (seed 003): an interview and its ordered questions."""

from django.db import models
from django.utils import timezone

from ralphsite.core.models import ULIDModel


class InterviewType(models.TextChoices):
    FEATURE = "feature"
    BUG = "bug"
    ISSUE = "issue"
    TASK = "task"


class InterviewStatus(models.TextChoices):
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    SKIPPED = "skipped"


class Interview(ULIDModel):
    """DevTeam `interviews`: session_id → session; interview_type, started_at, completed_at, status,
    questions_asked, questions_answered → same names.

    The two counters equal the interview's question rows (all / answered); the services keep them so.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="interviews",
                                db_index=False)
    interview_type = models.CharField(max_length=16, choices=InterviewType.choices)
    started_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=InterviewStatus.choices, default=InterviewStatus.IN_PROGRESS)
    questions_asked = models.PositiveIntegerField(default=0)
    questions_answered = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["session", "status"], name="interview_session_status"),
            models.Index(fields=["interview_type"], name="interview_type"),
            models.Index(fields=["status"], name="interview_status"),
        ]

    def __str__(self) -> str:
        return f"{self.interview_type} interview {self.id}"


class QuestionType(models.TextChoices):
    TEXT = "text"
    CHOICE = "choice"
    CONFIRM = "confirm"


class InterviewQuestion(ULIDModel):
    """DevTeam `interview_questions`: interview_id → interview; question_key, question_text,
    question_type, response, responded_at, sequence, required → same names.

    `sequence` is assigned by the server, 1, 2, 3… per interview (`interview_question_sequence_unique`);
    `responded_at` is set when a response is recorded.
    """

    scope_path = "interview__session"

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="questions", db_index=False)
    question_key = models.CharField(max_length=100, help_text="expected_behavior, repro_steps, …")
    question_text = models.TextField()
    question_type = models.CharField(max_length=16, choices=QuestionType.choices, default=QuestionType.TEXT)
    response = models.TextField(blank=True, default="")
    responded_at = models.DateTimeField(null=True, blank=True)
    sequence = models.PositiveIntegerField()
    required = models.BooleanField(default=True)

    class Meta:
        ordering = ["interview", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["interview", "sequence"], name="interview_question_sequence_unique"),
        ]
        indexes = [models.Index(fields=["question_key"], name="interview_question_key")]

    def __str__(self) -> str:
        return f"#{self.sequence} {self.question_key}"
