"""CreateTask / GetTask / UpdateTaskStatus / SubmitReport / SubmitReview / claims / progress / waves."""

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from sessions_app.models import Session, Task, TaskAttempt, TaskDependency
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

TASKS = "/api/v1/tasks/"


@pytest.fixture
def session() -> Session:
    return make_session(key="tasks", current_iteration=2)


def create_task(api: APIClient, session: Session, key: str, **fields: Any) -> Any:
    return api.post(TASKS, {"session": session.pk, "key": key, "title": f"T {key}", "objective": "o", **fields},
                    format="json")


def test_it_creates_a_task_with_dependencies_files_and_criteria_in_one_call(api: APIClient, session: Session) -> None:
    assert create_task(api, session, "task-1").status_code == 201
    response = create_task(api, session, "task-2", depends_on=["task-1"], success_criteria=["tests pass"],
                           files=["src/api.py", "src/**/*.ts", {"path": "secrets.env", "access_type": "forbidden"}])
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["depends_on"] == ["task-1"]
    assert body["success_criteria"] == ["tests pass"]
    assert [(f["path"], f["is_pattern"], f["access_type"]) for f in body["files"]] == [  # sorted by path
        ("secrets.env", False, "forbidden"), ("src/**/*.ts", True, "allowed"), ("src/api.py", False, "allowed")]
    assert body["iteration_created"] == body["iteration_updated"] == 2
    assert body["status"] == "not_started"
    assert body["latest_attempt"] is None


def test_a_retried_offline_create_with_dependencies_and_files_returns_the_same_task(api: APIClient,
                                                                                   session: Session) -> None:
    make_task(session, "task-1")
    body = {"id": "01J9ZQ6Y8K3V5X7B2N4M6P8R0T", "depends_on": ["task-1"], "files": ["b.py", "a/*.py"]}
    first = create_task(api, session, "task-2", **body)
    retry = create_task(api, session, "task-2", **body)
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json()["id"] == first.json()["id"]
    assert create_task(api, session, "task-2", **{**body, "files": ["c.py"]}).status_code == 409


def test_it_refuses_unknown_dependency_keys_naming_them_and_creates_nothing(api: APIClient, session: Session) -> None:
    make_task(session, "task-1")
    response = create_task(api, session, "task-2", depends_on=["task-1", "task-9", "task-8"])
    body = assert_error_shape(response, 400, "unknown_dependency")
    assert body["details"] == {"depends_on": ["task-8", "task-9"]}
    assert "task-8" in body["message"] and "task-9" in body["message"]
    assert not Task.objects.filter(key="task-2").exists()


def test_it_refuses_a_dependency_on_a_task_of_another_session(api: APIClient, session: Session) -> None:
    make_task(make_session(key="other"), "task-1")
    body = assert_error_shape(create_task(api, session, "task-2", depends_on=["task-1"]), 400, "unknown_dependency")
    assert body["details"] == {"depends_on": ["task-1"]}


def test_it_refuses_a_self_dependency(api: APIClient, session: Session) -> None:
    assert_error_shape(create_task(api, session, "task-1", depends_on=["task-1"]), 400, "validation_error")


def test_it_refuses_a_dependency_change_that_closes_a_cycle_naming_it(api: APIClient, session: Session) -> None:
    one = make_task(session, "task-1")
    two = make_task(session, "task-2", depends_on=(one,))
    make_task(session, "task-3", depends_on=(two,))
    response = api.patch(f"{TASKS}{one.pk}/", {"depends_on": ["task-3"]}, format="json")
    body = assert_error_shape(response, 400, "dependency_cycle")
    assert body["details"]["cycle"] == ["task-1", "task-2", "task-3"]
    assert not TaskDependency.objects.filter(task=one).exists()


def test_it_replaces_dependencies_and_files_on_update(api: APIClient, session: Session) -> None:
    make_task(session, "task-1")
    make_task(session, "task-2")
    task_id = create_task(api, session, "task-3", depends_on=["task-1"], files=["a.py"]).json()["id"]
    body = api.patch(f"{TASKS}{task_id}/", {"depends_on": ["task-2"], "files": ["b.py"]}, format="json").json()
    assert body["depends_on"] == ["task-2"]
    assert [f["path"] for f in body["files"]] == ["b.py"]


def test_it_refuses_a_duplicate_key_in_a_session_with_409(api: APIClient, session: Session) -> None:
    make_task(session, "task-1")
    assert_error_shape(create_task(api, session, "task-1"), 409, "conflict")


@pytest.mark.parametrize("body, field", [
    ({"status": "finished"}, "status"),  # `pending` is DevTeam's alias of not_started
    ({"task_type": "sometimes"}, "task_type"),
    ({"colour": "blue"}, "colour"),
    ({"success_criteria": "not a list"}, "success_criteria"),
    ({"files": "a.py"}, "files"),
    ({"files": ["a.py", "a.py"]}, "files"),
    ({"depends_on": "task-1"}, "depends_on"),
])
def test_it_refuses_bad_task_bodies(api: APIClient, session: Session, body: dict[str, Any], field: str) -> None:
    response = create_task(api, session, "task-x", **body)
    assert field in assert_error_shape(response, 400, "validation_error")["details"]


def test_it_requires_a_session_for_a_new_task(api: APIClient) -> None:
    response = api.post(TASKS, {"key": "task-1", "title": "t"}, format="json")
    assert "session" in assert_error_shape(response, 400, "validation_error")["details"]


def test_it_gets_a_task_by_key_with_dependencies_files_and_latest_attempt(api: APIClient, session: Session,
                                                                          django_assert_num_queries) -> None:
    one = make_task(session, "task-1")
    two = make_task(session, "task-2", depends_on=(one,))
    TaskAttempt.objects.create(task=two, attempt_number=1, implementation_report="first")
    TaskAttempt.objects.create(task=two, attempt_number=2, implementation_report="second")
    with django_assert_num_queries(7):  # token auth, session filter, count, page, three prefetches
        body = api.get(TASKS, {"session": session.pk, "key": "task-2"}).json()
    [task] = body["results"]
    assert task["depends_on"] == ["task-1"]
    assert task["latest_attempt"]["attempt_number"] == 2
    with django_assert_num_queries(5):  # token auth, task, three prefetches
        assert api.get(f"{TASKS}{two.pk}/").json()["latest_attempt"]["implementation_report"] == "second"


def test_it_updates_a_status_with_its_annotation_and_times(api: APIClient, session: Session,
                                                           events: list[dict[str, Any]]) -> None:
    task = make_task(session, "task-1")
    response = api.post(f"{TASKS}{task.pk}/status/", {"status": "blocked", "annotation": "(waiting on CI)",
                                                      "agent": "orchestrator"}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert (body["status"], body["status_annotation"]) == ("blocked", "(waiting on CI)")
    assert not body["completed_at"]
    assert api.post(f"{TASKS}{task.pk}/status/", {"status": "skipped"}, format="json").json()["completed_at"]
    assert [(e["event_type"], e["task_key"], e["data"]["to"]) for e in events] == [
        ("task_status_changed", "task-1", "blocked"), ("task_status_changed", "task-1", "skipped")]
    assert events[0]["agent"] == "orchestrator" and events[0]["session_id"] == session.pk


def test_it_refuses_a_bad_status_naming_the_allowed_ones(api: APIClient, session: Session) -> None:
    task = make_task(session, "task-1")
    body = assert_error_shape(api.post(f"{TASKS}{task.pk}/status/", {"status": "finished"}, format="json"), 400,
                              "validation_error")
    assert "not_started" in body["message"] and "skipped" in body["message"]


def test_it_numbers_reports_and_adds_their_usage_to_the_session(api: APIClient, session: Session) -> None:
    task = make_task(session, "task-1")
    report = {"implementation_report": "PART 1", "tokens_input": 100, "tokens_output": 20, "cost_usd": "0.5"}
    first = api.post(f"{TASKS}{task.pk}/report/", report, format="json")
    second = api.post(f"{TASKS}{task.pk}/report/", report, format="json")
    assert first.status_code == second.status_code == 201
    assert (first.json()["attempt_number"], second.json()["attempt_number"]) == (1, 2)
    assert first.json()["iteration_number"] == 2 and first.json()["session"] == session.pk
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output, session.total_cost_usd) == (
        200, 40, Decimal("1.000000"))


def test_it_refuses_an_empty_report(api: APIClient, session: Session) -> None:
    task = make_task(session, "task-1")
    assert_error_shape(api.post(f"{TASKS}{task.pk}/report/", {}, format="json"), 400, "validation_error")


def test_it_reviews_the_latest_attempt(api: APIClient, session: Session) -> None:
    task = make_task(session, "task-1")
    for number in (1, 2):
        TaskAttempt.objects.create(task=task, attempt_number=number)
    response = api.post(f"{TASKS}{task.pk}/review/", {"review_report": "PART 2", "verdict": "qualified"},
                        format="json")
    assert response.status_code == 200
    assert (response.json()["attempt_number"], response.json()["review_verdict"]) == (2, "qualified")
    assert TaskAttempt.objects.get(attempt_number=2).reviewed_at is not None
    assert TaskAttempt.objects.get(attempt_number=1).review_verdict == ""


def test_it_refuses_a_review_without_a_report_and_a_bad_verdict(api: APIClient, session: Session) -> None:
    task = make_task(session, "task-1")
    review = {"review_report": "x", "verdict": "qualified"}
    assert_error_shape(api.post(f"{TASKS}{task.pk}/review/", review, format="json"), 409, "no_report")
    TaskAttempt.objects.create(task=task, attempt_number=1)
    body = assert_error_shape(api.post(f"{TASKS}{task.pk}/review/", {**review, "verdict": "ok"}, format="json"),
                              400, "validation_error")
    assert "qualified" in body["message"]


def claim(api: APIClient, session: Session, agent: str = "executor-1", lease: int = 600) -> Any:
    return api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": agent, "lease_seconds": lease},
                    format="json")


def test_it_claims_the_next_ready_task_by_wave_sequence_and_key(api: APIClient, session: Session,
                                                                events: list[dict[str, Any]]) -> None:
    session.max_concurrency = 10
    session.save()
    parallel = {"task_type": "parallelizable"}
    first = make_task(session, "task-b", wave=1, **parallel)
    make_task(session, "task-a", wave=1, **parallel)
    make_task(session, "task-0", wave=2, **parallel)
    make_task(session, "task-blocked", wave=1, depends_on=(first,), **parallel)
    make_task(session, "task-seq", wave=1, sequence=-1, status="completed")
    claimed = [claim(api, session).json()["key"] for _ in range(3)]
    assert claimed == ["task-a", "task-b", "task-0"]
    body = assert_error_shape(claim(api, session), 409, "nothing_to_claim")
    assert body["details"]["reason"] == "waiting" and body["details"]["in_progress"] == ["task-0", "task-a", "task-b"]
    task = Task.objects.get(key="task-a")
    assert (task.status, task.claimed_by, task.assigned_agent) == ("in_progress", "executor-1", "executor-1")
    assert task.lease_expires_at > timezone.now() + timedelta(seconds=590)
    assert [e["event_type"] for e in events] == ["task_claimed"] * 3


def test_a_completed_dependency_makes_a_task_ready(api: APIClient, session: Session) -> None:
    first = make_task(session, "task-1", status="completed")
    make_task(session, "task-2", depends_on=(first,))
    assert claim(api, session).json()["key"] == "task-2"


def test_an_expired_lease_makes_a_task_claimable_again(api: APIClient, session: Session) -> None:
    make_task(session, "task-1", status="in_progress", claimed_by="gone", task_type="parallelizable",
              lease_expires_at=timezone.now() - timedelta(seconds=1))
    make_task(session, "task-2", status="in_progress", claimed_by="alive", task_type="parallelizable",
              lease_expires_at=timezone.now() + timedelta(hours=1))
    body = claim(api, session, agent="executor-2").json()
    assert (body["key"], body["claimed_by"]) == ("task-1", "executor-2")
    assert assert_error_shape(claim(api, session), 409, "nothing_to_claim")["details"]["reason"] == "waiting"


def test_only_the_holder_heartbeats_and_releases(api: APIClient, session: Session,
                                                 events: list[dict[str, Any]]) -> None:
    make_task(session, "task-1")
    claimed = claim(api, session, lease=60).json()
    task_id, fence = claimed["id"], claimed["claim"]
    assert_error_shape(api.post(f"{TASKS}{task_id}/heartbeat/", {"agent": "intruder"}, format="json"), 409,
                       "claim_required")
    assert_error_shape(api.post(f"{TASKS}{task_id}/heartbeat/", {"agent": "intruder", "claim": fence},
                                format="json"), 409, "not_claim_holder")
    beat = api.post(f"{TASKS}{task_id}/heartbeat/", {"agent": "executor-1", "lease_seconds": 3600, "claim": fence},
                    format="json")
    assert beat.status_code == 200
    assert Task.objects.get(pk=task_id).lease_expires_at > timezone.now() + timedelta(seconds=3000)
    assert_error_shape(api.post(f"{TASKS}{task_id}/release/", {"agent": "intruder", "claim": fence}, format="json"),
                       409, "not_claim_holder")
    released = api.post(f"{TASKS}{task_id}/release/", {"agent": "executor-1", "reason": "out of budget",
                                                       "claim": fence}, format="json").json()
    assert (released["status"], released["claimed_by"], released["lease_expires_at"]) == ("not_started", "", None)
    assert [e["event_type"] for e in events] == ["task_claimed", "task_released"]
    assert claim(api, session, agent="executor-3").json()["id"] == task_id


@pytest.mark.parametrize("body", [{}, {"agent": "a", "lease_seconds": 0}, {"agent": "a", "lease_seconds": "x"},
                                  {"agent": "a", "extra": 1}])
def test_it_refuses_bad_claims(api: APIClient, session: Session, body: dict[str, Any]) -> None:
    response = api.post(f"/api/v1/sessions/{session.pk}/claim-task/", body, format="json")
    assert_error_shape(response, 400, "validation_error")


def test_claiming_in_an_unknown_session_is_a_404(api: APIClient) -> None:
    response = api.post("/api/v1/sessions/01ARZ3NDEKTSV4RRFFQ69G5FAV/claim-task/", {"agent": "a"}, format="json")
    assert_error_shape(response, 404, "not_found")


def test_it_reports_progress_per_status_and_wave_in_constant_queries(api: APIClient, session: Session,
                                                                     django_assert_num_queries) -> None:
    make_task(session, "task-1", wave=1, status="completed")
    make_task(session, "task-2", wave=1)
    make_task(session, "task-3", wave=2, status="failed")
    with django_assert_num_queries(4):  # token auth, session, tasks, dependencies
        body = api.get(f"/api/v1/sessions/{session.pk}/progress/").json()
    assert body["total"] == 3
    assert body["by_status"]["completed"] == body["by_status"]["not_started"] == body["by_status"]["failed"] == 1
    assert [(w["wave"], w["total"], w["by_status"]["completed"]) for w in body["by_wave"]] == [(1, 2, 1), (2, 1, 0)]
    assert [t["key"] for t in body["tasks"]] == ["task-1", "task-2", "task-3"]
    for index in range(4, 30):
        make_task(session, f"task-{index}", wave=3)
    with django_assert_num_queries(4):
        assert api.get(f"/api/v1/sessions/{session.pk}/progress/").json()["total"] == 29


def test_a_task_status_outside_the_enum_is_counted_not_a_500(api: APIClient, admin_client, session: Session) -> None:
    """Nothing the services write stores one, but a row written past them (SQL, an old import) may."""
    make_task(session, "task-1", wave=1)
    Task.objects.filter(pk=make_task(session, "task-2", wave=1).pk).update(status="legacy_waiting")
    body = api.get(f"/api/v1/sessions/{session.pk}/progress/").json()
    assert (body["total"], body["by_status"]["legacy_waiting"], body["by_status"]["not_started"]) == (2, 1, 1)
    assert body["by_wave"][0]["by_status"]["legacy_waiting"] == 1
    graph = admin_client.get(f"/admin/sessions_app/session/{session.pk}/task-graph/")
    assert graph.status_code == 200 and b"legacy_waiting" in graph.content


def test_it_computes_waves_by_kahn_layering_in_constant_queries(api: APIClient, session: Session,
                                                                django_assert_num_queries) -> None:
    one = make_task(session, "task-1")
    two = make_task(session, "task-2")
    three = make_task(session, "task-3", depends_on=(one, two))
    make_task(session, "task-4", depends_on=(three,))
    make_task(session, "task-5", depends_on=(one,))
    with django_assert_num_queries(4):  # token auth, session, tasks, dependencies
        body = api.get(f"/api/v1/sessions/{session.pk}/waves/").json()
    assert body == [{"wave": 1, "tasks": ["task-1", "task-2"]}, {"wave": 2, "tasks": ["task-3", "task-5"]},
                    {"wave": 3, "tasks": ["task-4"]}]
    previous = Task.objects.get(key="task-4")
    for index in range(6, 30):  # a chain: one more wave per task
        previous = make_task(session, f"task-{index}", depends_on=(previous,))
    with django_assert_num_queries(4):
        assert len(api.get(f"/api/v1/sessions/{session.pk}/waves/").json()) == 27


def test_a_cycle_in_the_graph_is_a_409_listing_it(api: APIClient, session: Session) -> None:
    one = make_task(session, "task-1")
    two = make_task(session, "task-2", depends_on=(one,))
    TaskDependency.objects.create(task=one, depends_on=two)
    make_task(session, "task-3")
    body = assert_error_shape(api.get(f"/api/v1/sessions/{session.pk}/waves/"), 409, "dependency_cycle")
    assert body["details"] == {"cycle": ["task-1", "task-2"]}
