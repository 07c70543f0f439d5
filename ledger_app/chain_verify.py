"""Walk the ledger's hash chain (`manage.py ledger_verify`): a read, nothing is written.

The walk reads the head first and checks the events up to it, in id order, a chunk at a time (no
transaction: on SQLite one would hold the write lock for the whole walk); events appended meanwhile
are past the head and left for the next walk. For each event it checks that `prev_hash` is the hash
of the event before it, or that retention ranges bridge the hole between them, and that `hash` is the
hash of its content; at the end, that the head names the last event walked. The first failure is the
answer.
"""

from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ledger_app.chain import CHAIN_FIELDS, GENESIS_HASH, event_canonical, link_hash, ranges_digest
from ledger_app.models import LEDGER_PURGED, LedgerChainHead, LedgerEvent, RetentionRange

_COLUMNS = [*dict.fromkeys(CHAIN_FIELDS.values()), "prev_hash", "hash"]
_Row = namedtuple("_Row", _COLUMNS)  # the attributes event_canonical reads
_RANGE_COLUMNS = ("first_id", "last_id", "events", "prev_hash", "last_hash")


@dataclass(frozen=True)
class Retention:
    """A retention record met on the walk: what a purge removed, in its own words."""

    event_id: int
    timestamp: str
    events_removed: int
    first_id: int
    last_id: int
    ranges: int
    sessions: int
    reason: str


@dataclass
class ChainReport:
    events: int = 0
    first_id: int | None = None
    head_id: int | None = None
    head_hash: str = GENESIS_HASH
    broken_at: int | None = None  # the first event that fails (None: the chain head itself, or intact)
    problem: str = ""
    retentions: list[Retention] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.problem


def _ranges_by_prev_hash(report: ChainReport) -> dict[str, tuple[Any, ...]] | None:
    """Every retention range, keyed by the prev_hash it starts from, once each record's ranges were
    checked against its `ranges_sha256` (a range added, changed or removed is a break there)."""
    by_record: dict[int, list[tuple[Any, ...]]] = {}
    for retention_event_id, *columns in RetentionRange.objects.order_by("retention_event_id", "first_id") \
            .values_list("retention_event_id", *_RANGE_COLUMNS):
        by_record.setdefault(retention_event_id, []).append(tuple(columns))
    records = dict(LedgerEvent.objects.filter(type=LEDGER_PURGED, session__isnull=True).values_list("id", "data"))
    ranges: dict[str, tuple[Any, ...]] = {}
    for record_id in sorted(set(records) | set(by_record)):
        data = records.get(record_id) or {}
        record_ranges = by_record.get(record_id, [])
        if record_id not in records or ranges_digest(record_ranges) != data.get("ranges_sha256"):
            report.broken_at = record_id
            report.problem = (f"the retention ranges of event #{record_id} do not match the ranges_sha256 "
                              "it records: a range was added, changed or removed")
            return None
        for record_range in record_ranges:
            ranges[record_range[3]] = record_range
    return ranges


def _bridged(ranges: dict[str, tuple[Any, ...]], start_hash: str, end_hash: str, after_id: int,
             before_id: int) -> bool:
    """Whether retention ranges lead from `start_hash` to `end_hash`, all between the two ids."""
    current, steps = start_hash, 0
    while current != end_hash:
        record_range = ranges.get(current)
        steps += 1
        if record_range is None or steps > len(ranges) or not after_id < record_range[0] <= record_range[1] < before_id:
            return False
        current = record_range[4]
    return True


def _retention(row: Any) -> Retention:
    data = row.data if isinstance(row.data, dict) else {}
    return Retention(event_id=row.id, timestamp=row.timestamp.isoformat(), events_removed=data.get("events_removed", 0),
                     first_id=data.get("first_id", 0), last_id=data.get("last_id", 0), ranges=data.get("ranges", 0),
                     sessions=len(data.get("sessions", [])), reason=str(data.get("reason", "")))


def chain_verify(*, progress: Callable[[int, int], None] | None = None, chunk_size: int = 5000) -> ChainReport:
    """Check the whole chain up to its head; `progress(done, total)` is called after each chunk."""
    report = ChainReport()
    head = LedgerChainHead.objects.filter(pk=1).values_list("last_id", "last_hash").first()
    last_id = head[0] if head else LedgerEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
    total = LedgerEvent.objects.filter(id__lte=last_id).count()
    ranges = _ranges_by_prev_hash(report)
    if ranges is None:
        return report
    expected_hash, previous_id = GENESIS_HASH, 0
    while True:
        rows = list(LedgerEvent.objects.filter(id__gt=previous_id, id__lte=last_id).order_by("id")
                    .values_list(*_COLUMNS)[:chunk_size])
        if not rows:
            break
        for values in rows:
            row = _Row._make(values)
            if row.prev_hash != expected_hash and not _bridged(ranges, expected_hash, row.prev_hash,
                                                                previous_id, row.id):
                report.broken_at = row.id
                report.problem = _link_problem(row, previous_id)
                return report
            if link_hash(row.prev_hash, event_canonical(row)) != row.hash:
                report.broken_at = row.id
                report.problem = f"event #{row.id} does not match its hash: it was changed after it was recorded"
                return report
            if row.type == LEDGER_PURGED and row.session_id is None:
                report.retentions.append(_retention(row))
            report.first_id = report.first_id or row.id
            report.events += 1
            expected_hash, previous_id = row.hash, row.id
        if progress is not None:
            progress(report.events, total)
    report.head_id, report.head_hash = (previous_id or None), expected_hash
    if head is None and report.events:
        report.problem = "the chain head record is missing: it was deleted outside the ledger's services"
    elif head is not None and (head[0] != previous_id or head[1] != expected_hash):
        report.problem = (f"the chain head names event #{head[0]} ({head[1][:16]}…) but the newest event is "
                          f"#{previous_id}: the newest events were removed outside the retention path")
    return report


def _link_problem(row: Any, previous_id: int) -> str:
    if row.prev_hash == GENESIS_HASH:
        return (f"event #{row.id} starts the chain again (its prev_hash is the genesis hash) after event "
                f"#{previous_id}: the chain head was deleted outside the ledger's services")
    if not previous_id:
        return (f"event #{row.id} is the first event but links to a predecessor that no retention record "
                "accounts for: earlier events were removed outside the retention path")
    return (f"event #{row.id} does not link to event #{previous_id} and no retention record accounts for "
            f"the difference: events between them were removed (or #{previous_id} was changed) outside "
            "the retention path")
