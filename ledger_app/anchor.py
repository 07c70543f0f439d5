"""Anchors: the ledger chain's head written outside the database, signed with a key the database lacks.

The chain (`ledger_app.chain`) shows any change an insider makes to recorded events unless they
recompute it from the change on, and move the head with it; only something kept outside the
database tells that rewrite from the real history. An anchor is that: one small JSON file in
`settings.RALPH_LEDGER_ANCHOR_DIR` (by default `<RALPH_DATA_DIR>/anchors`; point it at another
machine's mount) naming the head when it was written:

    {"version": 1, "event_id": 1234, "hash": "<64 hex>", "events": 1200,
     "anchored_at": "2026-11-28T01:45:00.250000Z", "signature": "<64 hex>"}

`signature` is HMAC-SHA256, keyed with `settings.RALPH_LEDGER_ANCHOR_KEY` (the environment variable,
or the file `ledger_anchor_key` beside `secret_key` in the data dir, never the database), over the
canonical JSON (`ledger_app.chain.canonical_json`) of the other five fields. `event_id` 0 with the
genesis hash anchors an empty ledger. `events` is how many events the ledger held up to `event_id`.

`manage.py ledger_anchor` writes one; the server's upkeep thread writes one every
`RALPH_LEDGER_ANCHOR_EVERY` when the head moved (one process of the deployment at a time), and a
purge (`purge_sessions`) writes one after it. A new anchor is written only over a chain that agrees
with every anchor already there (`anchors_check`): a tampered ledger is never anchored by itself.
Files are written atomically (a temporary file renamed over), mode 0600; the newest `ANCHORS_KEPT`
are kept.

`manage.py ledger_verify` checks the chain against every anchor it finds (`anchors_check`): the
newest anchor's head must not be ahead of the ledger's (an emptied ledger, a head moved back), and
every anchored event must still have the anchored hash, or have been removed by a retention record
(a purge is itself a record in the chain: verify lists it). A file whose signature does not match is
reported as such.
"""

import hashlib
import hmac
import json
import logging
import os
import tempfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from ledger_app.chain import GENESIS_HASH, canonical_json, chain_head
from ledger_app.models import LedgerEvent, RetentionRange
from ralphsite.core.secrets import secret_key_load_or_create

logger = logging.getLogger(__name__)

ANCHOR_VERSION = 1
ANCHORS_KEPT = 1000  # at one every 5 minutes of activity, three and a half days; a file is ~300 bytes
_PREFIX = "ledger-anchor-"
_SIGNED_FIELDS = ("version", "event_id", "hash", "events", "anchored_at")


@dataclass(frozen=True)
class Anchor:
    event_id: int  # 0: the ledger had no events
    hash: str
    events: int
    anchored_at: str
    path: Path | None = None

    def payload(self) -> dict[str, Any]:
        return {"version": ANCHOR_VERSION, "event_id": self.event_id, "hash": self.hash, "events": self.events,
                "anchored_at": self.anchored_at}

    @property
    def order(self) -> tuple[int, str]:
        """Newest first by head, then by time (ids only grow: a purge appends its record)."""
        return self.event_id, self.anchored_at

    def __str__(self) -> str:
        return f"the anchor written at {self.anchored_at} ({self.path.name if self.path else '-'})"


@dataclass
class AnchorCheck:
    anchors: int = 0
    newest: Anchor | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # anchored events a retention record removed


class AnchorRefused(Exception):
    """The chain contradicts an anchor already written: no new anchor is written over it."""


def anchor_dir() -> Path:
    return Path(settings.RALPH_LEDGER_ANCHOR_DIR).expanduser()


def anchor_key() -> str:
    """RALPH_LEDGER_ANCHOR_KEY, or the data dir's `ledger_anchor_key`, created (0600) on first use: importing
    the settings writes nothing."""
    return settings.RALPH_LEDGER_ANCHOR_KEY or secret_key_load_or_create(Path(settings.DATA_DIR) / "ledger_anchor_key")


def _signature(payload: dict[str, Any]) -> str:
    return hmac.new(anchor_key().encode(), canonical_json(payload), hashlib.sha256).hexdigest()


def _anchor_parse(path: Path) -> Anchor:
    """The anchor in a file; ValueError saying what is wrong with it (bad signature included)."""
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ValueError(f"unreadable ({exc})") from None
    if not isinstance(document, dict) or document.get("version") != ANCHOR_VERSION:
        raise ValueError(f"not a version {ANCHOR_VERSION} ledger anchor")
    payload = {name: document.get(name) for name in _SIGNED_FIELDS}
    signature = document.get("signature")
    if not isinstance(signature, str) or not hmac.compare_digest(signature, _signature(payload)):
        raise ValueError("bad signature: altered, or written with another RALPH_LEDGER_ANCHOR_KEY")
    return Anchor(event_id=payload["event_id"], hash=payload["hash"], events=payload["events"],
                  anchored_at=payload["anchored_at"], path=path)


def _anchor_files(directory: Path) -> list[Path]:
    """The anchor files, oldest first (their names start with the time they were written)."""
    if not directory.is_dir():
        return []
    return sorted(path for path in directory.iterdir() if path.name.startswith(_PREFIX) and path.suffix == ".json")


def anchors_read(directory: Path | None = None) -> tuple[list[Anchor], list[str]]:
    """(valid anchors, one line per file that is not one: its name and what is wrong)."""
    anchors, bad = [], []
    for path in _anchor_files(directory or anchor_dir()):
        try:
            anchors.append(_anchor_parse(path))
        except ValueError as exc:
            bad.append(f"anchor file {path}: {exc}")
    return anchors, bad


def anchors_check(anchors: list[Anchor], *, head_id: int | None) -> AnchorCheck:
    """Check the ledger against anchors; `head_id` is the ledger's newest event (None: no events)."""
    check = AnchorCheck(anchors=len(anchors))
    if not anchors:
        return check
    newest = check.newest = max(anchors, key=lambda anchor: anchor.order)
    if newest.event_id and not head_id:
        check.problems.append(f"the ledger has no events, but {newest} names event #{newest.event_id} "
                              f"({newest.events} events): the events and the chain head were removed")
    elif (head_id or 0) < newest.event_id:
        check.problems.append(f"the chain head is event #{head_id}, but {newest} names event #{newest.event_id}: "
                              "the head was moved back over removed events")
    anchored = [anchor for anchor in anchors if anchor.event_id]
    stored = dict(LedgerEvent.objects.filter(id__in={anchor.event_id for anchor in anchored})
                  .values_list("id", "hash"))
    for anchor in sorted(anchored, key=lambda anchor: anchor.order):
        if anchor.event_id in stored:
            if stored[anchor.event_id] != anchor.hash:
                check.problems.append(f"event #{anchor.event_id} has hash {stored[anchor.event_id]}, but {anchor} "
                                      f"recorded {anchor.hash}: the event was rewritten")
            continue
        purge = RetentionRange.objects.filter(first_id__lte=anchor.event_id, last_id__gte=anchor.event_id).first()
        if purge is None:
            check.problems.append(f"event #{anchor.event_id}, named by {anchor}, is not in the ledger and no "
                                  "retention record removed it")
        else:
            check.notes.append(f"anchored event #{anchor.event_id} ({anchor}) was removed by the retention "
                               f"record #{purge.retention_event_id}")
    return check


def _head_now() -> Anchor:
    with transaction.atomic():
        event_id, event_hash = chain_head()
        events = LedgerEvent.objects.filter(id__lte=event_id).count() if event_id else 0
    return Anchor(event_id=event_id or 0, hash=event_hash if event_id else GENESIS_HASH, events=events,
                  anchored_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


def _write_atomically(directory: Path, name: str, content: bytes) -> Path:
    """Write to a temporary file (mkstemp: mode 0600), flush it to disk, rename it over `name`."""
    directory.mkdir(parents=True, mode=0o700, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        path = directory / name
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    directory_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(directory_fd)  # the rename itself survives a crash
    finally:
        os.close(directory_fd)
    return path


def ledger_anchor(*, only_if_moved: bool = False) -> Anchor | None:
    """Write the chain head as a signed anchor; None when `only_if_moved` and the newest anchor
    already names it. AnchorRefused when the ledger contradicts an anchor already written."""
    directory = anchor_dir()
    anchors, bad = anchors_read(directory)
    head = _head_now()
    newest = max(anchors, key=lambda anchor: anchor.order) if anchors else None
    if only_if_moved and newest is not None and (newest.event_id, newest.hash) == (head.event_id, head.hash):
        return None
    problems = bad + anchors_check(anchors, head_id=head.event_id or None).problems
    if problems:
        raise AnchorRefused("; ".join(problems))
    payload = head.payload()
    document = {**payload, "signature": _signature(payload)}
    compact_time = head.anchored_at.replace("-", "").replace(":", "").replace(".", "")
    path = _write_atomically(directory, f"{_PREFIX}{compact_time}-{head.event_id}.json",
                             json.dumps(document, indent=1).encode() + b"\n")
    for old in _anchor_files(directory)[:-ANCHORS_KEPT]:
        old.unlink(missing_ok=True)
    return replace(head, path=path)


def ledger_anchor_when_moved() -> None:
    """The upkeep job: anchor the head if it moved; a ledger that contradicts an anchor is logged
    (every run, until an operator looks), never anchored."""
    try:
        ledger_anchor(only_if_moved=True)
    except AnchorRefused as exc:
        logger.error("Ledger anchor not written: %s. Run manage.py ledger_verify.", exc)
