"""DevTeam per-session bookkeeping (seed 003): key/value state, phases and progress summaries."""

from django.db import models

from ralphsite.core.models import ULIDModel


class SessionStateEntry(ULIDModel):
    """DevTeam `session_state`: session_id → session; key, value (JSON), updated_at → same names.

    The seed's primary key (session_id, key) is the unique constraint `session_state_session_key_unique`;
    the row also gets a ULID `id` so the API can address it like every other resource.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="state_entries",
                                db_index=False)
    key = models.CharField(max_length=200)
    value = models.JSONField()

    class Meta:
        ordering = ["session", "key"]
        verbose_name_plural = "session state entries"
        constraints = [
            models.UniqueConstraint(fields=["session", "key"], name="session_state_session_key_unique"),
        ]
        indexes = [models.Index(fields=["key"], name="session_state_key")]

    def __str__(self) -> str:
        return f"{self.key} of {self.session_id}"


class PhaseType(models.TextChoices):
    """DevTeam `session_phases.phase_type`."""

    INITIALIZER = "initializer"
    CODING = "coding"
    RESUME = "resume"


class SessionPhase(ULIDModel):
    """DevTeam `session_phases` (two-phase architecture): session_id → session; phase_type,
    is_first_run, init_script_created, features_enumerated, progress_file_created,
    baseline_commit_sha, features_attempted, features_completed, resumed_from_session, resume_point,
    created_at → same names.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE, related_name="phases", db_index=False)
    phase_type = models.CharField(max_length=16, choices=PhaseType.choices)
    is_first_run = models.BooleanField(default=False)
    init_script_created = models.BooleanField(default=False)
    features_enumerated = models.BooleanField(default=False)
    progress_file_created = models.BooleanField(default=False)
    baseline_commit_sha = models.CharField(max_length=64, blank=True, default="")
    features_attempted = models.PositiveIntegerField(default=0)
    features_completed = models.PositiveIntegerField(default=0)
    resumed_from_session = models.CharField(max_length=100, blank=True, default="",
                                            help_text="Id of the session this one resumed (text, no FK).")
    resume_point = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["session", "created_at"]
        indexes = [
            models.Index(fields=["session", "phase_type"], name="session_phase_session_type"),
            models.Index(fields=["phase_type"], name="session_phase_type"),
        ]

    def __str__(self) -> str:
        return f"{self.phase_type} phase of {self.session_id}"


class ProgressSummary(ULIDModel):
    """DevTeam `progress_summaries`: session_id → session; summary_text, from_iteration,
    to_iteration, tasks_completed, tasks_remaining, tests_passing, tests_failing, features_passing,
    features_total, last_commit_sha, files_changed (JSON list), created_at → same names.
    """

    scope_path = "session"

    session = models.ForeignKey("sessions_app.Session", on_delete=models.CASCADE,
                                related_name="progress_summaries", db_index=False)
    summary_text = models.TextField()
    from_iteration = models.PositiveIntegerField(null=True, blank=True)
    to_iteration = models.PositiveIntegerField(null=True, blank=True)
    tasks_completed = models.PositiveIntegerField(default=0)
    tasks_remaining = models.PositiveIntegerField(default=0)
    tests_passing = models.PositiveIntegerField(default=0)
    tests_failing = models.PositiveIntegerField(default=0)
    features_passing = models.PositiveIntegerField(default=0)
    features_total = models.PositiveIntegerField(default=0)
    last_commit_sha = models.CharField(max_length=64, blank=True, default="")
    files_changed = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["session", "-created_at"]
        verbose_name_plural = "progress summaries"
        indexes = [models.Index(fields=["session", "-created_at"], name="progress_summary_session_time")]

    def __str__(self) -> str:
        return f"progress of {self.session_id} at {self.created_at:%Y-%m-%d %H:%M}"
