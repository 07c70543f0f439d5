"""Read queries for conversations and memory."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet

from conversations_app.models import Chat, GlobalPattern, Message, Observation, Run, SyncMapping, SyncStatus
from ralphsite.core.access import current_scope
from ralphsite.core.db.precompiled import PrecompiledLookup
from ralphsite.core.usage_book import usage_booked

RUN_USAGE_SOURCE = "run"  # the ledger's UsageSource.RUN: the calls booked against a run


def chat_list() -> QuerySet[Chat]:
    """Tombstones included: the API's FilterSets and detail lookups hide them unless asked."""
    return Chat.objects.all()


def run_list() -> QuerySet[Run]:
    """With the chat joined, so a detail lookup knows in one query whether its chat is tombstoned."""
    return Run.objects.select_related("chat")


def message_list() -> QuerySet[Message]:
    return Message.objects.select_related("run__chat")


_run_for_append: PrecompiledLookup[Run] | None = None


def _run_for_append_query() -> QuerySet[Run]:
    return (Run.objects.select_for_update(of=("self",), no_key=True).select_related("chat")
            .filter(chat__is_deleted=False).only("status", "message_count", "chat_id", "chat__session_id").order_by())


def run_for_append(*, run_id: str) -> Run | None:
    """The live run (its chat not tombstoned) a message append writes to, locked on PostgreSQL, with
    its chat's session id (the append moves that session's activity); call it inside the append's
    transaction. Compiled once (the fast path `lookups`, `PrecompiledLookup`): on every agent's append
    the ORM's compile of this join cost several times its run."""
    global _run_for_append
    if _run_for_append is None:  # built inside a transaction: select_for_update's compile requires one
        _run_for_append = PrecompiledLookup(_run_for_append_query())
    return _run_for_append.get(run_id)


def run_latest(*, chat_id: str) -> Run | None:
    """GetLatestByChat: the chat's run with the highest sequence number."""
    return Run.objects.filter(chat_id=chat_id).order_by("-sequence_number").first()


def chat_runs(*, chat_id: str) -> list[Run]:
    """A chat's runs in order, without their messages (the transcript's run navigation)."""
    return list(Run.objects.filter(chat_id=chat_id).order_by("sequence_number")
                .only("id", "chat_id", "sequence_number", "status", "started_at", "completed_at", "tokens_used",
                      "message_count"))


@dataclass(frozen=True)
class RunUsage:
    """A run's tokens and cost. From the one book of usage when calls are booked against the run (Claude
    Code's hooks book each call of its session's run: `booked`); else from the run's own `tokens_used`, a
    total the client wrote, with no split and no cost. Never both: a call is counted once."""

    booked: bool
    tokens: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: Decimal | None = None
    calls: int | None = None


def runs_usage(runs: list[Run]) -> dict[str, RunUsage]:
    """Each run's usage (one query for them all)."""
    booked = usage_booked(source=RUN_USAGE_SOURCE, source_ids=[run.pk for run in runs])
    usage = {}
    for run in runs:
        sums = booked.get(run.pk)
        usage[run.pk] = RunUsage(booked=False, tokens=run.tokens_used) if sums is None else RunUsage(
            booked=True, tokens=sums.input_tokens + sums.output_tokens, input_tokens=sums.input_tokens,
            output_tokens=sums.output_tokens, cost_usd=sums.cost_usd, calls=sums.calls)
    return usage


def run_messages_page(*, run_id: str, after_sequence: int, limit: int) -> tuple[list[Message], bool]:
    """One page of a run's messages in order (sequence numbers above `after_sequence`) and whether more
    follow: a run of thousands of messages is read a page at a time on its unique (run, sequence) index."""
    rows = list(Message.objects.filter(run_id=run_id, sequence_number__gt=after_sequence)
                .order_by("sequence_number")[:limit + 1])
    return rows[:limit], len(rows) > limit


def session_latest_messages(*, session_id: str, limit: int) -> tuple[Run | None, list[Message]]:
    """The session's latest conversation as it grows (the console): the latest run of the chat of the session
    that changed last, and its last `limit` messages in order. Two queries, however long the run."""
    run = (Run.objects.filter(chat__session_id=session_id, chat__is_deleted=False).select_related("chat")
           .order_by("-chat__updated_at", "-sequence_number").first())
    if run is None:
        return None, []
    latest = list(Message.objects.filter(run=run).order_by("-sequence_number")[:limit])
    return run, latest[::-1]


def observation_list() -> QuerySet[Observation]:
    return Observation.objects.all()


def pattern_list() -> QuerySet[GlobalPattern]:
    return GlobalPattern.objects.all()


SYNC_MODELS: dict[str, type[Chat] | type[Run] | type[Message]] = {"chat": Chat, "run": Run, "message": Message}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def sync_version(entity: str, row: dict[str, Any] | Chat | Run | Message) -> int:
    """What `sync/mark-synced/` compares, per item: a number that changes whenever the row is edited.
    A chat's `version`; for runs and messages (which have none) the microsecond of their last change."""
    value = (lambda name: row[name]) if isinstance(row, dict) else (lambda name: getattr(row, name))
    if entity == "chat":
        return value("version")
    return (value("updated_at") - _EPOCH) // timedelta(microseconds=1)


def sync_pending(*, entity: str, limit: int) -> tuple[int, list[dict]]:
    """(how many rows of `entity` still need sync, the oldest `limit` of them, each with the `version`
    to send back to `sync/mark-synced/`), of the sessions the request's token sees. Tombstones
    included: a deletion needs syncing too."""
    rows = current_scope().filter(SYNC_MODELS[entity].objects.exclude(sync_status=SyncStatus.SYNCED))
    fields = ["id", "sync_status", "remote_id", "updated_at"]
    if entity == "chat":
        fields += ["version", "is_deleted"]
    page = list(rows.order_by("updated_at", "id").values(*fields)[:limit])
    return rows.count(), [{**row, "version": sync_version(entity, row)} for row in page]


def sync_mapping_list() -> QuerySet[SyncMapping]:
    return SyncMapping.objects.all()
