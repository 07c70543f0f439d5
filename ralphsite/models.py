"""Abstract base models every app builds on."""

from django.db import models

from ralphsite.fields import ULIDPrimaryKeyField


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class ULIDModel(TimestampedModel):
    """An entity agents address: a ULID primary key the server generates or the client supplies."""

    id = ULIDPrimaryKeyField()

    class Meta:
        abstract = True

    def __str__(self) -> str:
        key = getattr(self, "key", "")
        return f"{key} ({self.id})" if key else self.id
