from django.db import models

from ralphsite.core.access import SCOPE_GLOBAL_ONLY
from ralphsite.core.fields import ULIDField


class SyncEntity(models.TextChoices):
    CHAT = "chat"
    RUN = "run"
    MESSAGE = "message"


class SyncMapping(models.Model):
    """Seed 002's mapping table: a local ULID ↔ the remote id the remote store assigned, per entity.

    Written by `sync_mark_synced`; kept after a purge so a sync engine can still correlate tombstones.
    It names no session (and outlives them): global tokens only.
    """

    scope_path = SCOPE_GLOBAL_ONLY

    entity = models.CharField(max_length=16, choices=SyncEntity.choices)
    local_id = ULIDField()
    remote_id = models.CharField(max_length=100)
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["entity", "local_id"]
        constraints = [
            models.UniqueConstraint(fields=["entity", "local_id"], name="syncmapping_entity_local_unique"),
            models.UniqueConstraint(fields=["entity", "remote_id"], name="syncmapping_entity_remote_unique"),
        ]
        # sync-mappings/?local_id= and ?remote_id= without an entity.
        indexes = [
            models.Index(fields=["local_id"], name="syncmapping_local"),
            models.Index(fields=["remote_id"], name="syncmapping_remote"),
        ]

    def __str__(self) -> str:
        return f"{self.entity} {self.local_id} ↔ {self.remote_id}"
