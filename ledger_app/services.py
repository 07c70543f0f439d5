"""Every write to the ledger app: one function per domain verb, each one transaction."""

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, router, transaction
from django.db.models import F, Max, Min, Q
from django.utils import timezone

from ledger_app.chain import events_chain_insert, ranges_digest
from ledger_app.models import (
    LEDGER_PURGED,
    PRICED_TOKEN_FIELDS,
    Checkpoint,
    CheckpointRestore,
    DeadLetter,
    DeadLetterStatus,
    Issue,
    LedgerEvent,
    ModelPrice,
    RetentionRange,
    RetentionRun,
    TokenUsage,
    UsageSource,
    event_rule_problems,
    event_type_canonical,
)
from ralphsite.core.access import current_scope
from ralphsite.core.activity import sessions_touch
from ralphsite.core.errors import Conflict, InvalidInput, NotFound
from ralphsite.core.money import usd
from ralphsite.core.services import column_holds, instance_create
from ralphsite.core.shapes import stored_values_check
from sessions_app.models import Session, SessionStatus
from sessions_app.services.base import lock_rows
from sessions_app.services.usage import session_usage_add

MAX_EVENTS_PER_APPEND = 1000
_APPEND_ATTEMPTS = 3


# -- events ----------------------------------------------------------------------------------

@dataclass
class AppendResult:
    """What happened to one item of an append: created, duplicate (of `event_id`), invalid
    (`validation_error`) or conflict (`idempotency_key_reused`: the key recorded another body)."""

    status: str
    event_id: int | None = None
    event: LedgerEvent | None = None
    errors: dict[str, Any] = field(default_factory=dict)
    code: str = ""


def _key_reused(key: str, event_id: int | None) -> AppendResult:
    recorded = f"event {event_id}" if event_id is not None else "an earlier item of this request"
    return AppendResult("conflict", code="idempotency_key_reused", errors={"idempotency_key": [
        f"The idempotency key {key!r} recorded {recorded} with a different body."]})


def _same_event(recorded: LedgerEvent, item: dict[str, Any]) -> bool:
    """Whether a retried item carries what the key recorded: every field it sends equals the stored one
    (numbers compared by value: 0.5 and Decimal("0.500000") are the same cost)."""
    for name, value in item.items():
        if name == "cost_usd" and value is None:
            continue  # not sent: the recorded event's cost was priced
        stored = getattr(recorded, name)
        if isinstance(stored, (Decimal, float)) and isinstance(value, (Decimal, float, int)) \
                and not isinstance(value, bool):
            if Decimal(str(stored)) != Decimal(str(value)):
                return False
        elif stored != value:
            return False
    return True


def _event_new(*, request_id: str = "", prices: "PriceList | None" = None, **fields: Any) -> LedgerEvent:
    """An unsaved event whose tokens_total, when not given, is tokens in + out. A provider's request
    id is kept in `meta` (hashed with the event): usage is counted once per request id. An event that
    reports a call without its cost (`cost_usd` absent or None) has it priced (`PriceList.priced`)."""
    if request_id:
        meta = fields.get("meta")
        fields["meta"] = {**(meta if isinstance(meta, dict) else {}), "request_id": request_id} \
            if meta is None or isinstance(meta, dict) else meta  # a meta of another shape is refused below
    cost_sent = fields.get("cost_usd") is not None
    if not cost_sent:
        fields.pop("cost_usd", None)
    event = LedgerEvent(**fields)
    if isinstance(event.type, str):
        event.type = event_type_canonical(event.type)
    stored_values_check(event)
    _event_rules_check(event)
    if not event.tokens_total:
        event.tokens_total = event.tokens_in + event.tokens_out
    if not cost_sent and (event.tokens_in or event.tokens_out):
        call = {**_event_usage(event), "cost_usd": None}
        priced = (prices or PriceList()).priced(call)
        event.cost_usd, event.is_estimated = priced["cost_usd"], priced["is_estimated"]
    return event


def _event_rules_check(event: LedgerEvent) -> None:
    """A 400 `validation_error` with the event's broken rules by field (`event_rule_problems`), as REST says them."""
    if problems := event_rule_problems(vars(event)):
        name, [message] = next(iter(problems.items()))
        raise InvalidInput(f"{name}: {message}", details=problems)


def events_append(*, items: list[dict[str, Any]]) -> list[AppendResult]:
    """Append validated events (model field names, `session_id` as a string) in one transaction.

    An item whose (session, idempotency_key) already exists, in the table or earlier in the same
    batch, with the same body is reported as a duplicate of that event and not inserted: an agent
    that retries after a timeout never double-counts. The same key with a different body is a
    conflict (`idempotency_key_reused`), never silently the old event. Session token/cost totals
    grow by exactly the created rows.
    Two requests racing with the same key: one insert fails on the unique constraint, its whole
    transaction is rolled back and replayed, and the replay sees the other's row as a duplicate.
    """
    if len(items) > MAX_EVENTS_PER_APPEND:
        raise InvalidInput(f"At most {MAX_EVENTS_PER_APPEND} events per request; got {len(items)}.",
                           details={"limit": MAX_EVENTS_PER_APPEND, "received": len(items)})
    attempts_left = _APPEND_ATTEMPTS
    while True:
        try:
            with transaction.atomic():
                return _events_append_once(items)
        except IntegrityError:
            attempts_left -= 1
            if not attempts_left:
                raise


def event_append_one(*, item: dict[str, Any]) -> tuple[LedgerEvent, bool]:
    """Append one validated event; returns (event, created). A repeated idempotency key returns the
    event that key recorded first (created False), or is a 409 `idempotency_key_reused` when the body
    differs; an unknown session is a 400."""
    [result] = events_append(items=[item])
    if result.status == "invalid":
        raise InvalidInput(next(iter(result.errors.values()))[0], code=result.code, details=result.errors)
    if result.status == "conflict":
        raise Conflict(result.errors["idempotency_key"][0], code=result.code, details=result.errors)
    if result.status == "duplicate":
        return LedgerEvent.objects.get(pk=result.event_id), False
    return result.event, True


def _sessions_existing(session_ids: set[str]) -> set[str]:
    """Which of these sessions exist."""
    return set(Session.objects.filter(pk__in=session_ids).order_by().values_list("pk", flat=True))


def _events_append_once(items: list[dict[str, Any]]) -> list[AppendResult]:
    known_sessions = _sessions_existing({item["session_id"] for item in items})
    keyed = [(item["session_id"], item["idempotency_key"]) for item in items if item.get("idempotency_key")]
    existing: dict[tuple[str, str], LedgerEvent] = {}
    if keyed:
        rows = LedgerEvent.objects.filter(session_id__in={s for s, _ in keyed},
                                          idempotency_key__in={k for _, k in keyed})
        existing = {(event.session_id, event.idempotency_key): event for event in rows}
    prices = PriceList()
    results: list[AppendResult] = []
    first_in_batch: dict[tuple[str, str], tuple[AppendResult, dict[str, Any]]] = {}
    new_events: list[tuple[AppendResult, LedgerEvent]] = []
    for item in items:
        if item["session_id"] not in known_sessions:
            missing = f"Session {item['session_id']} does not exist."
            results.append(AppendResult("invalid", errors={"session": [missing]}, code="validation_error"))
            continue
        key = (item["session_id"], item.get("idempotency_key") or "")
        if key[1] and key in existing:
            recorded = existing[key]
            results.append(AppendResult("duplicate", event_id=recorded.id) if _same_event(recorded, item)
                           else _key_reused(key[1], recorded.id))
            continue
        if key[1] and key in first_in_batch:
            first, first_item = first_in_batch[key]
            if first_item != item:
                results.append(_key_reused(key[1], None))
                continue
            result = AppendResult("duplicate")
            result.event = first.event  # its id is known once the batch is inserted
            results.append(result)
            continue
        try:
            event = _event_new(**item, prices=prices)
        except InvalidInput as unpriced:
            results.append(AppendResult("invalid", errors=unpriced.details, code=unpriced.code))
            continue
        result = AppendResult("created", event=event)
        if key[1]:
            first_in_batch[key] = (result, item)
        results.append(result)
        new_events.append((result, event))
    # Usage and session totals first: the chain head is the last lock an append takes (ledger_app.chain).
    _events_account([event for _, event in new_events])
    events_chain_insert([event for _, event in new_events])
    for result in results:
        if result.event is not None:
            result.event_id = result.event.id
    return results


def _add_usage(rows: list[tuple[str | None, int, int, Decimal]]) -> None:
    """Add rows' tokens and cost to their sessions' totals: one UPDATE per session, not per row."""
    per_session: dict[str, list] = defaultdict(lambda: [0, 0, Decimal(0)])
    for session_id, tokens_in, tokens_out, cost in rows:
        if session_id is None:
            continue
        totals = per_session[session_id]
        totals[0] += tokens_in
        totals[1] += tokens_out
        totals[2] += Decimal(cost)
    for session_id, (tokens_in, tokens_out, cost) in sorted(per_session.items()):
        session_usage_add(session_id=session_id, tokens_input=tokens_in, tokens_output=tokens_out, cost_usd=cost)


def event_append(*, session_id: str, type: str, **fields: Any) -> LedgerEvent:
    """Append one event the server itself records (audit trail, issues, checkpoints), inside the
    caller's transaction. It carries no idempotency key and its session is the caller's own row, so
    it needs none of the agents' append path: no duplicate lookup, no session check, no savepoint.
    A session id that does not exist still fails, on the foreign key, with the caller's change.
    Call it after the transaction's other writes: the chain head it locks must be the last lock."""
    event = _event_new(session_id=session_id, type=type, **fields)
    with transaction.atomic(savepoint=False):
        _events_account([event])
        events_chain_insert([event])
    return event


# -- issues ----------------------------------------------------------------------------------

def issue_record(*, session_id: str, task_key: str, kind: str, signature: str, message: str,
                 file: str = "", line: int | None = None, seen_at: datetime | None = None,
                 issue_id: str | None = None) -> tuple[Issue, bool]:
    """Record one occurrence of an issue: a known signature increments `count` (seed 001).

    `issue_id` (a client-chosen ULID) is used only when the signature is new in the session.

    Race-free on both backends: the increment is an UPDATE with F(); the first occurrence is an
    INSERT in a savepoint, and a concurrent first occurrence that loses on the unique constraint
    falls back to the increment. Returns (issue, created).
    """
    seen_at = seen_at or timezone.now()
    with transaction.atomic():
        if not Session.objects.filter(pk=session_id).exists():
            raise InvalidInput(f"Session {session_id} does not exist.", details={"session": [session_id]})
        created = not _issue_increment(session_id, signature, message, seen_at)
        if created:
            try:
                with transaction.atomic():
                    Issue.objects.create(**({"id": issue_id} if issue_id else {}), session_id=session_id,
                                         task_key=task_key, kind=kind, signature=signature, message=message,
                                         file=file, line=line, first_seen_at=seen_at, last_seen_at=seen_at)
            except IntegrityError:
                if not _issue_increment(session_id, signature, message, seen_at):
                    raise
                created = False
        issue = Issue.objects.get(session_id=session_id, signature=signature)
        event_append(session_id=session_id, type="issue_recorded", category="issue", task_key=task_key,
                     message=message, data={"issue": issue.id, "kind": kind, "signature": signature,
                                            "count": issue.count})
    return issue, created


def _issue_increment(session_id: str, signature: str, message: str, seen_at: datetime) -> bool:
    return bool(Issue.objects.filter(session_id=session_id, signature=signature).update(
        count=F("count") + 1, last_seen_at=seen_at, message=message, updated_at=timezone.now()))


# -- checkpoints -----------------------------------------------------------------------------

def checkpoint_create(*, data: dict[str, Any]) -> Checkpoint:
    """A new checkpoint and its `checkpoint_created` event. Its key taken in its session (keys are unique per
    session) with the same content is a retry: the existing checkpoint, nothing appended; with other
    content a 409."""
    with transaction.atomic():
        existing = Checkpoint.objects.filter(key=data.get("key"), session=data.get("session")).first()
        if existing is not None:
            if not all(column_holds(existing, name, value) is not False for name, value in data.items()):
                raise Conflict(f"A checkpoint with key {existing.key} already exists with different content.",
                               details={"key": existing.key})
            return existing
        checkpoint = instance_create(model=Checkpoint, data=data)
        if checkpoint.session_id:
            event_append(session_id=checkpoint.session_id, type="checkpoint_created", category="checkpoint",
                         task_key=checkpoint.task_key, message=f"checkpoint {checkpoint.key}",
                         data={"checkpoint": checkpoint.id, "key": checkpoint.key, "git_ref": checkpoint.git_ref})
    return checkpoint


def checkpoint_restore(*, checkpoint: Checkpoint, agent: str = "", note: str = "",
                       restored_at: datetime | None = None) -> CheckpointRestore:
    with transaction.atomic():
        if not Checkpoint.objects.filter(pk=checkpoint.pk, can_restore=True).exists():
            raise Conflict(f"Checkpoint {checkpoint.key} cannot be restored (can_restore is false).",
                           code="checkpoint_not_restorable", details={"checkpoint": checkpoint.key})
        return instance_create(model=CheckpointRestore, data={
            "checkpoint": checkpoint, "agent": agent, "note": note, "restored_at": restored_at or timezone.now()})


def checkpoint_last(*, session_id: str) -> Checkpoint | None:
    return Checkpoint.objects.filter(session_id=session_id).order_by("-created_at", "-id").first()


# -- token usage -----------------------------------------------------------------------------

def token_usage_record(*, items: list[dict[str, Any]]) -> list[TokenUsage]:
    """Record API calls' usage; a row sent without `cost_usd` is priced (`usage_priced`).
    A call whose request_id its session already has answers the row that counted it, which is token usage from
    then on (DevTeam's `token_usage` holds it: the statistics named after its views count it), whichever path
    reported it first; it stays the one row of the call (an attempt or invocation that reported it no longer
    replaces or removes it, as token usage still reports it)."""
    with transaction.atomic():
        _check_sessions_exist({item["session_id"] for item in items if item.get("session_id")})
        now = timezone.now()
        rows = usage_record(items=usage_priced(items=[{**item, "recorded_at": item.get("recorded_at") or now}
                                                      for item in items]))
        booked_elsewhere = {row.pk: row for row in rows if row.source != UsageSource.TOKEN_USAGE}
        if booked_elsewhere:
            TokenUsage.objects.filter(pk__in=booked_elsewhere).update(source=UsageSource.TOKEN_USAGE, source_id="")
            for row in booked_elsewhere.values():
                row.source, row.source_id = UsageSource.TOKEN_USAGE, ""
        return rows


@dataclass
class PriceList:
    """Dated model prices, newest first, each model's read once (when a call of it first needs one)."""

    by_model: dict[str, list[ModelPrice]] = field(default_factory=dict)

    def _prices(self, model: str) -> list[ModelPrice]:
        """The model's own prices, else those of the longest name that is a prefix of it up to a `-` (a dated
        snapshot priced by its family's row)."""
        if model not in self.by_model:
            parts = model.split("-")
            names = ["-".join(parts[:length]) for length in range(len(parts), 0, -1)]
            rows = list(ModelPrice.objects.filter(model__in=names).order_by("-valid_from"))
            named = next((name for name in names if any(row.model == name for row in rows)), None)
            self.by_model[model] = [row for row in rows if row.model == named]
        return self.by_model[model]

    def priced(self, item: dict[str, Any]) -> dict[str, Any]:
        """The one cost rule for a provider call, whichever path reports it (token usage, a ledger event,
        an attempt or an agent invocation). `item` is in TokenUsage's field names. A cost that was sent
        (`cost_usd` not None, 0 included) is the call's cost. One not sent is the priced tokens (input,
        output, cache reads, cache writes, reasoning) at the ModelPrice of the item's `model` in force at
        its `recorded_at` (now when absent), marked `is_estimated`; a call with no tokens costs 0. When
        tokens need a price and none is in force: 400 `no_model_price` naming the model."""
        if item.get("cost_usd") is not None:
            return item
        tokens = {name: item.get(name) or 0 for name in PRICED_TOKEN_FIELDS}
        if not any(tokens.values()):
            return {**item, "cost_usd": Decimal(0), "is_estimated": True}
        model, recorded_at = item.get("model", ""), item.get("recorded_at") or timezone.now()
        price = next((p for p in self._prices(model) if p.valid_from <= recorded_at), None)
        if price is None:
            message = f"No price for model {model!r} at {recorded_at.isoformat()}: send cost_usd or add a model price."
            raise InvalidInput(message, code="no_model_price", details={"cost_usd": [message]})
        total = sum((count * getattr(price, PRICED_TOKEN_FIELDS[name]) for name, count in tokens.items()), Decimal(0))
        return {**item, "cost_usd": usd(total / 1_000_000),
                "is_estimated": True}


def usage_priced(*, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items with their costs by `PriceList.priced`."""
    prices = PriceList()
    return [prices.priced(item) for item in items]


def usage_record(*, items: Iterable[dict[str, Any]], touch: Collection[str] = ()) -> list[TokenUsage]:
    """Write provider calls into the one book of usage (TokenUsage) and move their sessions' totals
    by the rows written, in the caller's transaction. A call whose `request_id` its session already
    has (in the table or earlier in `items`) is that row: counted once, whichever path reports it.
    Returns, for each item, the row that counts it.

    The sessions are locked first (in id order), so two reports of one request id never both insert;
    `touch` names more sessions whose activity the same write moves (locked in the same order)."""
    items = list(items)
    session_ids = sorted({item["session_id"] for item in items if item.get("session_id")} | set(touch))
    if session_ids:
        list(lock_rows(Session.objects.filter(pk__in=session_ids).order_by("pk")).values_list("pk", flat=True))
    keyed = {(item.get("session_id"), item.get("request_id")) for item in items
             if item.get("session_id") and item.get("request_id")}
    counted: dict[tuple[str, str], TokenUsage] = {}
    if keyed:
        known = TokenUsage.objects.filter(session_id__in={s for s, _ in keyed}, request_id__in={r for _, r in keyed})
        counted = {(row.session_id, row.request_id): row for row in known}
    rows, new = [], []
    for item in items:
        key = (item.get("session_id"), item.get("request_id") or "")
        if key[0] and key[1] and key in counted:
            rows.append(counted[key])
            continue
        row = TokenUsage(**item)
        if key[0] and key[1]:
            counted[key] = row
        rows.append(row)
        new.append(row)
    # The totals first: a call that would overflow its session's is refused (usage_overflow) before the
    # row's insert moves the daily rollup (`ledger_app.usage_days`), whose column would overflow too.
    _add_usage([(row.session_id, row.input_tokens, row.output_tokens, row.cost_usd) for row in new])
    TokenUsage.objects.bulk_create(new)
    sessions_touch(set(touch) - {row.session_id for row in new})  # the totals' UPDATE moved the others
    return rows


def usage_replace(*, source: str, source_id: str, item: dict[str, Any] | None) -> Decimal | None:
    """The usage an attempt or invocation reports changed (or the row went: `item` None): its call's
    row is replaced, the session totals move by the difference. A row that reported a request id
    another path counted first has no row of its own, and still counts nothing. An item sent without
    its cost is priced (`PriceList.priced`); returns the item's cost (None when the row went)."""
    previous = list(TokenUsage.objects.filter(source=source, source_id=source_id))
    _add_usage([(row.session_id, -row.input_tokens, -row.output_tokens, -row.cost_usd) for row in previous])
    TokenUsage.objects.filter(pk__in=[row.pk for row in previous]).delete()
    if item is None:
        return None
    [item] = usage_priced(items=[item])
    if _has_usage(item["input_tokens"], item["output_tokens"], item["cost_usd"]):
        usage_record(items=[{**item, "source": source, "source_id": source_id}])
    return item["cost_usd"]


def _has_usage(tokens_in: int, tokens_out: int, cost: Decimal | int) -> bool:
    return bool(tokens_in or tokens_out or cost)


def events_usage_record(*, events: list[LedgerEvent]) -> list[TokenUsage]:
    """The provider calls of events already written another way (import_seed's bulk path) into the one book
    of usage, as an append through the API records them: counted once per request id, the sessions' totals
    moved by them."""
    return usage_record(items=_events_usage(events))


def _events_account(events: list[LedgerEvent]) -> None:
    """Appended events move their sessions' activity, and the calls they report are recorded."""
    usage_record(items=_events_usage(events), touch={event.session_id for event in events if event.session_id})


def _events_usage(events: Iterable[LedgerEvent]) -> list[dict[str, Any]]:
    """The provider calls these events report (those carrying tokens or cost)."""
    return [_event_usage(event) for event in events
            if event.session_id and _has_usage(event.tokens_in, event.tokens_out, event.cost_usd)]


def _event_usage(event: LedgerEvent) -> dict[str, Any]:
    """The provider call an event reports, in TokenUsage's field names."""
    return {"session_id": event.session_id, "request_id": (event.meta or {}).get("request_id", ""),
            "source": UsageSource.EVENT, "model": event.model, "agent": event.agent, "task_key": event.task_key,
            "operation": event.type, "input_tokens": event.tokens_in, "output_tokens": event.tokens_out,
            "cost_usd": event.cost_usd, "is_estimated": event.is_estimated, "recorded_at": event.timestamp}


def _check_sessions_exist(session_ids: set[str]) -> None:
    """One query for a whole list; an unknown session is a 400 naming it."""
    if not session_ids:
        return
    missing = sorted(session_ids - set(Session.objects.filter(pk__in=session_ids).values_list("pk", flat=True)))
    if missing:
        raise InvalidInput(f"Session {missing[0]} does not exist.",
                           details={"session": [f"Session {pk} does not exist." for pk in missing]})


# -- dead letters ----------------------------------------------------------------------------

def _due(now: datetime) -> Q:
    return (Q(status=DeadLetterStatus.PENDING) & (Q(retry_after__isnull=True) | Q(retry_after__lte=now))
            & (Q(expires_at__isnull=True) | Q(expires_at__gt=now)))


def dead_letter_retry(*, dead_letter_id: int) -> DeadLetter:
    """Take one pending, due item for a retry: status → retried, attempt_count + 1.

    A conditional UPDATE: of two concurrent retries of the same item exactly one succeeds.
    """
    now = timezone.now()
    with transaction.atomic():
        taken = DeadLetter.objects.filter(_due(now), pk=dead_letter_id).update(
            status=DeadLetterStatus.RETRIED, attempt_count=F("attempt_count") + 1, retried_at=now)
        item = DeadLetter.objects.filter(pk=dead_letter_id).first()
        if item is None:
            raise NotFound(f"Dead letter {dead_letter_id} does not exist.")
        if not taken:
            raise Conflict(f"Dead letter {dead_letter_id} is not due for a retry (status {item.status}, "
                           f"retry_after {item.retry_after}, expires_at {item.expires_at}).",
                           code="dead_letter_not_due", details={"status": item.status})
    return item


def dead_letter_discard(*, dead_letter_id: int) -> DeadLetter:
    """Give up on a pending item (pending → failed): nobody retries it. A conditional UPDATE, so a
    discard racing a retry or a claim leaves the item to exactly one of them."""
    with transaction.atomic():
        discarded = DeadLetter.objects.filter(pk=dead_letter_id, status=DeadLetterStatus.PENDING).update(
            status=DeadLetterStatus.FAILED)
        item = DeadLetter.objects.filter(pk=dead_letter_id).first()
        if item is None:
            raise NotFound(f"Dead letter {dead_letter_id} does not exist.")
        if not discarded:
            raise Conflict(f"Dead letter {dead_letter_id} is {item.status}, not pending.",
                           code="dead_letter_not_pending", details={"status": item.status})
    return item


def dead_letter_claim_next(*, operation_type: str = "") -> DeadLetter | None:
    """Atomically take the oldest due item (two workers never get the same one), or None.

    PostgreSQL: SELECT … FOR UPDATE SKIP LOCKED, so concurrent claimers pass over each other's row.
    SQLite: the transaction begins IMMEDIATE, so claims are serialized. The conditional UPDATE
    re-checks the state either way.
    """
    now = timezone.now()
    with transaction.atomic():
        candidates = current_scope().filter(DeadLetter.objects.filter(_due(now)))  # the token's sessions only
        if operation_type:
            candidates = candidates.filter(operation_type=operation_type)
        for item in candidates.select_for_update(skip_locked=True, no_key=True).order_by("retry_after", "id")[:5]:
            if DeadLetter.objects.filter(_due(now), pk=item.pk).update(
                    status=DeadLetterStatus.RETRIED, attempt_count=F("attempt_count") + 1, retried_at=now):
                item.refresh_from_db()
                return item
    return None


# -- retention -------------------------------------------------------------------------------

_PURGE_SCAN_CHUNK = 10_000
_DELETE_CHUNK = 500  # session ids per DELETE (SQLite's bound-parameter limit)


def ledger_events_purge(*, session_ids: Collection[str], reason: str) -> LedgerEvent | None:
    """Remove every ledger event of these sessions: the ONE way events leave the ledger.

    In one transaction (the caller's, if any: delete the sessions in it afterwards) it locks the
    sessions, finds each run of consecutive events it removes (consecutive among the events still
    there), appends a retention record to the chain: an event of type `ledger_purged` without a
    session, whose `data` names the reason, the sessions, the number and id span of removed events
    and `ranges_sha256`, with one `RetentionRange` per run; then deletes the events. The append-only
    triggers let a DELETE through only for events the head's retention record covers
    (`ledger_app.append_only`): the record comes first, and the transaction holds the head.
    `manage.py ledger_verify` bridges the holes with those ranges and names the record.
    Returns the record, or None when the sessions had no events (nothing is written then).
    """
    ids = sorted(set(session_ids))
    if not ids:
        return None
    with transaction.atomic():
        # The sessions first, then the chain head: the head is the last lock (ledger_app.chain).
        list(Session.objects.filter(pk__in=ids).order_by("pk").select_for_update().values_list("pk", flat=True))
        runs = _purged_runs(ids)
        if not runs:
            return None
        removed = sum(run[2] for run in runs)
        record = _event_new(session_id=None, type=LEDGER_PURGED, category="retention",
                            message=f"removed {removed} events of {len(ids)} sessions: {reason}",
                            data={"reason": reason, "sessions": ids, "events_removed": removed,
                                  "first_id": runs[0][0], "last_id": runs[-1][1], "ranges": len(runs),
                                  "ranges_sha256": ranges_digest(runs)})
        events_chain_insert([record])
        RetentionRange.objects.bulk_create(
            RetentionRange(retention_event=record, first_id=first_id, last_id=last_id, events=count,
                           prev_hash=prev_hash, last_hash=last_hash)
            for first_id, last_id, count, prev_hash, last_hash in runs)
        _events_delete(ids)
    return record


def _purged_runs(session_ids: list[str]) -> list[tuple[int, int, int, str, str]]:
    """(first_id, last_id, events, prev_hash of the first, hash of the last) of each run of the
    sessions' events with no other session's event between them, in id order."""
    events = LedgerEvent.objects.filter(session_id__in=session_ids)
    span = events.aggregate(first=Min("id"), last=Max("id"))
    if span["first"] is None:
        return []
    removed, runs = set(session_ids), []
    run: list[Any] | None = None
    rows = (LedgerEvent.objects.filter(id__gte=span["first"], id__lte=span["last"]).order_by("id")
            .values_list("id", "session_id", "prev_hash", "hash").iterator(chunk_size=_PURGE_SCAN_CHUNK))
    for event_id, session_id, prev_hash, event_hash in rows:
        if session_id not in removed:
            if run is not None:
                runs.append(tuple(run))
                run = None
        elif run is None:
            run = [event_id, event_id, 1, prev_hash, event_hash]
        else:
            run[1], run[2], run[4] = event_id, run[2] + 1, event_hash
    if run is not None:
        runs.append(tuple(run))
    return runs


def _events_delete(session_ids: list[str]) -> None:
    """A plain DELETE: the ORM's would first load every event (retention rows protect a few)."""
    for start in range(0, len(session_ids), _DELETE_CHUNK):
        LedgerEvent.objects.filter(session_id__in=session_ids[start:start + _DELETE_CHUNK])._raw_delete(
            router.db_for_write(LedgerEvent))


def sessions_purge(*, older_than: timedelta, now: datetime | None = None, dry_run: bool = False) -> RetentionRun:
    """Remove ended sessions (ended before now - older_than) with their ledger rows, and record it:
    the events through `ledger_events_purge` (a retention record in the chain), the sessions and
    what cascades from them with the ORM, and a `RetentionRun` naming both. `dry_run`: the same
    work, rolled back, so the run it returns counts exactly what would go."""
    now = now or timezone.now()
    cutoff = now - older_than
    with transaction.atomic():
        ended = Session.objects.filter(ended_at__lt=cutoff).exclude(status=SessionStatus.RUNNING)
        session_ids = sorted(ended.values_list("pk", flat=True))
        record = ledger_events_purge(session_ids=session_ids,
                                     reason=f"purge_sessions: ended before {cutoff.isoformat()}")
        _, removed = Session.objects.filter(pk__in=session_ids).delete()
        rows_removed = {label: count for label, count in removed.items() if count}
        if record is not None:
            rows_removed[LedgerEvent._meta.label] = record.data["events_removed"]
        run = RetentionRun(ran_at=now, older_than_days=older_than.days, cutoff=cutoff,
                           sessions_removed=len(session_ids), rows_removed=rows_removed, session_ids=session_ids,
                           retention_event=record)
        if dry_run:
            transaction.set_rollback(True)
            return run
        run.save()
        return run
