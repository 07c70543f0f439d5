"""Imported ralphy costs are counted (issue #29): the calls its ledger reports (`backend_call_finished`'s tokens and
cost) go into the one book of usage as events appended through the API do, so the session's totals and the
all-sources figures of session cost and daily cost show them, and a request id reported twice counts once, on a
re-import too."""

import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest
from django.db.models import Sum
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent, TokenUsage
from sessions_app.models import Session
from tests.ledger_app.factories import get_all_sources, get_stat
from tests.seed_io.helpers import import_seed
from tests.seed_io.test_ralphy import T0, _ralphy_db

pytestmark = pytest.mark.django_db


def _calls_file(path: Path) -> Path:
    """The ralphy test file whose events carrying tokens are backend calls, each with its request id."""
    _ralphy_db(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE ledger SET type = 'backend_call_finished', meta_json = json_object('request_id', "
                   "'req-' || id) WHERE tokens_in IS NOT NULL")
    return path


def test_ralphys_call_costs_are_in_session_cost_totals_and_daily_cost(tmp_path: Path, api: APIClient) -> None:
    import_seed("ralphy", _calls_file(tmp_path / "ralphy.db"))
    calls = LedgerEvent.objects.filter(type="backend_call_finished")
    assert calls.count() == 4
    assert sorted(TokenUsage.objects.values_list("request_id", flat=True)) == ["req-2", "req-3", "req-4", "req-5"]
    for session in Session.objects.all():
        mine = calls.filter(session=session).aggregate(tokens=Sum("tokens_in"), cost=Sum("cost_usd"))
        assert (session.total_tokens_input, session.total_cost_usd) == (mine["tokens"], mine["cost"]), session.key
    per_session = {row["session_id"]: row for row in get_all_sources(api, "session-cost")}
    first = Session.objects.get(key="run-20260101-a")
    assert per_session[first.pk]["api_calls"] == 3
    assert Decimal(per_session[first.pk]["total_cost_usd"]) == first.total_cost_usd.quantize(Decimal("0.0001"))
    assert sum(row["api_calls"] for row in get_all_sources(api, "daily-cost")) == 4
    # Ralph Site's own figures: DevTeam's views read its token_usage table, which ralphy's calls are not in.
    assert get_stat(api, "session-cost") == get_stat(api, "daily-cost") == []


def test_a_call_reported_again_counts_once_also_on_a_re_import(tmp_path: Path) -> None:
    path = _calls_file(tmp_path / "ralphy.db")
    import_seed("ralphy", path)
    totals = Session.objects.get(key="run-20260101-a").total_cost_usd
    with sqlite3.connect(path) as db:  # ralphy logged the first call twice
        db.execute("INSERT INTO ledger (run_id, ts, type, tokens_in, tokens_out, cost_usd, meta_json) VALUES "
                   "('run-20260101-a', ?, 'backend_call_finished', 100, 10, 0.0012345, '{\"request_id\": \"req-2\"}')",
                   (T0 + 9,))
    output = import_seed("ralphy", path)
    assert "1 rows created" in output
    assert TokenUsage.objects.count() == 4
    assert Session.objects.get(key="run-20260101-a").total_cost_usd == totals
