import re
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import models
from django.db.models import Q
from django.db.models.functions import Length
from django.db.models.lookups import Exact
from django.utils import timezone

from ralphsite.core.choices import choice_canonical
from ralphsite.core.money import MoneyField
from ralphsite.core.shapes import JSONObject, json_type_check

# ralphy ledger types (seed 001).
RALPHY_EVENT_TYPES = (
    "run_started", "run_finished", "task_started", "task_finished", "phase_entered",
    "backend_call_started", "backend_call_finished", "validator_started", "validator_finished",
    "budget_degrade_applied", "checkpoint_created", "issue_recorded",
)
# DevTeam events.event_type (seed 003).
DEVTEAM_EVENT_TYPES = (
    "session_started", "session_ended", "phase_changed", "agent_started", "agent_completed",
    "agent_failed", "model_escalated", "model_deescalated", "gate_passed", "gate_failed",
    "bug_council_activated", "bug_council_completed", "interview_started", "interview_question",
    "interview_completed", "research_started", "research_finding", "research_completed",
    "task_started", "task_completed", "task_failed", "error_occurred", "warning_issued",
    "abandonment_detected", "abandonment_prevented",
)
# Appended by sessions_app's writes through its ledger port (`sessions_app.ledger`, `event_append`).
AUDIT_EVENT_TYPES = (
    "session_state_changed", "task_status_changed", "task_claimed", "task_released", "lease_expired",
    "signal_sent", "signal_processed", "signal_expired", "question_answered", "session_resumed", "session_finished",
)
# Written by the ledger about itself, with no session: the retention record of a purge.
LEDGER_PURGED = "ledger_purged"
EVENT_TYPES: tuple[str, ...] = tuple(dict.fromkeys(RALPHY_EVENT_TYPES + DEVTEAM_EVENT_TYPES + AUDIT_EVENT_TYPES))
CHAIN_HASH_LENGTH = 64  # SHA-256 in hex
_EVENT_TYPE_SET = frozenset(EVENT_TYPES)
# Custom types live in the `x-` namespace: `x-bench`, `x-my.tool_event`.
CUSTOM_EVENT_TYPE = re.compile(r"^x-[a-z0-9][a-z0-9_.-]{0,60}$")


# Counts and durations are never negative (the API's `min_value` 0, in its words).
EVENT_NON_NEGATIVE = ("tokens_in", "tokens_out", "tokens_total", "duration_ms")
NEGATIVE_MESSAGE = "Ensure this value is greater than or equal to 0."


def event_type_is_valid(value: str) -> bool:
    return value in _EVENT_TYPE_SET or CUSTOM_EVENT_TYPE.fullmatch(value) is not None


def event_type_canonical(value: str) -> str:
    """A known type, a custom one, or the seeds' spellings the schema lists as x-aliases (AgentCompleted,
    agent-completed, AGENT_COMPLETED → agent_completed); any other value as given (`event_rule_problems` refuses it)."""
    return value if event_type_is_valid(value) else (choice_canonical(EVENT_TYPES, value) or value)


def event_type_message(value: str) -> str:
    return (f"{value!r} is not a valid event type; allowed: {', '.join(EVENT_TYPES)}, or a custom "
            "type in the x- namespace (x-my_event).")


def _ledger_own_record(values: Mapping[str, Any]) -> bool:
    """The retention record the ledger writes about itself (no session): a type no agent may send."""
    return values.get("type") == LEDGER_PURGED and values.get("session_id") is None


def event_rule_problems(values: Mapping[str, Any]) -> dict[str, list[str]]:
    """The event's own rules, by field in the API's words: its type known (or `x-` custom), its counts and
    duration not negative. Every door holds them: the append service (`_event_new`, an event's `vars`) and the
    import (a row's values, with no model instance built per row). `values` holds the event's values by
    attname (`type`, `session_id`, the counts); one absent is its field's default, which breaks no rule."""
    problems: dict[str, list[str]] = {}
    event_type = values.get("type")
    if not event_type:
        problems["type"] = ["This field may not be blank."]
    elif not event_type_is_valid(event_type) and not _ledger_own_record(values):
        problems["type"] = [event_type_message(event_type)]
    for name in EVENT_NON_NEGATIVE:
        value = values.get(name)
        if isinstance(value, int) and value < 0:
            problems[name] = [NEGATIVE_MESSAGE]
    return problems


class LedgerEventManager(models.Manager["LedgerEvent"]):
    """`create` and `bulk_create` put new events on the hash chain (`ledger_app.chain`): an event
    inserted any other way has no hash and the database refuses it (constraint `ledgerevent_chained`)."""

    def create(self, **fields: Any) -> "LedgerEvent":
        event = self.model(**fields)
        self.bulk_create([event])
        return event

    def bulk_create(self, objs: Iterable["LedgerEvent"], *args: Any, **kwargs: Any) -> list["LedgerEvent"]:
        from ledger_app.chain import events_chain_insert

        if args or kwargs:
            raise TypeError("ledger events are chained in order: bulk_create takes no options")
        events = list(objs)
        events_chain_insert(events)
        return events


class LedgerEvent(models.Model):
    """One append-only ledger event; the database rejects UPDATE and DELETE (see migration 0002).

    Seed column → field:

    * ralphy `ledger` (seed 001): id → id (integer, also the API cursor); run_id → session;
      ts → timestamp; type → type; task_id → task_key; phase, duration_ms, tokens_in, tokens_out,
      tokens_total, cost_usd, is_estimated → same names; meta_json → meta.
    * DevTeam `events` (seed 003): id → id; session_id → session; timestamp → timestamp;
      event_type → type; event_category → category; agent, model, iteration, phase, message,
      data → same names; metadata → meta; tokens_input → tokens_in; tokens_output → tokens_out;
      cost_cents → cost_usd (Decimal USD; cents = usd * 100).

    `idempotency_key` is ours: a client retrying an append sends the same key and gets the
    existing event back instead of a second one (unique per session when set).

    Seed 003 cascades from the session; the ledger is append-only, so its events leave only through
    `ledger_events_purge` (a retention record in the chain), which the session delete service and
    `manage.py purge_sessions` call first. The FK is DO_NOTHING so the ORM never deletes events
    itself; the database's foreign key refuses deleting a session whose events were not purged.
    Events the ledger writes about itself (`ledger_purged`, the retention record) have no session.

    `prev_hash` and `hash` are ours: every event is a link of one SHA-256 chain per database
    (`ledger_app.chain` says what is hashed); `manage.py ledger_verify` walks it.
    """

    scope_path = "session"

    id = models.BigAutoField(primary_key=True)
    session = models.ForeignKey("sessions_app.Session", on_delete=models.DO_NOTHING, related_name="ledger_events",
                                db_index=False, null=True, blank=True)
    timestamp = models.DateTimeField(default=timezone.now)
    type = models.CharField(max_length=64)
    category = models.CharField(max_length=64, blank=True, default="")
    task_key = models.CharField(max_length=100, blank=True, default="")
    agent = models.CharField(max_length=200, blank=True, default="")
    model = models.CharField(max_length=100, blank=True, default="")
    iteration = models.PositiveIntegerField(null=True, blank=True)
    phase = models.CharField(max_length=100, blank=True, default="")
    duration_ms = models.BigIntegerField(null=True, blank=True)
    tokens_in = models.BigIntegerField(default=0)
    tokens_out = models.BigIntegerField(default=0)
    tokens_total = models.BigIntegerField(default=0)
    cost_usd = MoneyField(default=0)
    is_estimated = models.BooleanField(default=False)
    message = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True, validators=[JSONObject()])
    meta = models.JSONField(default=dict, blank=True, validators=[JSONObject()])
    idempotency_key = models.CharField(max_length=200, blank=True, default="")
    prev_hash = models.CharField(max_length=CHAIN_HASH_LENGTH, editable=False)
    hash = models.CharField(max_length=CHAIN_HASH_LENGTH, editable=False)

    objects = LedgerEventManager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "idempotency_key"], condition=~Q(idempotency_key=""),
                                    name="ledgerevent_session_idempotency_key"),
            # Both hashes are 64 characters: a row that bypassed the chain (no hash) is refused. (A length,
            # not a regular expression: SQLite would call back into Python for every inserted row.)
            models.CheckConstraint(condition=Q(Exact(Length("hash"), CHAIN_HASH_LENGTH),
                                               Exact(Length("prev_hash"), CHAIN_HASH_LENGTH)),
                                   name="ledgerevent_chained"),
            # An append-only row cannot be mended later: one the read path could not render is refused.
            json_type_check("data", "object", model="ledgerevent"),
            json_type_check("meta", "object", model="ledgerevent"),
        ]
        indexes = [
            models.Index(fields=["session", "id"], name="ledgerevent_session_id"),
            models.Index(fields=["type", "id"], name="ledgerevent_type_id"),
            models.Index(fields=["category", "id"], name="ledgerevent_category_id"),
            models.Index(fields=["task_key", "id"], name="ledgerevent_task_id"),
            models.Index(fields=["agent", "id"], name="ledgerevent_agent_id"),
            models.Index(fields=["model", "id"], name="ledgerevent_model_id"),
            models.Index(fields=["phase", "id"], name="ledgerevent_phase_id"),
            models.Index(fields=["timestamp"], name="ledgerevent_timestamp"),
        ]

    def __str__(self) -> str:
        return f"#{self.id} {self.type}"
