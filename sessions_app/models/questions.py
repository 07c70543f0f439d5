from django.core.validators import MinValueValidator
from django.db import models

from ralphsite.core.db.lookups import key_not_shaped_like_id
from ralphsite.core.lifecycles import Lifecycle
from ralphsite.core.models import ULIDModel


class QuestionCategory(models.TextChoices):
    TECHNICAL = "technical"
    REQUIREMENTS = "requirements"
    CONSTRAINTS = "constraints"
    ASSUMPTIONS = "assumptions"
    RISKS = "risks"
    FEEDBACK_DRIVEN = "feedback_driven"


class QuestionStatus(models.TextChoices):
    UNANSWERED = "unanswered"
    ANSWERED = "answered"
    RESEARCH_NEEDED = "research_needed"


# A question is answered once (a second answer replaces the first only when it says so: `replace`); one that
# needs research goes back to unanswered or is answered.
QUESTION_STATUS_LIFECYCLE = Lifecycle("question status", {
    QuestionStatus.UNANSWERED: frozenset({QuestionStatus.ANSWERED, QuestionStatus.RESEARCH_NEEDED}),
    QuestionStatus.RESEARCH_NEEDED: frozenset({QuestionStatus.ANSWERED, QuestionStatus.UNANSWERED}),
    QuestionStatus.ANSWERED: frozenset(),
})


class Level(models.TextChoices):
    """Ralph `QuestionPriority` and `ConfidenceLevel`: the same three values."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Question(ULIDModel):
    """Ralph V2 `Questions`: Id → id; SessionId → session; Category → category;
    IterationNumber → iteration_number; CycleNumber → cycle_number; QuestionId ("Q-TECH-001") → key;
    QuestionText → text; Priority, Status, Impact, QuestionType → priority, status, impact,
    question_type; SourceIssueId → source_issue_key; Answer, AnswerSource, AnswerConfidence,
    AnswerImplication → answer, answer_source, answer_confidence, answer_implication;
    CreatedAt, AnsweredAt → created_at, answered_at. `answered_by` is ours: who answered, from the token or the
    admin's person (AnswerSource, where the answer comes from, is theirs: it names the answerer when not given).
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="questions",
                                db_index=False)
    key = models.CharField(max_length=100)
    session_path_key = "key"  # named by key within its session in paths (ralphsite.core.addressing.key_in_paths_of)
    category = models.CharField(max_length=16, choices=QuestionCategory.choices)
    iteration_number = models.PositiveIntegerField(
        default=1, validators=[MinValueValidator(1)],
        help_text="The session's current iteration when the question is created without one.")
    cycle_number = models.PositiveIntegerField(default=1)
    text = models.TextField()
    priority = models.CharField(max_length=16, choices=Level.choices, default=Level.MEDIUM)
    status = models.CharField(max_length=16, choices=QuestionStatus.choices, default=QuestionStatus.UNANSWERED)
    impact = models.TextField(blank=True, default="")
    question_type = models.CharField(max_length=100, blank=True, default="")
    source_issue_key = models.CharField(max_length=100, blank=True, default="")
    answer = models.TextField(blank=True, default="")
    answer_source = models.CharField(max_length=500, blank=True, default="")
    answer_confidence = models.CharField(max_length=16, choices=Level.choices, blank=True, default="")
    answer_implication = models.TextField(blank=True, default="")
    answered_at = models.DateTimeField(null=True, blank=True)
    answered_by = models.CharField(
        max_length=200, blank=True, default="",
        help_text="Who answered: the token's agent or owner and name, or the admin's person.")

    class Meta:
        ordering = ["session", "key"]
        constraints = [models.UniqueConstraint(fields=["session", "key"], name="question_session_key_unique"),
                       key_not_shaped_like_id("key", "question_key_not_ulid")]
        indexes = [
            models.Index(fields=["session", "category"], name="question_session_category"),
            models.Index(fields=["session", "status"], name="question_session_status"),
            models.Index(fields=["key"], name="question_key"),
            models.Index(fields=["category"], name="question_category"),
            models.Index(fields=["status"], name="question_status"),
        ]
