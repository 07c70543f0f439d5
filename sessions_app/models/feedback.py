import re

from django.core.validators import RegexValidator
from django.db import models

from ralphsite.core.models import ULIDModel

# Attachments live in the database; 10 MiB keeps one row well inside a request and a page.
ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024

# A media type as RFC 9110 spells it (type "/" subtype, optional parameters): nothing that could break
# out of the Content-Type header line of a download.
_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
MEDIA_TYPE = re.compile(rf'{_TOKEN}/{_TOKEN}([ \t]*;[ \t]*{_TOKEN}=({_TOKEN}|"[^"\x00-\x1f\x7f]*"))*\Z')
FALLBACK_MEDIA_TYPE = "application/octet-stream"
validate_media_type = RegexValidator(MEDIA_TYPE, message="Enter a media type such as text/plain or image/png.",
                                     code="invalid_media_type")
# A file name is one printable line: no control characters (CR/LF would break the download's headers).
validate_file_name = RegexValidator(r"[\x00-\x1f\x7f]", inverse_match=True, code="invalid_file_name",
                                    message="A file name may not contain control characters.")


class FeedbackSeverity(models.TextChoices):
    CRITICAL = "critical"
    QUALITY = "quality"
    NEW_REQUIREMENT = "new_requirement"


class FeedbackBatch(ULIDModel):
    """Ralph V2 `FeedbackBatches`: Id → id; IterationId → iteration (CASCADE);
    BatchTimestamp ("20260209-143000") → batch_timestamp; Summary → summary; CreatedAt → created_at.
    `session` is the iteration's session, kept on the row so batches filter by session directly.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="feedback_batches",
                                db_index=False)
    iteration = models.ForeignKey("sessions_app.Iteration", on_delete=models.CASCADE,
                                  related_name="feedback_batches")
    batch_timestamp = models.CharField(max_length=32)
    summary = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["created_at"]
        verbose_name_plural = "feedback batches"
        indexes = [models.Index(fields=["session", "iteration"], name="feedbackbatch_session_iter")]

    def __str__(self) -> str:
        return f"feedback {self.batch_timestamp}"


class FeedbackItem(ULIDModel):
    """Ralph V2 `FeedbackItems`: Id → id; FeedbackBatchId → batch (CASCADE); IssueId ("ISS-001") →
    issue_key (unique per batch); Severity, Description, Evidence, SuggestedFix, IsResolved,
    ResolvedAt → severity, description, evidence, suggested_fix, is_resolved, resolved_at.
    """

    scope_path = "batch__session"

    batch = models.ForeignKey(FeedbackBatch, on_delete=models.CASCADE, related_name="items", db_index=False)
    issue_key = models.CharField(max_length=100)
    severity = models.CharField(max_length=16, choices=FeedbackSeverity.choices)
    description = models.TextField()
    evidence = models.TextField(blank=True, default="")
    suggested_fix = models.TextField(blank=True, default="")
    is_resolved = models.BooleanField(default=False)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["batch", "issue_key"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "issue_key"], name="feedbackitem_batch_issue_unique"),
        ]
        indexes = [
            models.Index(fields=["severity", "is_resolved"], name="feedbackitem_severity_resolved"),
            models.Index(fields=["issue_key"], name="feedbackitem_issue_key"),
            models.Index(fields=["is_resolved"], name="feedbackitem_resolved"),
        ]

    def __str__(self) -> str:
        return self.issue_key


class FeedbackAttachment(ULIDModel):
    """Ralph V2 `FeedbackAttachments`: Id → id; FeedbackBatchId → batch (CASCADE); FileName →
    file_name; FileContent → content (binary, at most ATTACHMENT_MAX_BYTES); Description →
    description; CreatedAt → created_at. `content_type` and `size` are ours, for downloads.
    """

    scope_path = "batch__session"

    batch = models.ForeignKey(FeedbackBatch, on_delete=models.CASCADE, related_name="attachments")
    file_name = models.CharField(max_length=500, validators=[validate_file_name])
    content = models.BinaryField(default=bytes)
    content_type = models.CharField(max_length=200, default=FALLBACK_MEDIA_TYPE, validators=[validate_media_type])
    size = models.PositiveIntegerField(default=0)
    description = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["batch", "file_name"]

    def __str__(self) -> str:
        return self.file_name
