"""The ledger's hash chain: every write path links its events, ledger_verify finds every way around it."""

import hashlib
import json
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app import services
from ledger_app.append_only import HEAD_TABLE, TABLE
from ledger_app.chain import CHAIN_FIELDS, GENESIS_HASH, UNHASHED_FIELDS, chain_head
from ledger_app.chain_verify import chain_verify
from ledger_app.models import LEDGER_PURGED, LedgerChainHead, LedgerEvent, RetentionRange
from ralphsite.core.errors import InvalidInput
from sessions_app.models import SessionStatus
from sessions_app.services.sessions import session_finish
from tests.ledger_app.factories import ledger_verify_run, make_event, make_session
from tests.ledger_guards import ledger_guards_off

pytestmark = pytest.mark.django_db


def _raw(sql: str, params: list | None = None) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params or [])


def _chain() -> list[tuple[int, str, str]]:
    return list(LedgerEvent.objects.order_by("id").values_list("id", "prev_hash", "hash"))


def _guards_off_delete(sql: str, params: list) -> None:
    """What the tables' owner can do: delete rows past the append-only triggers."""
    with ledger_guards_off(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_it_hashes_every_column_but_the_hashes() -> None:
    columns = {field.attname for field in LedgerEvent._meta.concrete_fields}
    assert set(CHAIN_FIELDS.values()) | UNHASHED_FIELDS == columns


def test_it_links_events_of_every_write_path_into_one_chain(api: APIClient) -> None:
    session = make_session()
    api.post("/api/v1/events/", {"session": session.id, "type": "x-one"}, format="json")
    api.post("/api/v1/events/", [{"session": session.id, "type": "x-many", "data": {"i": i}} for i in range(3)],
             format="json")
    api.post("/api/v1/issues/record/", {"session": session.id, "task_key": "t", "kind": "lint", "signature": "s",
                                        "message": "m"}, format="json")
    session_finish(session=session, status=SessionStatus.COMPLETED)  # an audit event
    make_event(session)  # LedgerEvent.objects.create
    chain = _chain()
    assert [event_id for event_id, _, _ in chain] == list(range(1, 8))
    assert chain[0][1] == GENESIS_HASH
    assert all(chain[n][1] == chain[n - 1][2] for n in range(1, len(chain)))
    assert chain_verify().intact


def test_it_hashes_exactly_what_the_readme_documents() -> None:
    event = make_event(make_session(), message="héllo\n", data={"b": [1, "x"], "a": {"z": True, "y": None}},
                       cost_usd=Decimal("0.25"), tokens_in=3, timestamp=timezone.now().replace(microsecond=0))
    content = {"agent": "", "category": "", "cost_usd": "0.250000",
               "data": {"a": {"y": None, "z": True}, "b": [1, "x"]}, "duration_ms": None, "id": event.id,
               "idempotency_key": "", "is_estimated": False, "iteration": None,
               "message": "héllo\n", "meta": {}, "model": "", "phase": "", "session": event.session_id,
               "task_key": "task-0", "timestamp": event.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
               "tokens_in": 3, "tokens_out": 0, "tokens_total": 0, "type": "task_started"}
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert event.hash == hashlib.sha256(GENESIS_HASH.encode() + canonical).hexdigest()


def test_it_hashes_json_numbers_as_both_databases_read_them_back() -> None:
    # PostgreSQL's jsonb reads 1e16 back as an integer and -0.0 as 0; SQLite keeps what json.dumps wrote.
    data = {"big_float": 1e16, "huge_float": 1.5e300, "whole": 2.0, "tiny": 1e-7, "negative_zero": -0.0,
            "beyond_64_bits": 10**30, "nested": [{"x": 0.1}, [3.0]]}
    # the largest six-place cost SQLite's money columns hold (whole 1e-10 USD in 64 bits)
    make_event(make_session(), data=data, meta={"k": 1.0}, cost_usd=Decimal("922337203.685477"))
    make_event(make_session(), cost_usd="-0")
    assert chain_verify().intact


def test_it_answers_the_head(api: APIClient) -> None:
    assert api.get("/api/v1/events/head/").json() == {"id": None, "hash": GENESIS_HASH}
    make_event(make_session())
    newest = make_event(make_session())
    assert api.get("/api/v1/events/head/").json() == {"id": newest.id, "hash": newest.hash}
    assert chain_head() == (newest.id, newest.hash)


def test_it_verify_reports_an_intact_chain_and_exits_0() -> None:
    events = [make_event(make_session(), n) for n in range(3)]
    code, out, err = ledger_verify_run()
    assert code == 0, err
    assert f"3 events, #{events[0].id} to #{events[-1].id}" in out and events[-1].hash in out
    assert "ledger_verify: 100% (3/3)" in err  # plain progress lines when not on a terminal


def test_it_verify_names_an_event_changed_behind_the_triggers_back() -> None:
    session = make_session()
    events = [make_event(session, n) for n in range(4)]
    with ledger_guards_off(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET tokens_in = 999 WHERE id = %s", [events[2].id])
    code, _, err = ledger_verify_run()
    assert code == 1
    assert f"BROKEN at event #{events[2].id}" in err and "was changed" in err


def test_it_refuses_insert_or_replace_over_an_existing_event() -> None:
    if connection.vendor != "sqlite":
        assert connection.vendor == "postgresql"
        with pytest.raises(IntegrityError, match="append-only"):  # ON CONFLICT DO UPDATE is an UPDATE
            event = make_event(make_session())
            _raw(f"INSERT INTO {TABLE} (id, session_id, timestamp, type, category, task_key, agent, model, phase, "
                 "tokens_in, tokens_out, tokens_total, cost_usd, is_estimated, message, data, meta, idempotency_key, "
                 "prev_hash, hash) SELECT id, session_id, timestamp, type, category, task_key, agent, model, phase, "
                 "tokens_in, tokens_out, tokens_total, cost_usd, is_estimated, 'rewritten', data, meta, "
                 f"idempotency_key, prev_hash, hash FROM {TABLE} WHERE id = %s "
                 "ON CONFLICT (id) DO UPDATE SET message = EXCLUDED.message", [event.id])
        return
    session = make_session()
    event = make_event(session, idempotency_key="key-1")
    columns = ("session_id, timestamp, type, category, task_key, agent, model, phase, tokens_in, tokens_out, "
               "tokens_total, cost_usd, is_estimated, message, data, meta, idempotency_key, prev_hash, hash")
    rewritten = columns.replace("message", "'rewritten'")
    for verb in ("INSERT OR REPLACE INTO", "REPLACE INTO"):
        # Over its id…
        with pytest.raises(IntegrityError, match="append-only"):
            _raw(f"{verb} {TABLE} (id, {columns}) SELECT id, {rewritten} FROM {TABLE} WHERE id = %s", [event.id])
        # …and over its idempotency key, with a new id.
        with pytest.raises(IntegrityError, match="append-only"):
            _raw(f"{verb} {TABLE} (id, {columns}) SELECT id + 100, {rewritten} FROM {TABLE} WHERE id = %s",
                 [event.id])
    assert LedgerEvent.objects.get().message == "event 0"
    assert chain_verify().intact


def test_it_verify_finds_a_delete_made_past_the_triggers() -> None:
    events = [make_event(make_session(), n) for n in range(5)]
    _guards_off_delete(f"DELETE FROM {TABLE} WHERE id = %s", [events[2].id])
    code, _, err = ledger_verify_run()
    assert code == 1
    assert f"BROKEN at event #{events[3].id}" in err and f"does not link to event #{events[1].id}" in err


def test_it_verify_finds_the_newest_events_deleted_past_the_triggers() -> None:
    events = [make_event(make_session(), n) for n in range(5)]
    _guards_off_delete(f"DELETE FROM {TABLE} WHERE id >= %s", [events[3].id])
    # The head cannot be moved back over the hole.
    with pytest.raises(IntegrityError, match="ledger_chain_head"):
        _raw(f"UPDATE {HEAD_TABLE} SET last_id = %s, last_hash = %s", [events[2].id, events[2].hash])
    report = chain_verify()
    assert not report.intact and f"names event #{events[4].id}" in report.problem
    assert f"newest event is #{events[2].id}" in report.problem


def test_it_verify_finds_a_head_deleted_and_started_again() -> None:
    events = [make_event(make_session(), n) for n in range(3)]
    _guards_off_delete(f"DELETE FROM {TABLE} WHERE id = %s", [events[2].id])
    _guards_off_delete(f"DELETE FROM {HEAD_TABLE}", [])
    assert "head record is missing" in chain_verify().problem
    restarted = make_event(make_session())  # a new head starts at the genesis hash
    assert restarted.prev_hash == GENESIS_HASH
    report = chain_verify()
    assert report.broken_at == restarted.id and "starts the chain again" in report.problem


def test_it_refuses_a_second_head_and_a_head_not_at_genesis() -> None:
    make_event(make_session())
    with pytest.raises(IntegrityError, match="ledger_chain_head"):
        _raw(f"INSERT INTO {HEAD_TABLE} (id, last_id, last_hash) VALUES (2, 0, %s)", [GENESIS_HASH])
    _guards_off_delete(f"DELETE FROM {HEAD_TABLE}", [])
    with pytest.raises(IntegrityError, match="ledger_chain_head"):
        _raw(f"INSERT INTO {HEAD_TABLE} (id, last_id, last_hash) VALUES (1, 1, %s)", ["a" * 64])


def test_it_purges_through_a_retention_record_that_verify_bridges_and_names() -> None:
    now = timezone.now()
    old = make_session(status=SessionStatus.COMPLETED, ended_at=now - timedelta(days=100))
    older = make_session(status=SessionStatus.COMPLETED, ended_at=now - timedelta(days=200))
    kept = make_session()
    for n in range(12):  # interleaved: the purge leaves several holes
        make_event((old, kept, older)[n % 3], n)
    record = services.ledger_events_purge(session_ids=[older.id], reason="first purge")
    assert record.session_id is None and record.type == LEDGER_PURGED
    assert record.data["events_removed"] == 4 and record.data["ranges"] == 4
    run = services.sessions_purge(older_than=timedelta(days=90))  # `old`: its holes border the first purge's
    # Each of its runs borders a hole of the first purge: verify follows both records' ranges.
    assert run.retention_event.data["events_removed"] == 4 and run.retention_event.data["ranges"] == 4
    assert LedgerEvent.objects.exclude(session__isnull=True).count() == 4
    code, out, err = ledger_verify_run()
    assert code == 0, err
    assert f"retention record #{record.id}" in out and "removed 4 events" in out and "first purge" in out
    assert f"retention record #{run.retention_event_id}" in out and "purge_sessions" in out
    assert chain_head()[0] == LedgerEvent.objects.order_by("-id").first().id


def test_it_verify_finds_a_retention_range_forged_to_cover_a_delete() -> None:
    session = make_session(status=SessionStatus.COMPLETED)
    events = [make_event(make_session(), n) for n in range(4)]
    make_event(session)
    record = services.ledger_events_purge(session_ids=[session.id], reason="legit")
    _guards_off_delete(f"DELETE FROM {TABLE} WHERE id = %s", [events[1].id])
    RetentionRange.objects.create(retention_event=record, first_id=events[1].id, last_id=events[1].id, events=1,
                                  prev_hash=events[1].prev_hash, last_hash=events[1].hash)
    report = chain_verify()
    assert report.broken_at == record.id and "ranges_sha256" in report.problem


def test_it_purging_sessions_without_events_writes_nothing() -> None:
    assert services.ledger_events_purge(session_ids=[make_session().id], reason="none") is None
    assert services.ledger_events_purge(session_ids=[], reason="none") is None
    assert not LedgerEvent.objects.exists()


def test_it_refuses_json_nested_too_deeply_to_hash_with_a_400() -> None:
    # The API's parser already refuses bodies nested past 64 levels; the chain guards what the
    # server writes itself (orjson, which hashes, writes at most 255 levels).
    nested: dict = {}
    for _ in range(200):
        nested = {"n": nested}
    session = make_session()
    with pytest.raises(InvalidInput, match="nested deeper"), transaction.atomic():
        services.event_append(session_id=session.id, type="x-deep", data=nested)
    assert not LedgerEvent.objects.exists()


def test_it_refuses_an_event_inserted_past_the_chain() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEvent.objects.get_queryset().bulk_create([LedgerEvent(session=make_session(), type="x-raw")])
    assert not LedgerChainHead.objects.filter(last_id__gt=0).exists()


def test_it_verify_checks_an_anchor_recorded_elsewhere(api: APIClient) -> None:
    make_event(make_session())
    head = api.get("/api/v1/events/head/").json()
    make_event(make_session())
    out, err = StringIO(), StringIO()
    call_command("ledger_verify", "--anchor", f"{head['id']}:{head['hash']}", stdout=out, stderr=err)
    assert "intact" in out.getvalue()
    with pytest.raises(SystemExit):
        call_command("ledger_verify", "--anchor", f"{head['id']}:{'f' * 64}", stdout=out, stderr=err)
    assert f"the anchored event #{head['id']} has hash" in err.getvalue()
