"""Anchors outside the database (issue #28 §3): the tamperings the chain alone cannot see, each done
past the append-only triggers the way the tables' owner could, found by `ledger_verify` with no
arguments once an anchor was written."""

import hashlib
import hmac
import json
import logging
import stat
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from ledger_app.anchor import ANCHOR_VERSION, anchor_dir, anchor_key
from ledger_app.append_only import HEAD_TABLE, TABLE
from ledger_app.chain import GENESIS_HASH, canonical_json, event_canonical, link_hash
from ledger_app.chain_verify import chain_verify
from ledger_app.models import LedgerEvent
from ralphsite.core.upkeep_jobs import upkeep_jobs
from sessions_app.models import SessionStatus
from tests.ledger_app.factories import ledger_verify_run, make_event, make_session
from tests.ledger_guards import ledger_guards_off

pytestmark = pytest.mark.django_db


def _anchor() -> Path:
    out = StringIO()
    call_command("ledger_anchor", stdout=out)
    return Path(out.getvalue().rsplit(" in ", 1)[1].strip())


def _anchor_files() -> list[Path]:
    return sorted(anchor_dir().glob("ledger-anchor-*.json"))


def _events(count: int) -> list[LedgerEvent]:
    return [make_event(make_session(), n) for n in range(count)]


def _head_set(cursor, event_id: int, event_hash: str) -> None:
    """Delete the head and insert it again, moved onto `event_id`."""
    cursor.execute(f"DELETE FROM {HEAD_TABLE}")
    cursor.execute(f"INSERT INTO {HEAD_TABLE} (id, last_id, last_hash) VALUES (1, 0, %s)", [GENESIS_HASH])
    cursor.execute(f"UPDATE {HEAD_TABLE} SET last_id = %s, last_hash = %s WHERE id = 1", [event_id, event_hash])


def _rewrite_from(first: LedgerEvent) -> None:
    """Delete events `first`…newest, insert them again changed with recomputed hashes, move the head
    onto the new newest event: all in one transaction past the triggers."""
    with ledger_guards_off(), connection.cursor() as cursor:
        rows = list(LedgerEvent.objects.filter(id__gte=first.id).order_by("id"))
        cursor.execute(f"DELETE FROM {TABLE} WHERE id >= %s", [first.id])
        previous = first.prev_hash
        for row in rows:
            row.message = f"rewritten: {row.message}"
            row.prev_hash = previous
            row.hash = previous = link_hash(previous, event_canonical(row))
        LedgerEvent.objects.get_queryset().bulk_create(rows)
        _head_set(cursor, rows[-1].id, rows[-1].hash)


def test_it_anchors_the_head_in_a_signed_file_only_its_owner_reads() -> None:
    newest = _events(3)[-1]
    path = _anchor()
    assert path.parent == Path(settings.RALPH_LEDGER_ANCHOR_DIR) and stat.S_IMODE(path.stat().st_mode) == 0o600
    document = json.loads(path.read_text())
    assert {key: document[key] for key in ("version", "event_id", "hash", "events")} == \
        {"version": ANCHOR_VERSION, "event_id": newest.id, "hash": newest.hash, "events": 3}
    signed = {key: document[key] for key in ("version", "event_id", "hash", "events", "anchored_at")}
    key = anchor_key().encode()
    assert document["signature"] == hmac.new(key, canonical_json(signed), hashlib.sha256).hexdigest()
    assert not list(path.parent.glob(".tmp-*"))
    code, out, err = ledger_verify_run()
    assert code == 0, err
    assert f"agrees with 1 anchors in {anchor_dir()}" in out and f"names event #{newest.id}" in out


def test_it_verifies_links_only_and_says_so_without_an_anchor() -> None:
    _events(2)
    code, out, _ = ledger_verify_run()
    assert code == 0 and f"no anchors in {anchor_dir()}" in out


def test_it_finds_events_rewritten_with_recomputed_hashes_and_the_head_moved() -> None:
    events = _events(6)
    _anchor()
    _rewrite_from(events[3])
    assert chain_verify().intact  # the database alone cannot tell
    code, _, err = ledger_verify_run()
    assert code == 1
    assert f"event #{events[5].id} has hash" in err and f"recorded {events[5].hash}: the event was rewritten" in err


def test_it_finds_the_newest_events_removed_by_hand_and_the_head_moved_back() -> None:
    events = _events(6)
    _anchor()
    # A purge by hand, without the retention record the purge path writes.
    with ledger_guards_off(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE} WHERE id >= %s", [events[3].id])
        _head_set(cursor, events[2].id, events[2].hash)
    assert chain_verify().intact
    code, _, err = ledger_verify_run()
    assert code == 1
    assert f"the chain head is event #{events[2].id}" in err and f"names event #{events[5].id}" in err
    assert "moved back" in err and f"event #{events[5].id}" in err and "no retention record removed it" in err


def test_it_finds_a_ledger_wiped_with_its_head() -> None:
    events = _events(4)
    _anchor()
    with ledger_guards_off(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE}")
        cursor.execute(f"DELETE FROM {HEAD_TABLE}")
    assert chain_verify().intact and not chain_verify().events  # "no events yet"
    code, _, err = ledger_verify_run()
    assert code == 1 and "the ledger has no events, but the anchor written at" in err
    assert f"names event #{events[3].id} (4 events)" in err


def test_it_finds_a_ledger_wiped_and_started_again() -> None:
    events = _events(3)
    _anchor()
    with ledger_guards_off(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE}")
        cursor.execute(f"DELETE FROM {HEAD_TABLE}")
    # New events start a new chain at the genesis hash, from id 1 again: the anchored id is reused.
    restarted = _events(3)
    assert chain_verify().intact and restarted[-1].id == events[-1].id
    code, _, err = ledger_verify_run()
    assert code == 1 and f"event #{events[-1].id} has hash {restarted[-1].hash}" in err


def test_it_reports_an_anchor_whose_signature_does_not_match() -> None:
    events = _events(2)
    path = _anchor()
    document = json.loads(path.read_text())
    path.write_text(json.dumps({**document, "event_id": events[0].id, "hash": events[0].hash}))
    code, _, err = ledger_verify_run()
    assert code == 1 and f"anchor file {path}: bad signature" in err
    with pytest.raises(CommandError, match="bad signature"):
        call_command("ledger_anchor", stdout=StringIO())


def test_it_checks_the_newest_anchor_and_every_older_one() -> None:
    events = _events(3)
    _anchor()
    newer = make_event(make_session())
    _anchor()
    assert len(_anchor_files()) == 2
    code, out, err = ledger_verify_run()
    assert code == 0 and "agrees with 2 anchors" in out and f"names event #{newer.id}" in out, err
    _rewrite_from(events[1])  # changes the older anchor's event too
    code, _, err = ledger_verify_run()
    assert code == 1 and f"event #{events[2].id} has hash" in err and f"event #{newer.id} has hash" in err


def test_it_accepts_anchored_events_a_retention_record_removed_and_anchors_after_a_purge() -> None:
    ended = make_session(status=SessionStatus.COMPLETED, ended_at=timezone.now() - timedelta(days=100))
    make_event(make_session())
    anchored = make_event(ended)
    _anchor()
    out = StringIO()
    call_command("purge_sessions", "--older-than", "90d", stdout=out)
    assert "Anchored the ledger's head" in out.getvalue() and len(_anchor_files()) == 2
    code, out_text, err = ledger_verify_run()
    assert code == 0, err
    assert f"anchored event #{anchored.id}" in out_text and "was removed by the retention record" in out_text


def test_it_does_not_anchor_over_a_ledger_that_contradicts_an_anchor(caplog: pytest.LogCaptureFixture) -> None:
    events = _events(4)
    _anchor()
    _rewrite_from(events[2])
    make_event(make_session())  # the head moved: the upkeep job would anchor it
    with pytest.raises(CommandError, match="was rewritten"):
        call_command("ledger_anchor", stdout=StringIO())
    job = next(job for job in upkeep_jobs() if job.name == "ledger_anchor")
    with caplog.at_level(logging.ERROR, logger="ledger_app.anchor"):
        job.run()
    assert "Ledger anchor not written" in caplog.text and "was rewritten" in caplog.text
    assert len(_anchor_files()) == 1
    assert ledger_verify_run()[0] == 1


def test_it_upkeep_job_anchors_when_the_head_moved_and_not_otherwise() -> None:
    job = next(job for job in upkeep_jobs() if job.name == "ledger_anchor")
    assert job.exclusive and job.every_seconds == settings.RALPH_LEDGER_ANCHOR_EVERY == 300
    job.run()  # an empty ledger is anchored too: emptying it later is then found
    assert [json.loads(path.read_text())["event_id"] for path in _anchor_files()] == [0]
    job.run()
    assert len(_anchor_files()) == 1
    first = make_event(make_session())
    job.run()
    job.run()
    assert [json.loads(path.read_text())["event_id"] for path in _anchor_files()] == [0, first.id]
    assert ledger_verify_run()[0] == 0
