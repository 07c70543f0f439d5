"""Costs with the precision the seeds store (issue #26 §5): USD keeps 10 decimal places on every door and
both backends, so ralphy's REAL per-call cost 1.5e-07 (a token of a $0.15/M model) is stored and read back
exactly; an amount with 11 places, or past what the backend's columns hold, is a 400; the text keeps six
places at least, so every amount of six places or fewer reads (and hashes, in the ledger chain) as before."""

import hashlib
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from rest_framework.test import APIClient

from ledger_app.append_only import installed_triggers
from ledger_app.chain import GENESIS_HASH, canonical_json
from ledger_app.chain_verify import chain_verify
from ledger_app.migrations.frozen.event_types_v1 import NAME as TYPE_RULE
from ledger_app.models import LedgerEvent, ModelPrice, TokenUsage
from ledger_app.usage_days import USAGE_TABLE
from ralphsite.core.models import SeedRow
from ralphsite.core.money import USD_UNIT, usd_max, usd_text
from ralphsite.tokens.services import MintedToken
from sessions_app.models import Session
from tests.ledger_app.factories import make_event
from tests.mcp.conftest import mcp_agent
from tests.seed_io.helpers import file_rows, import_seed, seed_database
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db
SUB_MICRO = 1.5e-07  # ralphy's REAL: one token of a $0.15-per-million model
T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


def _created(api: APIClient, body: Any) -> Any:
    reply = api.post("/api/v1/events/", body, format="json")
    assert reply.status_code == 201, reply.content[:300]
    return reply.json()


@pytest.mark.django_db(transaction=True)  # the live server's threads see the session
def test_it_keeps_a_sub_micro_cost_exact_through_every_door_and_every_sum(
        api: APIClient, live_server: Any, token: MintedToken) -> None:
    session = make_session(key="sub-micro")
    call = {"session": session.pk, "type": "x-call", "tokens_in": 1, "cost_usd": SUB_MICRO}
    assert _created(api, call)["cost_usd"] == "0.00000015"  # REST
    [bulk] = _created(api, [call])  # bulk
    with mcp_agent(f"{live_server.url}/mcp/", token.secret) as agent:
        mcp = agent.ok("append_event", session=session.key, type="x-call", tokens_in=1, cost_usd=SUB_MICRO)
    for event_id in (bulk["id"], mcp["id"]):
        assert api.get(f"/api/v1/events/{event_id}/").json()["cost_usd"] == "0.00000015"
    # 0.0000495 has 7 places: six would have stored 0.000050, and the 4-place sum below would be 0.0001
    _created(api, {**call, "cost_usd": "0.0000495"})

    listed = api.get("/api/v1/events/", {"session": session.pk}).json()["results"]
    assert sorted(row["cost_usd"] for row in listed) == ["0.00000015"] * 3 + ["0.0000495"]
    assert sorted(TokenUsage.objects.filter(session=session).values_list("cost_usd", flat=True)) == [
        Decimal("1.5e-7")] * 3 + [Decimal("0.0000495")]  # the one book of usage: each call's exact cost
    assert api.get(f"/api/v1/sessions/{session.pk}/").json()["total_cost_usd"] == "0.00004995"
    assert Session.objects.get(pk=session.pk).total_cost_usd == Decimal("0.00004995")
    # events' calls: Ralph Site's all-sources figure (DevTeam's token_usage, the seed's rows, holds none of them)
    [row] = api.get("/api/v1/stats/session-cost/", {"session": session.pk}).json()["all_sources"]["rows"]
    assert (row["api_calls"], row["total_cost_usd"]) == (4, "0.0000")  # ROUND(SUM, 4) of the exact costs
    assert chain_verify().intact


@pytest.mark.parametrize(("cost", "problem"), [
    ("0.00000000001", "no more than 10 decimal places"),
    (1e-11, "no more than 10 decimal places"),
    ("past the columns", "Ensure"),
])
def test_it_refuses_a_cost_it_cannot_keep_as_sent(api: APIClient, cost: Any, problem: str) -> None:
    session = make_session()
    if cost == "past the columns":
        cost = str(usd_max() + USD_UNIT)  # SQLite: past 64-bit units; PostgreSQL: past numeric(22, 10)
    for body in ({"session": session.pk, "type": "x-call", "cost_usd": cost},
                 [{"session": session.pk, "type": "x-call", "cost_usd": cost}]):
        reply = api.post("/api/v1/events/", body, format="json")
        assert reply.status_code == 400, reply.content[:300]
        details = reply.json()["details"]
        errors = details["items"][0]["errors"] if isinstance(body, list) else details
        assert list(errors) == ["cost_usd"] and problem in errors["cost_usd"][0], errors
    usage = api.post("/api/v1/token-usage/", {"session": session.pk, "model": "m", "cost_usd": cost}, format="json")
    assert usage.status_code == 400 and list(usage.json()["details"]) == ["cost_usd"], usage.content[:300]
    assert not LedgerEvent.objects.exists() and not TokenUsage.objects.exists()


def test_it_answers_six_places_at_least_and_more_only_when_the_amount_has_them(api: APIClient) -> None:
    session = make_session()
    sent = ["0", "0.25", "0.076", "1.5e-7", "0.0000000001", "12.3456789012", "100"]
    for cost in sent:
        _created(api, {"session": session.pk, "type": "x-call", "cost_usd": cost})
    listed = api.get("/api/v1/events/", {"session": session.pk, "ordering": "id"}).json()["results"]
    assert [row["cost_usd"] for row in listed] == ["0.000000", "0.250000", "0.076000", "0.00000015", "0.0000000001",
                                                   "12.3456789012", "100.000000"]
    assert [usd_text(Decimal(cost)) for cost in sent] == [row["cost_usd"] for row in listed]


def test_a_priced_call_keeps_ten_places_of_price_times_tokens(api: APIClient) -> None:
    session = make_session()
    ModelPrice.objects.create(model="tiny", valid_from="2020-01-01T00:00:00Z", input_per_mtok=Decimal("0.0001"),
                              output_per_mtok=Decimal("0.15"))
    reply = api.post("/api/v1/token-usage/", {"session": session.pk, "model": "tiny", "input_tokens": 3,
                                              "output_tokens": 1}, format="json")
    assert reply.status_code == 201, reply.content[:300]
    # 3 x $0.0001/M + 1 x $0.15/M = 0.0000000003 + 0.00000015, computed once and stored as computed
    assert reply.json()["cost_usd"] == "0.0000001503" and reply.json()["is_estimated"] is True
    assert TokenUsage.objects.get().cost_usd == Decimal("0.0000001503")
    assert Session.objects.get(pk=session.pk).total_cost_usd == Decimal("0.0000001503")


def test_a_chain_hashed_with_six_places_is_the_chain_hashed_now() -> None:
    """Every chain written before 10 places hashed `cost_usd` with exactly six decimals: an amount of six
    places or fewer is still hashed so, so those chains verify; more places are written only when there."""
    session = make_session()
    old = make_event(session, cost_usd=Decimal("0.25"))
    content = {"agent": "", "category": "", "cost_usd": "0.250000", "data": {}, "duration_ms": None, "id": old.id,
               "idempotency_key": "", "is_estimated": False, "iteration": None, "message": "event 0", "meta": {},
               "model": "", "phase": "", "session": session.pk, "task_key": "task-0",
               "timestamp": old.timestamp.isoformat().replace("+00:00", "Z"), "tokens_in": 0, "tokens_out": 0,
               "tokens_total": 0, "type": "task_started"}
    assert old.hash == hashlib.sha256(GENESIS_HASH.encode() + canonical_json(content)).hexdigest()
    new = make_event(session, 1, cost_usd=Decimal("1.5e-7"))
    assert b'"cost_usd":"0.00000015"' in canonical_json({"cost_usd": usd_text(new.cost_usd)})
    assert LedgerEvent.objects.get(pk=new.pk).cost_usd == Decimal("1.5e-7") and chain_verify().intact


def test_it_imports_ralphy_costs_to_ten_places_and_counts_float_noise(tmp_path: Path) -> None:
    path = seed_database(tmp_path / "ralphy.db", "ralphy", {
        "runs": [{"id": "run-a", "status": "completed", "started_at": T0, "ended_at": None, "config_json": "{}"}],
        "tasks": [],
        "ledger": [{"run_id": "run-a", "ts": T0 + i, "type": "backend_call_finished", "task_id": None, "phase": None,
                    "duration_ms": None, "tokens_in": 1, "tokens_out": 0, "tokens_total": 1, "cost_usd": cost,
                    "is_estimated": 0, "meta_json": None}
                   for i, cost in enumerate([SUB_MICRO, 0.1 + 0.2, 0.0012345])],
        "issues": [], "checkpoints": []})
    output = import_seed("ralphy", path)
    assert "ledger: 1 cost_usd value(s) rounded to 10 decimal places" in output, output
    assert [e.cost_usd for e in LedgerEvent.objects.order_by("id")] == [
        Decimal("1.5e-7"), Decimal("0.3"), Decimal("0.0012345")]
    # the float's own text stays on its seed row, so an export writes the tool's value back
    assert SeedRow.objects.get(source_table="ledger", source_key="2").extra["cost_usd"] == 0.1 + 0.2
    assert not SeedRow.objects.get(source_table="ledger", source_key="1").extra.get("cost_usd")
    assert Session.objects.get(key="run-a").total_cost_usd == Decimal("0.3012346500")
    out = StringIO()
    call_command("ledger_verify", stdout=out, stderr=StringIO())
    assert "ledger chain intact: 3 events" in out.getvalue()
    exported = tmp_path / "out.db"  # the tool's own encoding back: REAL dollars, the float's noise included
    call_command("export_seed", "ralphy", str(exported), stdout=StringIO())
    assert [row["cost_usd"] for row in file_rows(exported, "ledger")] == [SUB_MICRO, 0.1 + 0.2, 0.0012345]


def test_an_import_sets_aside_a_cost_past_what_the_backends_columns_hold(tmp_path: Path) -> None:
    """1e10 USD fits PostgreSQL's numeric(22, 10) but not SQLite's 64-bit units; 1e13 fits neither. A cost the
    backend cannot hold is set aside (the field's default stored, the summary says why), the others kept."""
    costs = [0.5, 1e10, 1e13]
    path = seed_database(tmp_path / "ralphy.db", "ralphy", {
        "runs": [{"id": "run-big", "status": "completed", "started_at": T0, "config_json": "{}"}],
        "ledger": [{"run_id": "run-big", "ts": T0 + i, "type": "backend_call_finished", "tokens_in": 1,
                    "tokens_out": 0, "tokens_total": 1, "cost_usd": cost, "is_estimated": 0}
                   for i, cost in enumerate(costs)]})
    output = import_seed("ralphy", path)
    kept = [Decimal(repr(cost)) if Decimal(repr(cost)) <= usd_max() else Decimal(0) for cost in costs]
    assert [e.cost_usd for e in LedgerEvent.objects.order_by("id")] == kept
    assert output.count(f"USD is more than the {usd_max()} the money columns hold") == kept.count(0), output


def test_sqlite_keeps_whole_ten_billionths_and_postgresql_numeric_22_10() -> None:
    session = make_session()
    make_event(session, cost_usd=Decimal("1.5e-7"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT cost_usd FROM ledger_app_ledgerevent")
        [(stored,)] = cursor.fetchall()
    assert stored == (1500 if connection.vendor == "sqlite" else Decimal("0.0000001500"))


def _stored(table: str, column: str) -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} ORDER BY 1")  # the test's own names
        return [row[0] for row in cursor.fetchall()]


def _column_places(table: str, column: str) -> tuple[int, int] | None:
    """PostgreSQL's numeric(precision, scale) of a column (SQLite declares no places)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT numeric_precision, numeric_scale FROM information_schema.columns "
                       "WHERE table_name = %s AND column_name = %s", [table, column])
        return cursor.fetchone()


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_every_amount_back_and_forward_with_the_chain_and_triggers_intact(
        api: APIClient) -> None:
    session = make_session()
    for cost in ("0.25", "0.076"):  # six places at most: what every server before the migration stored
        _created(api, {"session": session.pk, "type": "x-call", "tokens_in": 1, "cost_usd": cost})
    triggers = installed_triggers(connection) | installed_triggers(connection, USAGE_TABLE)
    micros = [76000, 250000] if connection.vendor == "sqlite" else [Decimal("0.076"), Decimal("0.25")]

    call_command("migrate", "ledger_app", "0018", verbosity=0)  # just before the money migrations
    call_command("migrate", "sessions_app", "0018", verbosity=0)
    assert _stored("ledger_app_ledgerevent", "cost_usd") == micros == _stored("ledger_app_tokenusage", "cost_usd")
    assert _stored("sessions_app_session", "total_cost_usd") == [sum(micros)]
    assert _column_places("ledger_app_ledgerevent", "cost_usd") in (None, (18, 6))
    # The event type rule (ledger 0020, after the money migrations) went back with them.
    assert installed_triggers(connection) | installed_triggers(connection, USAGE_TABLE) == triggers - {TYPE_RULE}

    call_command("migrate", verbosity=0)
    units = [760000000, 2500000000] if connection.vendor == "sqlite" else micros
    assert _stored("ledger_app_ledgerevent", "cost_usd") == units == _stored("ledger_app_tokenusage", "cost_usd")
    assert _stored("ledger_app_usageday", "cost_usd") == [sum(units)]  # rescaled, not moved by its triggers
    assert _column_places("sessions_app_session", "total_cost_usd") in (None, (22, 10))
    assert installed_triggers(connection) | installed_triggers(connection, USAGE_TABLE) == triggers
    report = chain_verify()  # hashed before the migration went back and forth: the same text now
    assert report.intact and report.events == 2, report.problem
    assert api.get(f"/api/v1/sessions/{session.pk}/").json()["total_cost_usd"] == "0.326000"
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE ledger_app_ledgerevent SET cost_usd = 0")


def test_the_admin_refuses_a_price_past_the_columns_with_the_api_message(api: APIClient, admin_client: Any) -> None:
    too_much = str(usd_max() + 1)
    prices = {"input_per_mtok": too_much, "output_per_mtok": "0", "cached_read_per_mtok": "0",
              "cached_write_per_mtok": "0", "reasoning_per_mtok": "0"}
    reply = api.post("/api/v1/model-prices/", {"model": "m", "valid_from": "2026-01-01T00:00:00Z", **prices},
                     format="json")
    assert reply.status_code == 400 and list(reply.json()["details"]) == ["input_per_mtok"], reply.content[:300]
    page = admin_client.post("/admin/ledger_app/modelprice/add/", {
        "model": "m", "valid_from_0": "2026-01-01", "valid_from_1": "00:00:00", **prices})
    assert page.status_code == 200 and "input_per_mtok" in page.context["adminform"].form.errors
    assert not ModelPrice.objects.filter(model="m").exists()


def test_the_admin_shows_money_as_the_api_writes_it(admin_client: Any) -> None:
    session = make_session()
    events = [make_event(session, n, cost_usd=Decimal(cost)) for n, cost in enumerate(("0.25", "1.5e-7"))]
    listed = admin_client.get("/admin/ledger_app/ledgerevent/").content.decode()
    assert "0.250000<" in listed and "0.00000015<" in listed and "0.2500000000" not in listed
    for event, shown in zip(events, ("0.250000", "0.00000015"), strict=True):
        page = admin_client.get(f"/admin/ledger_app/ledgerevent/{event.pk}/change/").content.decode()
        assert f'class="readonly">{shown}<' in page and "0.2500000000" not in page and "1500<" not in page, shown
