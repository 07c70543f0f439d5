"""The usage rollup (per session, UTC day, model and agent) equals the usage rows' sums whatever writes
them (a deleted session's calls under one NULL key, a replaced call moved), under concurrent writers
too; and every usage figure (cost view, console, dashboard, the API's usage statistics under any token
scope and any range) reads it and equals the same figure aggregated over the calls."""

import json
from collections import defaultdict
from datetime import UTC, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework.utils.encoders import JSONEncoder

from ledger_app import selectors, services
from ledger_app.append_only import installed_triggers
from ledger_app.migrations.frozen import usage_days_v2
from ledger_app.models import TokenUsage, UsageDay
from ledger_app.usage_days import SUMMED, TRIGGER_NAMES, USAGE_TABLE, usage_days_rebuild
from ralphsite.core.models import TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import SessionStatus
from sessions_app.services.sessions import session_delete
from tests.concurrency import in_threads
from tests.ledger_app.factories import get_all_sources, get_stat, make_session, utc

COST_VIEW = "/admin/ledger_app/tokenusage/"
Key = tuple[Any, ...]


def sums_of_the_rows(rows: Any = None, *, per_session: bool = True) -> dict[Key, tuple]:
    sums: dict[Key, list] = defaultdict(lambda: [0] * (1 + len(SUMMED)))
    # Only the summed columns: the test migrates the table back to before later columns existed.
    every_row = TokenUsage.objects.only("recorded_at", "session", "model", "agent", *SUMMED)
    for row in every_row if rows is None else rows:
        day = row.recorded_at.astimezone(UTC).date()
        totals = sums[(row.session_id, day, row.model, row.agent) if per_session else (day, row.model, row.agent)]
        totals[0] += 1
        for index, name in enumerate(SUMMED, start=1):
            totals[index] += getattr(row, name)
    return {key: tuple(totals) for key, totals in sums.items()}


def the_rollup() -> dict[Key, tuple]:
    rows = list(selectors.usage_day_list())
    rollup = {(row.session_id, row.day, row.model, row.agent): (row.calls, *(getattr(row, name) for name in SUMMED))
              for row in rows}
    assert len(rollup) == len(rows)  # one row per key: no session is one key
    return rollup


def usage(session: Any, model: str, agent: str, at: str, cost: str, tokens: int = 100, **extra: Any) -> TokenUsage:
    return TokenUsage(session=session, model=model, agent=agent, recorded_at=utc(at), cost_usd=Decimal(cost),
                      input_tokens=tokens, output_tokens=tokens // 10, cached_read_tokens=tokens * 2, **extra)


def finished_session(**fields: Any) -> Any:
    return make_session(status=SessionStatus.COMPLETED, **fields)


def test_its_frozen_sql_sums_the_models_fields() -> None:
    # A field added to UsageSums or UsageDay needs a new frozen version and a migration.
    assert usage_days_v2.SUMMED == SUMMED
    assert {field.attname for field in UsageDay._meta.concrete_fields} == {
        "id", "session_id", "day", "model", "agent", *usage_days_v2.FIGURES}


@pytest.mark.django_db
def test_it_sums_every_row_whatever_writes_it(api: APIClient) -> None:
    loop, other, gone = make_session(), make_session(), finished_session()
    usage(loop, "opus", "exec-1", "2025-03-01T23:59:59.999999Z", "0.000001").save()  # the last moment of a UTC day
    TokenUsage.objects.bulk_create([usage(loop, "opus", "exec-1", "2025-03-02T00:00:00Z", "1.5"),
                                    usage(other, "opus", "exec-1", "2025-03-02T12:00:00Z", "0.25", tokens=7),
                                    usage(gone, "opus", "exec-1", "2025-03-02T13:00:00Z", "0.5"),
                                    usage(None, "opus", "exec-1", "2025-03-02T14:00:00Z", "0.125"),
                                    usage(other, "sonnet", "", "2025-03-02T12:00:00Z", "0.1")])
    posted = api.post("/api/v1/token-usage/", [
        {"session": loop.pk, "model": "opus", "agent": "exec-1", "input_tokens": 5, "output_tokens": 1,
         "cost_usd": "0.000003", "recorded_at": "2025-03-02T08:00:00Z", "request_id": "r-1"},
        {"session": loop.pk, "model": "opus", "agent": "exec-1", "input_tokens": 5, "output_tokens": 1,
         "cost_usd": "0.000003", "recorded_at": "2025-03-02T08:00:00Z", "request_id": "r-1"}], format="json")
    assert posted.status_code == 201, posted.content  # the repeated request id is one call
    run = api.post("/api/v1/agent-invocations/", {"session": other.pk, "agent": "reviewer", "model": "haiku",
                                                   "tokens_input": 9, "tokens_output": 1, "cost_usd": "0.02"},
                   format="json").json()
    assert the_rollup() == sums_of_the_rows()

    # usage_replace deletes the call's row and inserts its new one: its old key empties and goes.
    api.patch(f"/api/v1/agent-invocations/{run['id']}/", {"tokens_input": 90, "model": "sonnet", "cost_usd": "0.02"},
              format="json")
    assert the_rollup() == sums_of_the_rows()
    assert not UsageDay.objects.filter(model="haiku").exists()
    TokenUsage.objects.filter(model="sonnet", agent="").update(recorded_at=utc("2025-03-05T00:00:00Z"))
    assert the_rollup() == sums_of_the_rows()
    assert api.delete(f"/api/v1/agent-invocations/{run['id']}/").status_code == 204
    assert the_rollup() == sums_of_the_rows()

    session_delete(session=gone)  # its call joins the one that never had a session: one key
    assert the_rollup() == sums_of_the_rows()
    assert the_rollup()[(None, utc("2025-03-02T00:00:00Z").date(), "opus", "exec-1")][:2] == (2, 200)
    assert not UsageDay.objects.filter(session_id=gone.pk).exists()
    rollup = the_rollup()
    assert usage_days_rebuild() == len(rollup) and the_rollup() == rollup


@pytest.mark.django_db
def test_its_triggers_are_in_place_after_every_migration() -> None:
    assert installed_triggers(connection, USAGE_TABLE) >= TRIGGER_NAMES


def per_day_rollup() -> dict[Key, tuple]:
    """The rollup as migration 0008 keyed it (the model has moved on: raw SQL)."""
    money = UsageDay._meta.get_field("cost_usd")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT day, model, agent, calls, {', '.join(SUMMED)} FROM ledger_app_usageday")
        return {(str(day), model, agent): (calls, *tokens, money.from_db_value(cost, None, connection))
                for day, model, agent, calls, *tokens, cost in cursor.fetchall()}


@pytest.mark.django_db(transaction=True)
def test_its_migration_rebuilds_it_per_session_and_back_per_day() -> None:
    session, gone = make_session(), finished_session()
    TokenUsage.objects.bulk_create([usage(session, "opus", "a", "2025-03-01T10:00:00Z", "0.5"),
                                    usage(gone, "opus", "a", "2025-03-01T11:00:00Z", "0.25"),
                                    usage(None, "opus", "a", "2025-03-01T12:00:00Z", "0.125")])
    session_delete(session=gone)

    def expected_per_day() -> dict[Key, tuple]:
        return {(str(day), model, agent): sums for (day, model, agent), sums in
                sums_of_the_rows(per_session=False).items()}

    call_command("migrate", "ledger_app", "0008", verbosity=0)
    assert per_day_rollup() == expected_per_day() != {}
    # The model as 0008 left it (later migrations add columns the table does not have yet). Its money field is a
    # plain decimal: on SQLite the column holds micro-dollars.
    state_at_0008 = MigrationExecutor(connection).loader.project_state(("ledger_app", "0008_usage_days"))
    usage_at_0008 = state_at_0008.apps.get_model("ledger_app", "TokenUsage")
    usage_at_0008.objects.create(session_id=session.pk, model="opus", agent="a", input_tokens=1,
                                 recorded_at=utc("2025-03-01T13:00:00Z"),
                                 cost_usd=Decimal(1_000_000 if connection.vendor == "sqlite" else 1))
    # 0008's triggers keep it again
    assert per_day_rollup() == expected_per_day()
    call_command("migrate", "ledger_app", "0007", verbosity=0)
    assert not TRIGGER_NAMES & installed_triggers(connection, USAGE_TABLE)
    call_command("migrate", "ledger_app", verbosity=0)
    assert the_rollup() == sums_of_the_rows() and len(the_rollup()) == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_and_deleters_lose_no_call() -> None:
    # Each thread records a call and deletes it again, ten times, then records one more: the shared
    # rollup rows keep emptying (and going) while other threads add to them.
    session_ids = [make_session().pk for _ in range(2)]
    now = timezone.now()

    def record(index: int, call: int) -> TokenUsage:
        with transaction.atomic():  # the caller's transaction, as every service that records a call
            [row] = services.usage_record(items=[{
                "session_id": session_ids[index % 2], "model": "opus", "agent": "exec", "input_tokens": 10,
                "output_tokens": 1, "cost_usd": Decimal("0.000011"), "recorded_at": now,
                "request_id": f"{index}-{call}"}])
            return row

    def churn(index: int) -> None:
        for call in range(10):
            row = record(index, call)
            TokenUsage.objects.filter(pk=row.pk).delete()
        record(index, 10)

    in_threads(8, churn)
    assert the_rollup() == sums_of_the_rows()
    assert sorted(day.calls for day in UsageDay.objects.all()) == [4, 4]


# -- every figure read from the rollup equals the calls' -------------------------------------------

def encoded(value: Any) -> Any:
    return json.loads(json.dumps(value, cls=JSONEncoder))


def rounded(cost: Decimal, places: int) -> Decimal:
    return cost.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def stats_of_the_calls(rows: list[TokenUsage]) -> dict[str, Any]:
    """The four usage statistics' figures aggregated over the calls, in Python."""
    groups: dict[str, dict[Key, list]] = {name: defaultdict(lambda: [0, 0, 0, Decimal(0), [], []])
                                          for name in ("day", "session", "model", "agent")}
    for row in rows:
        for name, key in (("day", (row.recorded_at.astimezone(UTC).date(),)), ("session", (row.session_id,)),
                          ("model", (row.session_id, row.model)), ("agent", (row.agent,))):
            group = groups[name][key]
            group[0] += 1
            group[1] += row.input_tokens
            group[2] += row.output_tokens
            group[3] += row.cost_usd
            group[4].append(row.recorded_at)
    nulls_last = connection.features.nulls_order_largest
    sessions = sorted(groups["session"].items(), key=lambda item: ((item[0][0] is None) == nulls_last,
                                                                   item[0][0] or ""))
    return encoded({
        "daily-cost": [{"date": day, "api_calls": n, "total_tokens": i + o, "total_cost_usd": str(rounded(c, 4))}
                       for (day,), (n, i, o, c, _, _) in sorted(groups["day"].items())],
        "session-cost": [{"session_id": session, "api_calls": n, "total_input_tokens": i, "total_output_tokens": o,
                          "total_tokens": i + o, "total_cost_usd": str(rounded(c, 4)), "first_call": min(at),
                          "last_call": max(at)} for (session,), (n, i, o, c, at, _) in sessions],
        "model-usage": {f"{s} {m}": [i, o, int(rounded(c * 100, 0))]
                        for (s, m), (n, i, o, c, _, _) in groups["model"].items()},
        "agent-performance": {agent: int(rounded(c * 100, 0))
                              for (agent,), (n, i, o, c, _, _) in groups["agent"].items()},
    })


def stats_of_the_rollup(client: APIClient, **params: str) -> dict[str, Any]:
    """The API's figures over every path's calls (`all_sources`)."""
    models = {f"{row['session_id']} {row['model']}": [row["tokens_input"], row["tokens_output"], row["cost_cents"]]
              for row in get_all_sources(client, "model-usage", **params)}
    agents = {row["agent"]: row["total_cost_cents"] for row in get_all_sources(client, "agent-performance", **params)}
    return {"daily-cost": get_all_sources(client, "daily-cost", **params),
            "session-cost": get_all_sources(client, "session-cost", **params),
            "model-usage": models, "agent-performance": agents}


@pytest.mark.django_db
def test_the_usage_statistics_equal_the_calls_under_every_scope_and_range(user, api: APIClient) -> None:
    mine, sibling = make_session(project_path="/p"), make_session(project_path="/p")
    elsewhere, gone = make_session(project_path="/q"), finished_session(project_path="/p")
    at = ["2025-03-01T00:00:00Z", "2025-03-01T18:30:00Z", "2025-03-01T23:59:59.999999Z", "2025-03-02T01:15:00Z",
          "2025-03-02T12:00:00Z", "2025-03-03T06:00:00Z", "2025-03-04T00:00:00Z"]
    TokenUsage.objects.bulk_create([
        usage(session, model, agent, moment, f"0.00{index}5{offset}", tokens=10 * index + offset)
        for offset, (session, model, agent) in enumerate([
            (mine, "opus", "exec-1"), (mine, "sonnet", "reviewer"), (sibling, "opus", "exec-1"),
            (elsewhere, "opus", "exec-2"), (gone, "haiku", "exec-1"), (None, "opus", "exec-1")])
        for index, moment in enumerate(at) if (index + offset) % 3])
    run = api.post("/api/v1/agent-invocations/", {"session": mine.pk, "agent": "exec-1", "model": "opus",
                                                   "tokens_input": 9, "tokens_output": 1, "cost_usd": "0.02",
                                                   "started_at": "2025-03-02T01:00:00Z"}, format="json").json()
    api.patch(f"/api/v1/agent-invocations/{run['id']}/", {"tokens_input": 90, "cost_usd": "0.035"}, format="json")
    session_delete(session=gone)

    scopes = {"global": (api, lambda row: True),
              "project": (api_token_create(user=user, scope=TokenScope.PROJECT, project_path="/p"),
                          lambda row: row.session_id in {mine.pk, sibling.pk}),
              "session": (api_token_create(user=user, scope=TokenScope.SESSION, session_id=mine.pk),
                          lambda row: row.session_id == mine.pk)}
    ranges = [{}, {"since": "2025-03-02T00:00:00Z"}, {"until": "2025-03-02T12:00:00Z"},
              {"since": "2025-03-01T18:30:00Z", "until": "2025-03-03T06:00:01Z"},
              {"since": "2025-03-02T01:00:00Z", "until": "2025-03-02T13:00:00Z"}, {"session": mine.pk}]
    calls = list(TokenUsage.objects.all())
    for scope, (client, sees) in scopes.items():
        if not isinstance(client, APIClient):
            client, secret = APIClient(), client.secret
            client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
        for params in ranges:
            selected = [row for row in calls if sees(row)
                        and ("since" not in params or row.recorded_at >= utc(params["since"]))
                        and ("until" not in params or row.recorded_at < utc(params["until"]))
                        and ("session" not in params or row.session_id == params["session"])]
            expected = stats_of_the_calls(selected)
            assert stats_of_the_rollup(client, **params) == expected, (scope, params)
    for params in ({}, {"since": "2025-03-02T00:00:00Z"}, {"session": mine.pk}):  # whole days: no call summed
        for name, seed_table_reads in (("daily-cost", 1), ("model-usage", 0), ("agent-performance", 0)):
            with CaptureQueriesContext(connection) as queries:
                get_stat(api, name, **params)
            # daily-cost's own rows are DevTeam's token_usage table, read as its SQL reads it; its all-sources
            # figures come from the rollup.
            grouped = [q["sql"] for q in queries if "GROUP BY" in q["sql"] and USAGE_TABLE in q["sql"]]
            assert len(grouped) == seed_table_reads, (name, grouped)


@pytest.mark.django_db
def test_the_cost_view_the_console_and_the_dashboard_read_the_rollup_not_every_call(admin_client: Client) -> None:
    loop, other = make_session(), make_session()
    today = timezone.now().replace(hour=12)
    TokenUsage.objects.bulk_create(
        [usage(session, model, "exec-1", (today - timedelta(days=offset)).isoformat(), "0.5")
         for offset in range(3) for model in ("opus", "sonnet") for session in (loop, other)])
    since = (today - timedelta(days=1)).date().isoformat()
    for selection in ({}, {"model": "opus"}, {"recorded_at__since": since}, {"session": loop.pk},
                      {"session": loop.pk, "recorded_at__since": since, "model": "sonnet"}):
        with CaptureQueriesContext(connection) as queries:
            page = admin_client.get(COST_VIEW, selection)
        assert page.status_code == 200
        aggregates = [q["sql"] for q in queries if "GROUP BY" in q["sql"]]
        assert len(aggregates) == 3 and all(USAGE_TABLE not in sql for sql in aggregates), aggregates
        rows = page.context["cl"].queryset  # the calls the page lists, aggregated directly
        assert page.context["usage_by_model"] == selectors.token_usage_by(usage=rows, field="model")
        assert page.context["usage_by_agent"] == selectors.token_usage_by(usage=rows, field="agent")
        assert page.context["usage_by_day"] == selectors.token_usage_by_day(usage=rows, days=31)

    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get(f"/admin/sessions_app/session/{loop.pk}/change/")
    [cost] = [panel for panel in page.context["panels"]["side"] if panel["name"] == "cost"]
    assert cost["by_model"] == selectors.token_usage_by(usage=TokenUsage.objects.filter(session=loop), field="model")
    with CaptureQueriesContext(connection) as dashboard:
        assert admin_client.get("/admin/").status_code == 200
    assert not [q["sql"] for q in [*queries, *dashboard] if "GROUP BY" in q["sql"] and USAGE_TABLE in q["sql"]]
