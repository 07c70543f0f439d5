"""Abstract base models every app builds on."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from ralphsite.core.fields import ULIDPrimaryKeyField


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


class TokenScope(models.TextChoices):
    GLOBAL = "global", "global (every session; staff only)"
    PROJECT = "project", "project (the sessions of one project_path)"
    SESSION = "session", "session (one session and what it owns)"


class TokenPermission(models.TextChoices):
    READ = "read"
    WRITE = "write"


class ApiToken(models.Model):
    """An API credential: what it may see (`scope`), whether it may write, and as which agent it acts.

    Only the SHA-256 of the secret is stored (`key_hash`); the secret itself is shown once, when the
    token is minted (`ralphsite.tokens.services.api_token_create`). `prefix` is the secret's harmless first
    characters, so that a person can tell their tokens apart. Tokens of DRF's former `authtoken`
    table were carried over as global write tokens: their key is the secret, hashed the same way.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens",
                             db_index=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=16, editable=False)
    label = models.CharField(max_length=200, blank=True, default="")
    scope = models.CharField(max_length=8, choices=TokenScope.choices)
    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, null=True, blank=True,
                                related_name="api_tokens", help_text="The session of a session token.")
    project_path = models.CharField(max_length=1000, blank=True, default="",
                                    help_text="The project_path of a project token's sessions.")
    permission = models.CharField(max_length=8, choices=TokenPermission.choices, default=TokenPermission.WRITE)
    agent = models.CharField(max_length=200, blank=True, default="",
                             help_text="The agent this token acts as: its claims, events and reports carry it.")
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False,
                                        help_text="Updated at most once a minute.")

    class Meta:
        verbose_name = "API token"
        indexes = [models.Index(fields=["user", "-created_at"], name="apitoken_user_created")]
        constraints = [
            models.CheckConstraint(
                condition=(Q(scope="global", session__isnull=True, project_path="")
                           | (Q(scope="project", session__isnull=True) & ~Q(project_path=""))
                           | Q(scope="session", session__isnull=False, project_path="")),
                name="apitoken_scope_target"),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.scope} {self.permission}{', ' + self.label if self.label else ''})"


class ThrottleWindow(models.Model):
    """Ours: API requests counted per caller (a token, or a user signed in to the admin) and fixed time
    window, in the database so that every server process and host shares them (ralphsite/core/api/throttling.py)."""

    key = models.CharField(max_length=64, help_text="SHA-256 of the caller's token or user id.")
    window_start = models.BigIntegerField(help_text="Unix time the window began.")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "window_start"], name="throttlewindow_key_window")]

    def __str__(self) -> str:
        return f"{self.key[:12]}… {self.window_start}: {self.count}"


# What rows imported before imports named their source belong to (`import_seed --source legacy`).
LEGACY_SOURCE = "legacy"


class SeedRow(models.Model):
    """Ours: one row imported from a seed tool's own database (`manage.py import_seed`).

    It keeps the row's key in that database (`source_key`: a DevTeam session id, a ralph-mem
    observation id, …) and the object it became, so a second import of the file finds it already
    present, a newer copy adds only new rows, and `export_seed` writes the original key back. Columns
    the model has no field for live in `extra`, so nothing the tool stored is dropped.
    """

    # The file the row came from (`import_seed --source`, by default the file's absolute path): two
    # projects' databases both number their rows from 1, so a key is only unique within its source.
    source = models.CharField(max_length=500, default=LEGACY_SOURCE)
    kind = models.CharField(max_length=16)
    source_table = models.CharField(max_length=64)
    source_key = models.CharField(max_length=500)
    object_model = models.CharField(max_length=100, help_text="app_label.model_name")
    object_id = models.CharField(max_length=64)
    extra = models.JSONField(default=dict, blank=True)
    # A digest of the row as the file last had it: a newer copy's row with another digest changed in the
    # file (and is updated); '' for rows imported before digests were kept (compared field by field).
    digest = models.CharField(max_length=32, default="", blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "kind", "source_table", "source_key"],
                                               name="seedrow_source_unique")]
        indexes = [models.Index(fields=["object_model", "object_id"], name="seedrow_object"),
                   # `?source_id=` and a path naming a row by the id a seed tool's file gave it (`addressing`)
                   models.Index(fields=["object_model", "source_key"], name="seedrow_model_key")]

    def __str__(self) -> str:
        return (f"{self.source}: {self.kind}.{self.source_table}[{self.source_key}] → "
                f"{self.object_model} {self.object_id}")
