"""The seeds' tool signatures as they are written (issue #26 §4, §5): Ralph V2's SubmitReport takes an
attempt number; ralphy names the session its run (`run_id`, on writes and filters of events, tasks and issues)
and writes its own column names (`ts`, `iter_count`). tests/mcp/test_seed_signatures.py walks the MCP tools."""

from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from ledger_app.models import Issue, LedgerEvent
from sessions_app.models import Session, TaskAttempt
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db
TS = 1_767_225_600  # 2026-01-01T00:00:00Z, as ralphy's ledger writes it (epoch seconds)


@pytest.fixture
def run() -> Session:
    return make_session(key="run-20260101-a")


def test_a_report_takes_ralph_v2_s_attempt_number(api: APIClient, run: Session) -> None:
    task = make_task(run, "auth-001")
    reply = api.post(f"/api/v1/tasks/{task.pk}/report/", {"implementation_report": "done", "attempt_number": 3},
                     format="json")
    assert reply.status_code == 201, reply.json()
    assert reply.json()["attempt_number"] == 3
    assert list(TaskAttempt.objects.filter(task=task).values_list("attempt_number", flat=True)) == [3]


def test_ralphy_s_run_id_names_the_session_of_events_tasks_and_issues(api: APIClient, run: Session) -> None:
    other = make_session(key="run-20260102-b")
    for session in (run, other):
        assert api.post("/api/v1/events/", {"run_id": session.key, "type": "x-step"}, format="json").status_code == 201
        assert api.post("/api/v1/tasks/", {"run_id": session.key, "key": "auth-001", "title": "auth"},
                        format="json").status_code == 201
        assert api.post("/api/v1/issues/record/", {"run_id": session.key, "task_key": "auth-001", "kind": "lint",
                                                   "signature": "lint:a", "message": "m"},
                        format="json").status_code == 201
    assert LedgerEvent.objects.filter(session=run, type="x-step").count() == 1
    assert Issue.objects.filter(session=run).count() == 1
    for route in ("events", "tasks", "issues"):
        for reference in (run.key, run.pk):
            rows = api.get(f"/api/v1/{route}/?run_id={reference}").json()["results"]
            assert rows and {row["session"] for row in rows} == {run.pk}, route


def test_ralphy_s_column_names_are_read_as_ours(api: APIClient, run: Session) -> None:
    event = api.post("/api/v1/events/", {"run_id": run.key, "type": "x-step", "ts": TS}, format="json").json()
    assert event["timestamp"] == datetime.fromtimestamp(TS, UTC).isoformat().replace("+00:00", "Z")
    task = api.post("/api/v1/tasks/", {"run_id": run.key, "key": "auth-001", "title": "auth", "iter_count": 2},
                    format="json").json()
    assert task["iteration_count"] == 2
    updated = api.patch(f"/api/v1/tasks/{task['id']}/", {"iter_count": 3}, format="json").json()
    assert updated["iteration_count"] == 3
    issue = api.post("/api/v1/issues/record/", {"run_id": run.key, "task_key": "auth-001", "kind": "lint",
                                                "signature": "lint:a", "message": "m", "ts": TS}, format="json").json()
    assert issue["first_seen_at"] == event["timestamp"]


def test_a_seed_name_and_ours_at_once_is_refused_naming_both(api: APIClient, run: Session) -> None:
    body = {"run_id": run.key, "session": run.pk, "type": "x-step"}
    refused = assert_error_shape(api.post("/api/v1/events/", body, format="json"), 400, "validation_error")
    assert refused["details"] == {"run_id": ["run_id is session: send one of them."]}
    assert not LedgerEvent.objects.exists()
