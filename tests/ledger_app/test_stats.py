"""`/api/v1/stats/<name>/` against seed 003's view definitions, on hand-computed fixtures."""

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from ledger_app.models import ErrorLog, GateResult, TokenUsage
from ledger_app.stats import STATS
from sessions_app.models import SessionStatus
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import add_orchestration_rows, get_stat, make_session, utc

pytestmark = pytest.mark.django_db


@pytest.fixture
def gates():
    s1, s2 = make_session(), make_session()
    rows = [("tests", True), ("tests", True), ("tests", False), ("lint", True)]
    rows += [("coverage", False)] * 5 + [("coverage", True)]
    for gate, passed in rows:
        GateResult.objects.create(session=s1, gate=gate, passed=passed, iteration=1,
                                  timestamp=utc("2025-03-01T12:00:00Z"))
    GateResult.objects.create(session=s2, gate="lint", passed=False, iteration=1, timestamp=utc("2025-04-01T00:00:00Z"))
    return s1, s2


def test_it_gate_pass_rates(api: APIClient, gates) -> None:
    s1, _ = gates
    assert get_stat(api, "gate-pass-rates") == [
        {"gate": "coverage", "total_runs": 6, "passes": 1, "pass_rate": 16.7},
        {"gate": "lint", "total_runs": 2, "passes": 1, "pass_rate": 50.0},
        {"gate": "tests", "total_runs": 3, "passes": 2, "pass_rate": 66.7},
    ]
    assert get_stat(api, "gate-pass-rates", session=s1.id)[1] == {"gate": "lint", "total_runs": 1, "passes": 1,
                                                              "pass_rate": 100.0}
    assert get_stat(api, "gate-pass-rates", since="2025-03-15") == [{"gate": "lint", "total_runs": 1, "passes": 0,
                                                                 "pass_rate": 0.0}]
    assert len(get_stat(api, "gate-pass-rates", until="2025-03-15")) == 3


@pytest.fixture
def usage():
    s1, s2 = make_session(), make_session()
    for session, tokens_in, tokens_out, cost, at in (
        (s1, 100, 50, "0.012345", "2025-03-01T10:00:00Z"),
        (s1, 200, 25, "0.000101", "2025-03-02T09:00:00Z"),
        (s2, 10, 10, "1.234560", "2025-03-02T23:59:59Z"),
        (None, 1, 1, "0.000070", "2025-03-03T00:00:00Z"),
    ):
        TokenUsage.objects.create(session=session, model="sonnet", input_tokens=tokens_in, output_tokens=tokens_out,
                                  cost_usd=Decimal(cost), recorded_at=utc(at))
    return s1, s2


def test_it_session_cost(api: APIClient, usage) -> None:
    s1, s2 = usage
    rows = {row["session_id"]: row for row in get_stat(api, "session-cost")}
    assert rows[s1.id] == {"session_id": s1.id, "api_calls": 2, "total_input_tokens": 300, "total_output_tokens": 75,
                           "total_tokens": 375, "total_cost_usd": "0.0124", "first_call": "2025-03-01T10:00:00Z",
                           "last_call": "2025-03-02T09:00:00Z"}
    assert rows[s2.id]["total_cost_usd"] == "1.2346" and rows[s2.id]["api_calls"] == 1
    assert rows[None]["total_cost_usd"] == "0.0001"
    assert [row["session_id"] for row in get_stat(api, "session-cost", session=s2.id)] == [s2.id]


def test_it_daily_cost(api: APIClient, usage) -> None:
    assert get_stat(api, "daily-cost") == [
        {"date": "2025-03-01", "api_calls": 1, "total_tokens": 150, "total_cost_usd": "0.0123"},
        {"date": "2025-03-02", "api_calls": 2, "total_tokens": 245, "total_cost_usd": "1.2347"},
        {"date": "2025-03-03", "api_calls": 1, "total_tokens": 2, "total_cost_usd": "0.0001"},
    ]
    one_day = get_stat(api, "daily-cost", since="2025-03-02", until="2025-03-03")
    assert [row["date"] for row in one_day] == ["2025-03-02"]


def test_it_error_summary(api: APIClient) -> None:
    session = make_session()
    for error_type, recovered, circuit in (("transient", True, False), ("transient", False, True),
                                           ("transient", None, False), ("permanent", None, True)):
        ErrorLog.objects.create(session=session, error_type=error_type, error_message="x",
                                recovery_success=recovered, circuit_opened=circuit)
    assert get_stat(api, "error-summary") == [
        {"error_type": "permanent", "occurrences": 1, "recovered": 0, "circuits_opened": 1},
        {"error_type": "transient", "occurrences": 3, "recovered": 1, "circuits_opened": 1},
    ]
    assert get_stat(api, "error-summary", session=make_session().id) == []


def test_it_current_session(api: APIClient) -> None:
    make_session(status=SessionStatus.RUNNING, started_at=utc("2025-01-01T00:00:00Z"))
    latest = make_session(status=SessionStatus.RUNNING, started_at=utc("2025-02-01T00:00:00Z"),
                          command="/devteam:implement --sprint 1", command_type="implement", current_phase="executing",
                          current_task_key="TASK-002", current_agent="backend", current_model="sonnet",
                          current_iteration=4, consecutive_failures=2, circuit_breaker_state="half_open",
                          plan_key="plan-001", sprint_key="sprint-1", execution_mode="eco", total_tokens_input=1500,
                          total_tokens_output=300, total_cost_usd=Decimal("1.234567"), bug_council_activated=True,
                          bug_council_reason="three failures")
    make_session(status=SessionStatus.COMPLETED, started_at=utc("2025-03-01T00:00:00Z"))
    # SELECT * FROM sessions: seed 003's columns in its order; cents from USD, half away from zero.
    assert get_stat(api, "current-session") == [{
        "id": latest.id, "started_at": "2025-02-01T00:00:00Z", "ended_at": None,
        "command": "/devteam:implement --sprint 1", "command_type": "implement", "status": "running",
        "exit_reason": "", "current_phase": "executing", "current_task_id": "TASK-002", "current_agent": "backend",
        "current_model": "sonnet", "current_iteration": 4, "max_iterations": 10, "consecutive_failures": 2,
        "max_consecutive_failures": 5, "circuit_breaker_state": "half_open", "plan_id": "plan-001",
        "sprint_id": "sprint-1", "execution_mode": "eco", "total_tokens_input": 1500, "total_tokens_output": 300,
        "total_cost_cents": 123, "bug_council_activated": True, "bug_council_reason": "three failures"}]
    assert get_stat(api, "current-session", until="2025-01-15")[0]["started_at"] == "2025-01-01T00:00:00Z"
    assert get_stat(api, "current-session", since="2025-02-02") == []


@pytest.mark.parametrize(("passes", "runs", "expected"), [(1, 16, 6.3), (3, 16, 18.8), (1, 80, 1.3), (2, 3, 66.7)])
def test_it_rounds_rates_half_away_from_zero_on_both_backends(api: APIClient, passes: int, runs: int,
                                                              expected: float) -> None:
    session = make_session()  # 1/16 = 6.25 %: ROUND(6.25, 1) is 6.3, where rounding half to even gives 6.2
    for index in range(runs):
        GateResult.objects.create(session=session, gate="tests", passed=index < passes, iteration=index)
    [row] = get_stat(api, "gate-pass-rates")
    assert (row["passes"], row["total_runs"], row["pass_rate"]) == (passes, runs, expected)


def test_it_the_index_lists_every_stat(api: APIClient) -> None:
    body = api.get("/api/v1/stats/").json()
    assert {row["name"] for row in body} == set(STATS) == {  # seed 003's fourteen views
        "current-session", "session-summary", "model-usage", "agent-performance", "current-task", "sprint-progress",
        "task-attempts-summary", "gate-pass-rates", "acceptance-criteria-status", "feature-status",
        "context-status", "session-cost", "daily-cost", "error-summary"}


def test_it_an_unknown_stat_is_a_404_and_bad_filters_a_400(api: APIClient) -> None:
    assert_error_shape(api.get("/api/v1/stats/nope/"), 404, "not_found")
    assert_error_shape(api.get("/api/v1/stats/daily-cost/", {"since": "yesterday"}), 400, "validation_error")
    assert_error_shape(api.get("/api/v1/stats/daily-cost/", {"colour": "red"}), 400, "validation_error")


@pytest.mark.parametrize("name", sorted(STATS))
def test_it_each_stat_runs_a_constant_number_of_queries(api: APIClient, django_assert_num_queries, usage, gates,
                                                     devteam, name: str) -> None:
    # Auth and the view's one query; current-task has one more for its task's lists (one UNION); a view with
    # all-sources figures one more for them (the rollup), session-cost's one more for the calls without a session
    # (grouped by the seed's session id they name).
    queries = 2 + (name == "current-task") + (STATS[name].all_sources is not None) + (name == "session-cost")
    with django_assert_num_queries(queries):
        assert api.get(f"/api/v1/stats/{name}/").status_code == 200
    make_session(status=SessionStatus.RUNNING)
    for _ in range(5):
        TokenUsage.objects.create(model="m", cost_usd=1)
        GateResult.objects.create(session=make_session(), gate="security", passed=True, iteration=2)
        ErrorLog.objects.create(error_type="recoverable", error_message="e")
    for index in range(5):
        add_orchestration_rows(index)
    with django_assert_num_queries(queries):
        assert api.get(f"/api/v1/stats/{name}/").status_code == 200


@pytest.mark.parametrize(("costs", "places", "expected"), [
    (["0.005000", "0.010000"], 2, 2),        # 1.5 cents: half away from zero
    (["0.004999"], 2, 0),
    (["1.234650"], 4, 12347),                # a float sum would give 1.2346 on SQLite
    (["0.000050"], 4, 1),
    (["0.333333", "0.333333", "0.333334"], 6, 1_000_000),
])
def test_it_money_is_summed_exactly_and_rounded_half_away_from_zero(costs: list[str], places: int,
                                                                 expected: int) -> None:
    from ledger_app.stats import cents, usd_units

    for cost in costs:
        TokenUsage.objects.create(model="m", cost_usd=Decimal(cost))
    total = TokenUsage.objects.aggregate(total=cents() if places == 2 else usd_units(places=places))["total"]
    assert total == expected
