"""The ledger's hash chain: every event is a link, `hash = SHA-256(prev_hash + canonical content)`.

One chain per database, in id order. An append locks the chain head (`LedgerChainHead`, one row),
gives its events the next ids, links each to the one before and moves the head, all in the
append's transaction: concurrent appenders queue on the head (PostgreSQL: `SELECT … FOR UPDATE`;
SQLite: the write lock every transaction takes at BEGIN), so the chain never forks. The head is the
last lock an append takes, so appenders hold it only for the hashing and the INSERT.

What is hashed (chain version 1), exactly, so that anyone can recompute it:

    hash = lowercase hex of SHA-256( ascii(prev_hash) || canonical_json(event) )

where `prev_hash` is the previous event's hash (64 hex digits; `GENESIS_HASH`, 64 zeros, for the
first event) and `canonical_json(event)` is the UTF-8 JSON object of the `CHAIN_FIELDS` below:

* keys sorted by code point, no whitespace (`{"a":1,"b":2}`), non-ASCII characters written as
  UTF-8, never escaped; in strings only `"`, `\\` and control characters are escaped (`\\n`, `\\t`,
  `\\b`, `\\f`, `\\r`, otherwise `\\u00xx`);
* `session` is the session's id (26 upper-case characters) or null; `timestamp` is UTC, ending in
  `Z`, with six digits of microseconds unless they are zero (`2026-11-25T07:09:00Z`,
  `2026-11-25T07:09:00.250000Z`); `cost_usd` is a string with exactly six decimals when the
  amount has six or fewer, `"0.250000"` (zero is `"0.000000"`), else with the decimals it has and
  no trailing zero, up to ten, `"0.00000015"` (`ralphsite.core.money.usd_text`; amounts kept ten
  places from sessions_app 0019 / ledger_app 0019 on, and every chain written before holds six
  at most, so it reads the same); the other columns are JSON strings, integers, booleans or null;
* `data` and `meta` are their JSON values with keys sorted the same way; a number with no fractional
  part is written as an integer with all its digits (`2.0` → `2`, `1e16` → `10000000000000000`,
  since PostgreSQL's jsonb reads `1e16` back as that integer), any other number as the shortest
  decimal that reads back as the same IEEE-754 double (`0.1`, `1e-7`, as orjson writes it), NaN and
  infinities as null.

A purge (`ledger_events_purge`) removes events only together with a retention record in the chain
that lists each run of consecutive removed events (`RetentionRange`: ids, count, the prev_hash of
its first and the hash of its last event); `ranges_sha256` in the record's `data` is SHA-256 over
`canonical_json([[first_id, last_id, events, prev_hash, last_hash], …])` in `first_id` order.
"""

import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import orjson
from django.db import connections, router, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

from ledger_app.models import LedgerChainHead, LedgerEvent
from ralphsite.core.errors import InvalidInput
from ralphsite.core.money import usd_shown, usd_text
from sessions_app.models import Session

GENESIS_HASH = "0" * 64
# Every column of an event but its two hashes, by the name the canonical JSON gives it.
CHAIN_FIELDS = {
    "agent": "agent", "category": "category", "cost_usd": "cost_usd", "data": "data", "duration_ms": "duration_ms",
    "id": "id", "idempotency_key": "idempotency_key", "is_estimated": "is_estimated", "iteration": "iteration",
    "message": "message", "meta": "meta", "model": "model", "phase": "phase", "session": "session_id",
    "task_key": "task_key", "timestamp": "timestamp", "tokens_in": "tokens_in", "tokens_out": "tokens_out",
    "tokens_total": "tokens_total", "type": "type",
}
UNHASHED_FIELDS = frozenset({"prev_hash", "hash"})
# JSON nested deeper than this is refused (orjson writes at most 255 levels).
MAX_JSON_DEPTH = 128

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EXACT_FLOAT_INTEGER = 2**53


def money(value: Any) -> Decimal:
    """A cost as the value the database stores and hands back (numeric rounding: half away from
    zero, `ralphsite.core.money.usd_shown`)."""
    return usd_shown(value)


def _utc(value: datetime) -> datetime:
    """The database hands back UTC (datetime.UTC); anything else (a client's offset) is converted."""
    if value.tzinfo is UTC:
        return value
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _json_plain(value: dict | list) -> bool:
    """Whether a dict or list holds only strings, booleans, nulls and 64-bit integers (under string
    keys): already canonical, the common case, checked without copying it."""
    items = value.values() if type(value) is dict else value
    if type(value) is dict and not all(type(key) is str for key in value):
        return False
    for item in items:
        kind = type(item)
        if kind is int:
            if not _INT64_MIN <= item <= _INT64_MAX:
                return False
        elif kind is not str and kind is not bool and item is not None:
            return False
    return True


def _json_canonical(value: Any, depth: int = 0) -> Any:
    """The value as every backend reads it back, numbers in their canonical form (see above)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return value if _INT64_MIN <= value <= _INT64_MAX else orjson.Fragment(str(value).encode())
    if kind is float:
        if not value.is_integer():  # NaN and the infinities too: orjson writes them as null
            return value
        exact = int(value) if -_EXACT_FLOAT_INTEGER <= value <= _EXACT_FLOAT_INTEGER else int(Decimal(repr(value)))
        return _json_canonical(exact)
    if depth >= MAX_JSON_DEPTH:
        raise InvalidInput(f"JSON nested deeper than {MAX_JSON_DEPTH} levels cannot be recorded in the ledger.",
                           details={"data": [f"nested deeper than {MAX_JSON_DEPTH} levels"]})
    if (kind is dict or kind is list) and _json_plain(value):
        return value
    if kind is dict and all(type(key) is str for key in value):
        return {key: _json_canonical(item, depth + 1) for key, item in value.items()}
    if kind is list:
        return [_json_canonical(item, depth + 1) for item in value]
    # Tuples, non-string keys, …: what the JSON column stores and reads back (json.dumps, json.loads).
    return _json_canonical(json.loads(json.dumps(value)), depth)


_ORJSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_UTC_Z


def canonical_json(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError as exc:  # a lone surrogate, a value JSON has no form for
        raise InvalidInput(f"An event cannot be recorded in the ledger: {exc}.",
                           details={"non_field_errors": [str(exc)]}) from None


def event_canonical(event: Any) -> bytes:
    """The canonical JSON of an event (a LedgerEvent, or any object with its attributes)."""
    return canonical_json({
        "agent": event.agent, "category": event.category, "cost_usd": usd_text(event.cost_usd),
        "data": _json_canonical(event.data), "duration_ms": event.duration_ms, "id": event.id,
        "idempotency_key": event.idempotency_key, "is_estimated": event.is_estimated,
        "iteration": event.iteration, "message": event.message, "meta": _json_canonical(event.meta),
        "model": event.model, "phase": event.phase, "session": event.session_id, "task_key": event.task_key,
        "timestamp": _utc(event.timestamp), "tokens_in": event.tokens_in, "tokens_out": event.tokens_out,
        "tokens_total": event.tokens_total, "type": event.type,
    })


def link_hash(prev_hash: str, canonical: bytes) -> str:
    return hashlib.sha256(prev_hash.encode("ascii") + canonical).hexdigest()


def ranges_digest(ranges: Iterable[Sequence[Any]]) -> str:
    """SHA-256 of a retention record's ranges: (first_id, last_id, events, prev_hash, last_hash) each."""
    return hashlib.sha256(canonical_json([list(r) for r in sorted(ranges)])).hexdigest()


# -- the head --------------------------------------------------------------------------------

_HEAD = LedgerChainHead._meta.db_table
_EVENTS = LedgerEvent._meta.db_table
_SESSIONS = Session._meta.db_table


def _head_lock(connection: BaseDatabaseWrapper) -> tuple[int, str]:
    """(newest id, newest hash), locked until the transaction ends. A missing head (a fresh or
    flushed database) starts at the genesis hash after the highest id there is."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT last_id, last_hash FROM {_HEAD} WHERE id = 1{lock}")  # names from _meta
        row = cursor.fetchone()
        if row is None:
            cursor.execute(f"INSERT INTO {_HEAD} (id, last_id, last_hash) "
                           f"SELECT 1, COALESCE(MAX(id), 0), %s FROM {_EVENTS} WHERE true ON CONFLICT (id) DO NOTHING",
                           [GENESIS_HASH])
            cursor.execute(f"SELECT last_id, last_hash FROM {_HEAD} WHERE id = 1{lock}")
            row = cursor.fetchone()
    return row[0], row[1]


def _head_advance(connection: BaseDatabaseWrapper, last_id: int, last_hash: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {_HEAD} SET last_id = %s, last_hash = %s WHERE id = 1", [last_id, last_hash])


def _sessions_key_share(connection: BaseDatabaseWrapper, session_ids: set[str]) -> None:
    """PostgreSQL: take the KEY SHARE locks the events' foreign keys would take, before the head.

    A transaction that holds a session FOR UPDATE (resume, purge) and then appends waits for the
    head; if the head's holder then waited for that session's key, neither would move.
    """
    if connection.vendor != "postgresql" or not session_ids:
        return
    placeholders = ", ".join(["%s"] * len(session_ids))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {_SESSIONS} WHERE id IN ({placeholders}) ORDER BY id FOR KEY SHARE",
                       sorted(session_ids))


def events_chain_insert(events: Sequence[LedgerEvent]) -> None:
    """Insert new events (unsaved, no id) as the next links of the chain, in the caller's order.

    Costs are rounded to the six decimals the column stores before they are hashed, so the hash is
    over exactly what the database keeps. Runs inside the caller's transaction (or its own).

    The chain head is the last lock: every row the transaction locks (sessions, tasks) must be locked
    before, and nothing written after, the events (on PostgreSQL a lock taken after the head by one
    transaction and before it by another deadlocks them).
    """
    if not events:
        return
    for event in events:
        if event.pk is not None:
            raise ValueError("ledger events get their ids from the chain; this one already has one")
        event.cost_usd = money(event.cost_usd)
    using = router.db_for_write(LedgerEvent)
    connection = connections[using]
    with transaction.atomic(using=using, savepoint=False):
        _sessions_key_share(connection, {event.session_id for event in events if event.session_id is not None})
        last_id, last_hash = _head_lock(connection)
        for event in events:
            last_id += 1
            event.id = last_id
            event.prev_hash = last_hash
            last_hash = event.hash = link_hash(last_hash, event_canonical(event))
        # The queryset's own bulk_create: the manager's (`LedgerEventManager`) is the way into this chain.
        LedgerEvent.objects.get_queryset().bulk_create(events)
        _head_advance(connection, last_id, last_hash)


def chain_head() -> tuple[int | None, str]:
    """The newest event's (id, hash); (None, GENESIS_HASH) before the first event."""
    head = LedgerChainHead.objects.filter(pk=1).values_list("last_id", "last_hash").first()
    if head is None or head[0] == 0:
        return None, GENESIS_HASH
    return head[0], head[1]
