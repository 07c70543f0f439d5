"""Acode conversation model (seed 002): chats → runs → messages (→ tool calls in JSON)."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from ralphsite.core.models import ULIDModel
from ralphsite.core.shapes import JSONList, JSONRecord, json_type_check


class SyncStatus(models.TextChoices):
    """FR-032."""

    PENDING = "pending"
    SYNCED = "synced"
    CONFLICT = "conflict"
    FAILED = "failed"


class RunStatus(models.TextChoices):
    """FR-033."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class MessageRole(models.TextChoices):
    """FR-034."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class ToolCallStatus(models.TextChoices):
    """FR-031 (the seed names the enum, not its values)."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class SyncedModel(ULIDModel):
    """Offline-first sync metadata every conversation entity carries (FR-009, FR-018, FR-026)."""

    sync_status = models.CharField(max_length=16, choices=SyncStatus.choices, default=SyncStatus.PENDING)
    # Each concrete model indexes it where set (`?remote_id=`: the sync mapping, seed 002).
    remote_id = models.CharField(max_length=100, blank=True, default="",
                                 help_text="Identity assigned by the remote store on sync.")

    class Meta:
        abstract = True


class Chat(SyncedModel):
    """Seed 002 `chats`: id → id (ULID); title; tags (JSON array) → tags (also indexed one row per
    tag in ChatTag for `?tag=`); worktree_id; is_deleted, deleted_at (tombstone); created_at,
    updated_at; sync_status; version (optimistic concurrency, starts at 1). Ours: session (optional
    orchestration session), remote_id, run_count (the last run sequence number handed out).
    """

    scope_path = "session"

    title = models.CharField(max_length=500)
    tags = models.JSONField(default=list, blank=True)
    worktree_id = models.CharField(max_length=100, blank=True, default="")
    session = models.ForeignKey("sessions_app.Session", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="chats")
    is_deleted = models.BooleanField(default=False)
    deleted_at = models.DateTimeField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    run_count = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["worktree_id"], name="chat_worktree"),
            models.Index(fields=["is_deleted", "-updated_at"], name="chat_deleted_updated"),
            models.Index(fields=["updated_at"], name="chat_updated_at"),  # ?updated_after with ?include_deleted
            models.Index(fields=["sync_status"], name="chat_sync_status"),
            models.Index(fields=["deleted_at"], name="chat_deleted_at"),
            models.Index(fields=["remote_id"], condition=~Q(remote_id=""), name="chat_remote_id"),
        ]

    def __str__(self) -> str:
        return self.title


class ChatTag(models.Model):
    """One row per (chat, tag): the index behind `?tag=` on both databases (Chat.tags stays the truth)."""

    scope_path = "chat__session"

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="tag_rows", db_index=False)
    tag = models.CharField(max_length=100)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["chat", "tag"], name="chattag_chat_tag_unique")]
        indexes = [models.Index(fields=["tag"], name="chattag_tag")]

    def __str__(self) -> str:
        return self.tag


class Run(SyncedModel):
    """Seed 002 `runs`: id; chat_id → chat; status; started_at; completed_at; tokens_used;
    sequence_number (server-assigned, unique per chat); sync_status. Ours: remote_id,
    message_count (the last message sequence number handed out).
    """

    scope_path = "chat__session"

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="runs", db_index=False)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.RUNNING)
    started_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)
    tokens_used = models.BigIntegerField(default=0)
    sequence_number = models.PositiveIntegerField(editable=False)
    message_count = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["chat_id", "sequence_number"]
        constraints = [
            models.UniqueConstraint(fields=["chat", "sequence_number"], name="run_chat_sequence_unique"),
        ]
        indexes = [
            models.Index(fields=["status"], name="run_status"),
            models.Index(fields=["sync_status"], name="run_sync_status"),
            models.Index(fields=["remote_id"], condition=~Q(remote_id=""), name="run_remote_id"),
        ]

    def __str__(self) -> str:
        return f"run {self.sequence_number} of chat {self.chat_id}"


# Seed 002's tool call (FR-027…031); the API's ToolCallSerializer bounds each key further.
TOOL_CALLS = JSONList(JSONRecord(required=("id", "name", "arguments", "status"), optional=("result",),
                                 choices={"status": tuple(ToolCallStatus.values)}))


class Message(SyncedModel):
    """Seed 002 `messages`: id; run_id → run; role; content; tool_calls (JSON list of
    {id, name, arguments, result?, status}); created_at; sequence_number (server-assigned, unique
    per run); sync_status. Ours: remote_id.
    """

    scope_path = "run__chat__session"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="messages", db_index=False)
    role = models.CharField(max_length=16, choices=MessageRole.choices)
    content = models.TextField(blank=True, default="")
    tool_calls = models.JSONField(null=True, blank=True, validators=[TOOL_CALLS])
    sequence_number = models.PositiveIntegerField(editable=False)

    class Meta:
        ordering = ["run_id", "sequence_number"]
        constraints = [
            models.UniqueConstraint(fields=["run", "sequence_number"], name="message_run_sequence_unique"),
            json_type_check("tool_calls", "array", model="message"),
        ]
        indexes = [
            # Role first: it serves ?role= alone, and ?run=&role= as well (a run alone has its unique index).
            models.Index(fields=["role", "run"], name="message_role_run"),
            models.Index(fields=["sync_status"], name="message_sync_status"),
            models.Index(fields=["remote_id"], condition=~Q(remote_id=""), name="message_remote_id"),
        ]

    def __str__(self) -> str:
        return f"{self.role} #{self.sequence_number} of run {self.run_id}"
