from django.db import models
from django.utils import timezone

from ralphsite.core.db.lookups import key_not_shaped_like_id
from ralphsite.core.models import ULIDModel


class PlanSnapshot(ULIDModel):
    """Ralph V2 `PlanSnapshots` (plan.iteration-N.md): Id → id; SessionId → session;
    IterationNumber → iteration_number; Content → content; CreatedAt → created_at.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="plan_snapshots",
                                db_index=False)
    iteration_number = models.PositiveIntegerField()
    content = models.TextField()

    class Meta:
        ordering = ["session", "iteration_number"]
        constraints = [
            models.UniqueConstraint(fields=["session", "iteration_number"],
                                    name="plansnapshot_session_iteration_unique"),
        ]
        indexes = [models.Index(fields=["iteration_number"], name="plansnapshot_iteration")]

    def __str__(self) -> str:
        return f"plan of iteration {self.iteration_number}"


class PlanType(models.TextChoices):
    FEATURE = "feature"
    PROJECT = "project"
    MAINTENANCE = "maintenance"


class PlanStatus(models.TextChoices):
    DRAFT = "draft"
    READY = "ready"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    ARCHIVED = "archived"


class ResearchStatus(models.TextChoices):
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"


class ResearchSession(ULIDModel):
    """DevTeam `research_sessions`: id → id; session_id → session (CASCADE); started_at,
    completed_at, status, findings_count, recommendations_count, blockers_found → same names.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE,
                                related_name="research_sessions", db_index=False)
    started_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=ResearchStatus.choices, default=ResearchStatus.IN_PROGRESS)
    findings_count = models.PositiveIntegerField(default=0)
    recommendations_count = models.PositiveIntegerField(default=0)
    blockers_found = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["session", "status"], name="research_session_status"),
            models.Index(fields=["status"], name="research_status"),
        ]


class FindingType(models.TextChoices):
    PATTERN = "pattern"
    TECHNOLOGY = "technology"
    BLOCKER = "blocker"
    RECOMMENDATION = "recommendation"


class FindingSource(models.TextChoices):
    CODEBASE = "codebase"
    DOCUMENTATION = "documentation"
    WEB = "web"


class Priority(models.TextChoices):
    """DevTeam's four-level scale: task, criterion and feature `priority`, bug `severity`
    (research findings use the lower three)."""

    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class ResearchFinding(ULIDModel):
    """DevTeam `research_findings`: id → id; research_session_id → research_session (CASCADE);
    finding_type, title, description, source, file_path, evidence (JSON), priority → same names;
    timestamp → recorded_at.
    """

    scope_path = "research_session__session"

    research_session = models.ForeignKey(ResearchSession, on_delete=models.CASCADE, related_name="findings",
                                         db_index=False)
    finding_type = models.CharField(max_length=16, choices=FindingType.choices)
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True, default="")
    source = models.CharField(max_length=16, choices=FindingSource.choices, blank=True, default="")
    file_path = models.CharField(max_length=1000, blank=True, default="")
    evidence = models.JSONField(null=True, blank=True)
    priority = models.CharField(max_length=16, choices=Priority.choices, default=Priority.MEDIUM)
    recorded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["recorded_at"]
        indexes = [
            models.Index(fields=["research_session", "finding_type"], name="finding_research_type"),
            models.Index(fields=["finding_type"], name="finding_type"),
        ]

    def __str__(self) -> str:
        return self.title


class Plan(ULIDModel):
    """DevTeam `plans`: id ("plan-001") → key (unique in its session); name, description, plan_type, prd_path,
    tasks_path, sprints_path, status, total_sprints, completed_sprints, total_tasks,
    completed_tasks, created_at, started_at, completed_at → same names; research_session_id →
    research_session (SET NULL). `session` is ours (optional, SET NULL): the session that made it.
    """

    scope_path = "session"
    address_key = "key"  # named by key wherever an id is taken (ralphsite.core.addressing)

    key = models.CharField(max_length=100)
    session = models.ForeignKey("sessions_app.Session", on_delete=models.SET_NULL, null=True, blank=True,
                                related_name="plans", db_index=False)
    name = models.CharField(max_length=500)
    description = models.TextField(blank=True, default="")
    plan_type = models.CharField(max_length=16, choices=PlanType.choices, blank=True, default="")
    prd_path = models.CharField(max_length=1000, blank=True, default="")
    tasks_path = models.CharField(max_length=1000, blank=True, default="")
    sprints_path = models.CharField(max_length=1000, blank=True, default="")
    status = models.CharField(max_length=16, choices=PlanStatus.choices, default=PlanStatus.DRAFT)
    total_sprints = models.PositiveIntegerField(default=0)
    completed_sprints = models.PositiveIntegerField(default=0)
    total_tasks = models.PositiveIntegerField(default=0)
    completed_tasks = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    research_session = models.ForeignKey(ResearchSession, on_delete=models.SET_NULL, null=True, blank=True,
                                         related_name="plans")

    class Meta:
        ordering = ["key"]
        # Unique within its session only (a plan of no session is the global tokens' alone).
        constraints = [models.UniqueConstraint(fields=["key", "session"], name="plan_key_session_unique"),
                       key_not_shaped_like_id("key", "plan_key_not_ulid")]
        indexes = [
            models.Index(fields=["status"], name="plan_status"),
            models.Index(fields=["session", "status"], name="plan_session_status"),
        ]


class ReplanningDelta(ULIDModel):
    """Ralph V2 `ReplanningDeltas` (1:1 with an iteration): Id → id; IterationId → iteration;
    PreviousPlanSnapshotRef, Summary, RemovedItems, AddedItems, ModifiedItems, Rationale,
    CreatedAt → previous_plan_snapshot_ref, summary, removed_items, added_items, modified_items,
    rationale, created_at.
    """

    scope_path = "iteration__session"

    iteration = models.OneToOneField("sessions_app.Iteration", on_delete=models.CASCADE,
                                     related_name="replanning_delta")
    previous_plan_snapshot_ref = models.CharField(max_length=200, blank=True, default="")
    summary = models.TextField(blank=True, default="")
    removed_items = models.TextField(blank=True, default="")
    added_items = models.TextField(blank=True, default="")
    modified_items = models.TextField(blank=True, default="")
    rationale = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"replanning of {self.iteration_id}"
