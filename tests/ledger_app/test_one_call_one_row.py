"""One call, one row, without request ids too (issue #26 "One call, one row, on every path"): DevTeam's
`task_attempts` row and Ralph V2's report (`SubmitReport(taskId, report, attemptNumber)`) of the same attempt are
one attempt here, so a report naming an attempt describes that attempt's provider call, in whichever order the two
records come and however often either is sent; a report naming no attempt stays a call of its own. The session's
totals are the sums of its usage rows throughout."""

from decimal import Decimal
from typing import Any

import pytest
from django.db.models import Sum
from rest_framework.test import APIClient

from ledger_app.models import TokenUsage
from sessions_app.models import Session, Task, TaskAttempt
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import get_all_sources, get_stat
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

CALL = {"model": "m1", "agent": "coder", "tokens_input": 1200, "tokens_output": 300, "cost_usd": "0.012000"}


def _attempt(api: APIClient, task: Task, expect: int = 201, **fields: Any) -> dict[str, Any]:
    """DevTeam's task_attempts row: attempt 1 of the task with its call's usage."""
    reply = api.post("/api/v1/task-attempts/", {"task": task.pk, "attempt_number": 1, **CALL, **fields}, format="json")
    assert reply.status_code == expect, reply.content
    return reply.json()


def _report(api: APIClient, task: Task, expect: int, **fields: Any) -> dict[str, Any]:
    """Ralph V2's SubmitReport of attempt 1, with the same call's usage."""
    reply = api.post(f"/api/v1/tasks/{task.pk}/report/",
                     {"implementation_report": "done", "attempt_number": 1, **CALL, **fields}, format="json")
    assert reply.status_code == expect, reply.content
    return reply.json()


def _assert_one_call(session: Session, *, calls: int = 1) -> None:
    rows = TokenUsage.objects.filter(session=session)
    assert rows.count() == calls
    sums = rows.aggregate(tokens_in=Sum("input_tokens"), tokens_out=Sum("output_tokens"), cost=Sum("cost_usd"))
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output, session.total_cost_usd) == (
        sums["tokens_in"], sums["tokens_out"], sums["cost"])
    assert (sums["tokens_in"], sums["tokens_out"], sums["cost"]) == (1200 * calls, 300 * calls,
                                                                     Decimal("0.012") * calls)


@pytest.fixture
def task() -> Task:
    return make_task(make_session(), "task-1")


def test_an_attempt_then_its_report_is_one_call(api: APIClient, task: Task) -> None:
    _attempt(api, task, status="success")
    reported = _report(api, task, 200)  # names attempt 1: that attempt, not another
    assert (reported["attempt_number"], reported["implementation_report"], reported["status"]) == (1, "done",
                                                                                                  "success")
    _report(api, task, 200)  # sent again
    _attempt(api, task, 200)  # names attempt 1 too: updated, not created (as report/ answers)
    assert TaskAttempt.objects.filter(task=task).count() == 1
    _assert_one_call(task.session)


def test_a_report_then_its_attempt_is_one_call(api: APIClient, task: Task) -> None:
    assert _report(api, task, 201)["attempt_number"] == 1
    described = _attempt(api, task, 200, status="success", duration_seconds=42)  # DevTeam's row adds what it knows
    assert (described["implementation_report"], described["status"], described["duration_seconds"]) == (
        "done", "success", 42)
    _attempt(api, task, 200, status="success", duration_seconds=42)  # sent again
    _report(api, task, 200)
    assert TaskAttempt.objects.filter(task=task).count() == 1
    _assert_one_call(task.session)


def test_a_report_alone_is_one_call_and_sending_it_again_counts_nothing(api: APIClient, task: Task) -> None:
    _report(api, task, 201)
    _report(api, task, 200)
    _assert_one_call(task.session)


def test_a_report_naming_the_attempt_with_other_figures_replaces_its_call(api: APIClient, task: Task) -> None:
    _attempt(api, task, tokens_input=1, tokens_output=1, cost_usd="0.000010")
    _report(api, task, 200)  # the report's figures for the same call
    _assert_one_call(task.session)
    assert TokenUsage.objects.get().source_id == TaskAttempt.objects.get().pk


def test_a_report_naming_no_attempt_is_a_call_of_its_own(api: APIClient, task: Task) -> None:
    _attempt(api, task)
    reply = api.post(f"/api/v1/tasks/{task.pk}/report/", {"implementation_report": "done", **CALL}, format="json")
    assert (reply.status_code, reply.json()["attempt_number"]) == (201, 2)
    _assert_one_call(task.session, calls=2)


def test_an_attempt_holds_one_report(api: APIClient, task: Task) -> None:
    _report(api, task, 201)
    reply = api.post(f"/api/v1/tasks/{task.pk}/report/",
                     {"implementation_report": "another", "attempt_number": 1}, format="json")
    assert_error_shape(reply, 409, "attempt_reported")
    assert TaskAttempt.objects.get().implementation_report == "done"
    _assert_one_call(task.session)


def test_a_second_record_follows_the_attempt_s_lifecycle(api: APIClient, task: Task) -> None:
    _attempt(api, task, status="success")
    reply = api.post(f"/api/v1/tasks/{task.pk}/report/",
                     {"implementation_report": "done", "attempt_number": 1, "status": "failed"}, format="json")
    assert_error_shape(reply, 409, "invalid_transition")
    assert TaskAttempt.objects.get().status == "success"
    _assert_one_call(task.session)


def test_a_call_token_usage_reports_is_devteam_s_token_usage_whichever_path_came_first(
        api: APIClient, task: Task) -> None:
    session = task.session
    attempt = _attempt(api, task, request_id="req-1")
    assert get_stat(api, "session-cost", session=session.pk) == []  # an attempt's call: Ralph Site's own
    [own] = get_all_sources(api, "session-cost", session=session.pk)
    assert (own["api_calls"], own["total_cost_usd"]) == (1, "0.0120")

    body = {"session": session.pk, "model": "m1", "input_tokens": 1200, "output_tokens": 300, "cost_usd": "0.012",
            "request_id": "req-1"}
    booked = api.post("/api/v1/token-usage/", body, format="json").json()
    assert (booked["source"], booked["source_id"]) == ("token_usage", "")
    [seed] = get_stat(api, "session-cost", session=session.pk)
    assert seed == get_all_sources(api, "session-cost", session=session.pk)[0] == {**own, "api_calls": 1}
    # Token usage still reports the call: the attempt going leaves it.
    assert api.delete(f"/api/v1/task-attempts/{attempt['id']}/").status_code == 204
    _assert_one_call(session)
