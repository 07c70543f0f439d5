from django.db import models
from django.utils import timezone

from ralphsite.core.access import SCOPE_GLOBAL_ONLY
from ralphsite.core.db.lookups import key_not_shaped_like_id
from ralphsite.core.fields import history_session_field
from ralphsite.core.models import ULIDModel


class Checkpoint(ULIDModel):
    """A resumable snapshot: ralphy `checkpoints` (seed 001) + DevTeam `checkpoints` (seed 003).

    Seed column → field:

    * ralphy: id → key; run_id → session; task_id → task_key; git_ref, summary → same names;
      ts → created_at.
    * DevTeam: checkpoint_id → key (`chkpt-20250201-120000-abc123`, unique in its session); path, description,
      git_commit, can_restore, created_at → same names; session_id → session; task_id → task_key;
      sprint_id → sprint_key.
    """

    scope_path = "session"
    address_key = "key"  # named by key wherever an id is taken (ralphsite.core.addressing)

    key = models.CharField(max_length=200)
    session = history_session_field(related_name="checkpoints")
    task_key = models.CharField(max_length=100, blank=True, default="")
    sprint_key = models.CharField(max_length=100, blank=True, default="")
    git_ref = models.CharField(max_length=200, blank=True, default="")
    git_commit = models.CharField(max_length=64, blank=True, default="")
    path = models.CharField(max_length=1000, blank=True, default="")
    summary = models.TextField(blank=True, default="")
    description = models.TextField(blank=True, default="")
    can_restore = models.BooleanField(default=True)

    class Meta:
        ordering = ["-created_at"]
        # Unique within its session only (a checkpoint of no session is the global tokens' alone).
        constraints = [models.UniqueConstraint(fields=["key", "session"], name="checkpoint_key_session_unique"),
                       key_not_shaped_like_id("key", "checkpoint_key_not_ulid")]
        indexes = [
            models.Index(fields=["session", "-created_at"], name="checkpoint_session_created"),
            models.Index(fields=["task_key"], name="checkpoint_task"),
            models.Index(fields=["sprint_key"], name="checkpoint_sprint"),
        ]

    def __str__(self) -> str:
        return self.key


class CheckpointRestore(ULIDModel):
    """DevTeam `checkpoint_restores` (seed 003): checkpoint_id → checkpoint (CASCADE, as the seed);
    restored_at → same name. `agent` and `note` are ours (who restored it and why)."""

    scope_path = "checkpoint__session"

    checkpoint = models.ForeignKey(Checkpoint, on_delete=models.CASCADE, related_name="restores", db_index=False)
    restored_at = models.DateTimeField(default=timezone.now)
    agent = models.CharField(max_length=200, blank=True, default="")
    note = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-restored_at"]
        indexes = [models.Index(fields=["checkpoint", "-restored_at"], name="checkpointrestore_checkpoint")]

    def __str__(self) -> str:
        return f"restore {self.checkpoint_id} at {self.restored_at:%Y-%m-%d %H:%M}"


class RollbackType(models.TextChoices):
    AUTO = "auto"
    MANUAL = "manual"
    SMART = "smart"


class RollbackTrigger(models.TextChoices):
    REGRESSION = "regression"
    USER_REQUEST = "user_request"
    ERROR = "error"


class CheckType(models.TextChoices):
    BUILD = "build"
    TEST = "test"
    TYPECHECK = "typecheck"
    LINT = "lint"


class Rollback(ULIDModel):
    """DevTeam `rollbacks` (seed 003): rollback_type, target_commit, target_tag, reason,
    from_commit, trigger_type, check_type, backup_branch, rolled_back_at → same names.
    `session` is ours (optional) so a session's rollbacks can be listed."""

    scope_path = "session"

    session = history_session_field(related_name="rollbacks")
    rollback_type = models.CharField(max_length=16, choices=RollbackType.choices)
    target_commit = models.CharField(max_length=64)
    target_tag = models.CharField(max_length=200, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    from_commit = models.CharField(max_length=64, blank=True, default="")
    trigger_type = models.CharField(max_length=16, choices=RollbackTrigger.choices, blank=True, default="")
    check_type = models.CharField(max_length=16, choices=CheckType.choices, blank=True, default="")
    backup_branch = models.CharField(max_length=200, blank=True, default="")
    rolled_back_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-rolled_back_at"]
        indexes = [
            models.Index(fields=["session", "-rolled_back_at"], name="rollback_session_at"),
            models.Index(fields=["rollback_type"], name="rollback_type"),
            models.Index(fields=["rolled_back_at"], name="rollback_at"),
        ]

    def __str__(self) -> str:
        return f"{self.rollback_type} rollback to {self.target_commit[:12]}"


class Baseline(ULIDModel):
    """DevTeam `baselines` (seed 003): tag_name (unique), commit_hash, milestone, description,
    branch, files_changed, created_at → same names."""

    scope_path = SCOPE_GLOBAL_ONLY

    tag_name = models.CharField(max_length=200, unique=True)
    commit_hash = models.CharField(max_length=64)
    milestone = models.CharField(max_length=100)
    description = models.TextField(blank=True, default="")
    branch = models.CharField(max_length=200, blank=True, default="")
    files_changed = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["milestone"], name="baseline_milestone"),
            models.Index(fields=["branch"], name="baseline_branch"),
        ]

    def __str__(self) -> str:
        return self.tag_name
