from django.db import models
from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from ralphsite.core.access import SCOPE_SHARED
from ralphsite.core.fields import history_session_field, request_id_field
from ralphsite.core.models import ULIDModel
from ralphsite.core.money import MoneyField

# TokenUsage token field → ModelPrice price field (USD per million tokens).
PRICED_TOKEN_FIELDS: dict[str, str] = {
    "input_tokens": "input_per_mtok",
    "output_tokens": "output_per_mtok",
    "cached_read_tokens": "cached_read_per_mtok",
    "cached_write_tokens": "cached_write_per_mtok",
    "reasoning_tokens": "reasoning_per_mtok",
}


def _price_field() -> models.DecimalField:
    return MoneyField(default=0, help_text="USD per million tokens.")


class ModelPrice(ULIDModel):
    """Ours (no seed table): what a model's tokens cost from `valid_from` on, per usage type.

    The price in force at time t is the row of that model with the latest `valid_from` <= t. A model with no
    rows of its own is priced by the longest name that is a prefix of its own up to a `-` (a provider's dated
    snapshot, `claude-sonnet-4-5-20250929`, by `claude-sonnet-4-5`). A fresh install holds the dated default
    list of current Claude models (migration 0012 of ledger_app), which an operator edits in the admin.
    """

    scope_path = SCOPE_SHARED

    model = models.CharField(max_length=100)
    valid_from = models.DateTimeField()
    input_per_mtok = _price_field()
    output_per_mtok = _price_field()
    cached_read_per_mtok = _price_field()
    cached_write_per_mtok = _price_field()
    reasoning_per_mtok = _price_field()

    class Meta:
        ordering = ["model", "-valid_from"]
        constraints = [
            models.UniqueConstraint(fields=["model", "valid_from"], name="modelprice_model_valid_from"),
        ]

    def __str__(self) -> str:
        return f"{self.model} from {self.valid_from:%Y-%m-%d}"


class UsageSource(models.TextChoices):
    """Which write reported a call: token usage itself, or a ledger event, attempt or agent invocation
    carrying usage, or the conversation run whose calls they are (Claude Code's hooks: one run per Claude session;
    their usage is recorded here, so this table is the one book of calls). A call token usage reports is
    `token_usage` whichever path reported it first: those are the calls DevTeam's `token_usage` table holds, which
    the statistics named after its views read."""

    TOKEN_USAGE = "token_usage"
    EVENT = "event"
    ATTEMPT = "attempt"
    INVOCATION = "invocation"
    RUN = "run"


class UsageSums(models.Model):
    """The six figures a provider call carries: a usage row holds one call's, the rollup (`UsageDay`)
    their sums."""

    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cached_read_tokens = models.BigIntegerField(default=0)
    cached_write_tokens = models.BigIntegerField(default=0)
    reasoning_tokens = models.BigIntegerField(default=0)
    cost_usd = MoneyField(default=0)

    class Meta:
        abstract = True


class TokenUsage(UsageSums):
    """DevTeam `token_usage` (seed 003): one API call's tokens and cost.

    Seed column → field: id → id (integer); session_id → session (or, naming a session not in the
    file, session_key); task_id → task_key;
    sprint_id → sprint_key; model, input_tokens, output_tokens, cost_usd (Decimal USD),
    operation, recorded_at → same names; agent_name → agent. Ours: cached_read_tokens,
    cached_write_tokens, reasoning_tokens, and is_estimated (the cost was computed from ModelPrice
    because the client sent none); request_id, source and source_id; iteration (Claude Code's hooks record
    the session iteration of each call, so an iteration's tokens and cost are sums of these rows too).

    One truth for tokens and cost: every provider call is one row here, whichever path reported it
    (`source`: this resource, or a ledger event, task attempt or agent invocation carrying usage, whose
    id is `source_id`, or Claude Code's hooks); a call whose `request_id` the session already has is not
    counted again, and is `token_usage` once this resource reports it. Session totals and every usage figure
    are sums of these rows; the statistics named after DevTeam's views sum the `token_usage` ones (its table),
    and give the others apart (`all_sources`).
    """

    scope_path = "session"

    id = models.BigAutoField(primary_key=True)
    session = history_session_field(related_name="token_usage")
    # NULL, not '': a nullable column is added without SQLite rebuilding the table (which drops the rollup's triggers).
    session_key = models.CharField(
        max_length=100, null=True, blank=True, editable=False,
        help_text="The seed's session id of an imported call whose session is not here (not in its file).")
    task_key = models.CharField(max_length=100, blank=True, default="")
    sprint_key = models.CharField(max_length=100, blank=True, default="")
    model = models.CharField(max_length=100)
    is_estimated = models.BooleanField(default=False)
    operation = models.CharField(max_length=100, blank=True, default="")
    agent = models.CharField(max_length=200, blank=True, default="")
    recorded_at = models.DateTimeField(default=timezone.now)
    request_id = request_id_field()
    source = models.CharField(max_length=16, choices=UsageSource.choices, default=UsageSource.TOKEN_USAGE)
    source_id = models.CharField(max_length=40, blank=True, default="",
                                 help_text="The id of the attempt, invocation or run that reported this call.")
    iteration = models.PositiveIntegerField(null=True, blank=True, editable=False,
                                            help_text="The session's iteration the call was made in, when known.")

    class Meta:
        ordering = ["-recorded_at", "-id"]
        verbose_name_plural = "token usage"
        constraints = [
            models.UniqueConstraint(fields=["session", "request_id"], condition=~models.Q(request_id=""),
                                    name="tokenusage_session_request"),
        ]
        indexes = [
            models.Index(fields=["source", "source_id"], name="tokenusage_source"),
            models.Index(fields=["session", "recorded_at"], name="tokenusage_session_at"),
            models.Index(fields=["model", "recorded_at"], name="tokenusage_model_at"),
            models.Index(fields=["recorded_at"], name="tokenusage_at"),
            models.Index(fields=["task_key"], name="tokenusage_task"),
            models.Index(fields=["sprint_key"], name="tokenusage_sprint"),
            models.Index(fields=["agent"], name="tokenusage_agent"),
            models.Index(fields=["operation"], name="tokenusage_operation"),
            models.Index(fields=["iteration"], name="tokenusage_iteration"),
        ]

    def __str__(self) -> str:
        return f"{self.model}: {self.input_tokens}+{self.output_tokens} tokens"


class UsageDay(UsageSums):
    """Token usage summed per session, UTC day, model and agent: what every usage figure reads (the
    dashboard, the cost view, the console's cost panel, the API's usage statistics), so that none
    aggregates the calls themselves. Kept by database triggers on TokenUsage, whatever writes it
    (`ledger_app.usage_days`); never written by the application. Calls whose session was deleted are
    summed under no session (NULL), one key: the unique constraint groups NULL with NULL."""

    scope_path = "session"

    # No database constraint and no cascade: the triggers move a deleted session's sums to no session
    # when its calls lose it, and drop the rows that no call is summed in any more.
    session = models.ForeignKey("sessions_app.Session", on_delete=models.DO_NOTHING, null=True, blank=True,
                                db_constraint=False, db_index=False, related_name="+")
    day = models.DateField()
    model = models.CharField(max_length=100)
    agent = models.CharField(max_length=200, blank=True, default="")
    calls = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["-day", "model", "agent"]
        constraints = [models.UniqueConstraint(
            "day", "model", "agent", Coalesce("session", Value(""), output_field=models.CharField()),
            name="usageday_session_day_model_agent")]
        indexes = [models.Index(fields=["session", "day"], name="usageday_session_day")]

    def __str__(self) -> str:
        return f"{self.day} {self.model} {self.agent}: {self.calls} calls"
