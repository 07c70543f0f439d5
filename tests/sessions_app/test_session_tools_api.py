"""Plan, questions, feedback, signals, transitions, resume/finish and agent invocations."""

import base64
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from sessions_app.ledger import ledger
from sessions_app.models import (
    ATTACHMENT_MAX_BYTES,
    AgentInvocation,
    FeedbackBatch,
    Iteration,
    PlanSnapshot,
    Question,
    Session,
    Signal,
)
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_batch, make_session, make_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def session() -> Session:
    return make_session(key="tools")


def url(session: Session, verb: str) -> str:
    return f"/api/v1/sessions/{session.pk}/{verb}/"


def test_it_gets_and_updates_the_plan_keeping_one_snapshot_per_earlier_iteration(api: APIClient,
                                                                                  session: Session) -> None:
    assert api.get(url(session, "plan")).json()["content"] == ""
    api.put(url(session, "plan"), {"content": "# v1"}, format="json")
    api.put(url(session, "plan"), {"content": "# v1.1"}, format="json")
    assert not PlanSnapshot.objects.exists()  # same iteration: the plan is simply replaced
    Session.objects.filter(pk=session.pk).update(current_iteration=2)
    body = api.put(url(session, "plan"), {"content": "# v2"}, format="json").json()
    assert body == {"session": session.pk, "content": "# v2", "iteration": 2, "snapshots": [1]}
    assert PlanSnapshot.objects.get().content == "# v1.1"
    assert api.get(url(session, "plan")).json()["content"] == "# v2"


def test_it_refuses_a_plan_update_without_content(api: APIClient, session: Session) -> None:
    assert_error_shape(api.put(url(session, "plan"), {"text": "x"}, format="json"), 400, "validation_error")


def test_it_lists_questions_by_category_and_answers_one(api: APIClient, session: Session,
                                                        events: list[dict[str, Any]]) -> None:
    created = api.post("/api/v1/questions/", {"session": session.pk, "key": "Q-TECH-001", "category": "technical",
                                              "text": "Which DB?"}, format="json")
    assert created.status_code == 201
    Question.objects.create(session=session, key="Q-RISK-001", category="risks", text="What breaks?")
    listed = api.get("/api/v1/questions/", {"session": session.pk, "category": "technical"}).json()["results"]
    assert [q["key"] for q in listed] == ["Q-TECH-001"]
    answer = {"answer": "PostgreSQL", "answer_source": "docs", "answer_confidence": "high", "agent": "questioner"}
    body = api.post(f"/api/v1/questions/{created.json()['id']}/answer/", answer, format="json").json()
    assert (body["status"], body["answer"], body["answer_confidence"]) == ("answered", "PostgreSQL", "high")
    assert body["answered_at"]
    assert [(e["event_type"], e["agent"]) for e in events] == [("question_answered", "questioner")]


def test_it_refuses_a_bad_answer_and_a_duplicate_question_key(api: APIClient, session: Session) -> None:
    question = Question.objects.create(session=session, key="Q-TECH-001", category="technical", text="?")
    body = assert_error_shape(api.post(f"/api/v1/questions/{question.pk}/answer/",
                                       {"answer": "x", "answer_confidence": "sure"}, format="json"),
                              400, "validation_error")
    assert "low, medium, high" in body["message"]
    duplicate = {"session": session.pk, "key": "Q-TECH-001", "category": "technical", "text": "again"}
    assert_error_shape(api.post("/api/v1/questions/", duplicate, format="json"), 409, "conflict")


def feedback_body(iteration: Iteration, **extra: Any) -> dict[str, Any]:
    return {"iteration": iteration.pk, "batch_timestamp": "20260209-143000", "summary": "review",
            "items": [{"issue_key": "ISS-001", "severity": "critical", "description": "crash"},
                      {"issue_key": "ISS-002", "severity": "quality", "description": "naming"}],
            "attachments": [{"file_name": "log.txt", "content": base64.b64encode(b"trace").decode(),
                             "content_type": "text/plain"}], **extra}


def test_it_creates_a_feedback_batch_with_items_and_attachments_and_serves_them(api: APIClient,
                                                                               session: Session) -> None:
    iteration = Iteration.objects.create(session=session, number=1)
    created = api.post("/api/v1/feedback-batches/", feedback_body(iteration), format="json")
    assert created.status_code == 201, created.content
    assert created.json()["session"] == session.pk
    make_batch(session, number=2)
    body = api.get(url(session, "feedback"), {"iteration": 1}).json()
    [batch] = body
    assert [i["issue_key"] for i in batch["items"]] == ["ISS-001", "ISS-002"]
    [attachment] = batch["attachment_files"]
    assert (attachment["file_name"], attachment["size"]) == ("log.txt", 5)
    assert "content" not in attachment
    assert len(api.get(url(session, "feedback")).json()) == 2
    download = api.get(f"/api/v1/feedback-attachments/{attachment['id']}/download/")
    assert download.status_code == 200
    assert download.content == b"trace"
    assert download["Content-Type"] == "text/plain"
    assert 'filename="log.txt"' in download["Content-Disposition"]
    detail = api.get(f"/api/v1/feedback-attachments/{attachment['id']}/").json()
    assert base64.b64decode(detail["content"]) == b"trace"


def test_feedback_is_listed_in_constant_queries(api: APIClient, session: Session, django_assert_num_queries) -> None:
    for number in range(1, 4):
        make_batch(session, number=number).items.create(issue_key="ISS-1", severity="critical", description="x")
    with django_assert_num_queries(5):  # token auth, session, batches, items, attachments
        assert len(api.get(url(session, "feedback")).json()) == 3
    for number in range(4, 12):
        make_batch(session, number=number)
    with django_assert_num_queries(5):
        assert len(api.get(url(session, "feedback")).json()) == 11


def test_a_bad_feedback_batch_creates_nothing(api: APIClient, session: Session) -> None:
    iteration = Iteration.objects.create(session=session, number=1)
    duplicate_items = feedback_body(iteration)
    duplicate_items["items"][1]["issue_key"] = "ISS-001"
    assert_error_shape(api.post("/api/v1/feedback-batches/", duplicate_items, format="json"), 400,
                       "validation_error")
    bad_severity = feedback_body(iteration)
    bad_severity["items"][0]["severity"] = "meh"
    assert_error_shape(api.post("/api/v1/feedback-batches/", bad_severity, format="json"), 400, "validation_error")
    assert_error_shape(api.get(url(session, "feedback"), {"iteration": "one"}), 400, "validation_error")
    assert not FeedbackBatch.objects.exists()


def test_an_oversized_attachment_is_refused(api: APIClient, session: Session) -> None:
    batch = make_batch(session)
    content = base64.b64encode(b"x" * (ATTACHMENT_MAX_BYTES + 1)).decode()
    response = api.post("/api/v1/feedback-attachments/", {"batch": batch.pk, "file_name": "big.bin",
                                                          "content": content}, format="json")
    body = assert_error_shape(response, 400, "validation_error")
    assert str(ATTACHMENT_MAX_BYTES) in body["message"]


def test_it_resolves_a_feedback_item(api: APIClient, session: Session) -> None:
    item = make_batch(session).items.create(issue_key="ISS-001", severity="critical", description="x")
    body = api.post(f"/api/v1/feedback-items/{item.pk}/resolve/").json()
    assert body["is_resolved"] is True and body["resolved_at"]


def test_it_polls_signals_oldest_first_once_each_then_204(api: APIClient, session: Session,
                                                          events: list[dict[str, Any]]) -> None:
    for kind in ("steer", "pause"):
        assert api.post("/api/v1/signals/", {"session": session.pk, "type": kind, "message": kind},
                        format="json").status_code == 201
    first = api.post(url(session, "poll-signal"), {"agent": "orchestrator"}, format="json").json()
    second = api.post(url(session, "poll-signal"), format="json").json()
    assert (first["type"], first["is_processed"], first["processed_by"]) == ("steer", True, "orchestrator")
    assert second["type"] == "pause"
    assert api.post(url(session, "poll-signal"), format="json").status_code == 204
    assert [e["event_type"] for e in events] == ["signal_sent", "signal_sent", "signal_processed", "signal_processed"]


def test_it_records_a_signal_already_processed_as_ralph_v2_writes_it(api: APIClient, session: Session) -> None:
    body = api.post("/api/v1/signals/", {"session": session.pk, "type": "info", "is_processed": True},
                    format="json").json()
    assert body["is_processed"] is True and body["processed_at"]
    assert api.post(url(session, "poll-signal"), format="json").status_code == 204


def test_it_refuses_a_bad_signal_type_naming_the_allowed_ones(api: APIClient, session: Session) -> None:
    body = assert_error_shape(api.post("/api/v1/signals/", {"session": session.pk, "type": "shout"}, format="json"),
                              400, "validation_error")
    assert "steer, pause, stop, info" in body["message"]


def test_it_transitions_the_orchestrator_state(api: APIClient, session: Session,
                                               events: list[dict[str, Any]]) -> None:
    body = api.post(url(session, "transition"), {"state": "executing_batch", "current_wave": 2,
                                                 "agent": "orchestrator"}, format="json").json()
    assert (body["state"], body["current_wave"]) == ("executing_batch", 2)
    [event] = events
    assert (event["event_type"], event["data"]["from"], event["data"]["to"]) == (
        "session_state_changed", "initializing", "executing_batch")
    assert_error_shape(api.post(url(session, "transition"), {"state": "dreaming"}, format="json"), 400,
                       "validation_error")


def test_a_transition_to_a_new_iteration_records_the_iteration(api: APIClient, session: Session) -> None:
    api.post(url(session, "transition"), {"state": "replanning", "current_iteration": 2}, format="json")
    api.post(url(session, "transition"), {"state": "planning", "current_iteration": 2}, format="json")
    assert list(Iteration.objects.filter(session=session).values_list("number", flat=True)) == [2]


def test_an_invocation_naming_its_task_by_key_is_linked_to_it(api: APIClient, session: Session) -> None:
    task = make_task(session, "TASK-001")
    body = api.post("/api/v1/agent-invocations/", {"session": session.pk, "task_key": "TASK-001",
                                                   "agent": "api-developer-typescript"}, format="json").json()
    assert (body["task"], body["task_key"]) == (task.pk, "TASK-001")


def test_it_lists_interrupted_sessions(api: APIClient) -> None:
    long_ago = timezone.now() - timedelta(hours=1)
    stale = make_session(key="stale", project_path="/repo", last_activity_at=long_ago)
    make_session(key="stale-elsewhere", project_path="/other", last_activity_at=long_ago)
    make_session(key="fresh", project_path="/repo")
    make_session(key="done", project_path="/repo", status="completed", last_activity_at=long_ago)
    body = api.get("/api/v1/sessions/interrupted/", {"project_path": "/repo"}).json()
    assert [s["key"] for s in body["results"]] == ["stale"]
    assert len(api.get("/api/v1/sessions/interrupted/").json()["results"]) == 2
    assert len(api.get("/api/v1/sessions/interrupted/", {"idle_seconds": 7200}).json()["results"]) == 0
    assert_error_shape(api.get("/api/v1/sessions/interrupted/", {"idle_seconds": "-1"}), 400, "validation_error")
    assert stale.pk


def test_it_lists_interrupted_sessions_in_constant_queries(api: APIClient, django_assert_num_queries) -> None:
    long_ago = timezone.now() - timedelta(hours=1)
    for count in (2, 25):
        while Session.objects.count() < count:
            make_session(last_activity_at=long_ago)
        with django_assert_num_queries(3):  # token auth, count, page
            body = api.get("/api/v1/sessions/interrupted/", {"page_size": 50}).json()
        assert body["count"] == count


def test_it_resumes_a_session_with_the_ledgers_last_checkpoint(api: APIClient, events: list[dict[str, Any]],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    session = make_session(key="resumable", status="stopped", current_iteration=3,
                           last_activity_at=timezone.now() - timedelta(hours=1))
    make_task(session, "task-1", status="completed")
    make_task(session, "task-2", status="in_progress", started_at=timezone.now())
    make_task(session, "task-3")

    def checkpoint_last(*, session_id: str) -> dict[str, Any]:
        return {"session": session_id, "git_ref": "abc123"}

    monkeypatch.setattr(ledger(), "checkpoint_last", checkpoint_last)
    body = api.post(url(session, "resume"), {"agent": "cli"}, format="json").json()
    assert body == {"session": session.pk, "iteration": 3, "state": "initializing", "wave": None,
                    "current_task": "task-2", "next_task": "task-3",
                    "last_checkpoint": {"session": session.pk, "git_ref": "abc123"}}
    session.refresh_from_db()
    assert session.status == "running" and session.last_activity_at > timezone.now() - timedelta(minutes=1)
    assert [e["event_type"] for e in events] == ["session_resumed"]


def test_it_finishes_a_session(api: APIClient, session: Session, events: list[dict[str, Any]]) -> None:
    body = api.post(url(session, "finish"), {"status": "completed", "exit_reason": "all tasks done"},
                    format="json").json()
    assert (body["status"], body["exit_reason"]) == ("completed", "all tasks done")
    assert body["ended_at"]
    assert [e["event_type"] for e in events] == ["session_finished"]
    assert_error_shape(api.post(url(session, "finish"), {"status": "running"}, format="json"), 400,
                       "validation_error")


def test_an_agent_invocation_is_started_then_completed_and_its_usage_counted_once(api: APIClient,
                                                                                 session: Session) -> None:
    task = make_task(session, "task-1")
    started = api.post("/api/v1/agent-invocations/", {"session": session.pk, "task": task.pk, "role": "executor",
                                                      "agent": "executor", "model": "gpt-5", "prompt": "go"},
                       format="json").json()
    assert (started["status"], started["task_key"]) == ("started", "task-1")
    done = {"response": "done", "status": "success", "duration_ms": 1200, "tokens_input": 1000,
            "tokens_output": 300, "cost_usd": "0.012"}
    body = api.post(f"/api/v1/agent-invocations/{started['id']}/complete/", done, format="json").json()
    assert (body["status"], body["duration_ms"], body["cost_usd"]) == ("success", 1200, "0.012000")
    assert body["completed_at"]
    api.post(f"/api/v1/agent-invocations/{started['id']}/complete/", {**done, "tokens_input": 1500}, format="json")
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output, session.total_cost_usd) == (
        1500, 300, Decimal("0.012"))
    api.delete(f"/api/v1/agent-invocations/{started['id']}/")
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output, session.total_cost_usd) == (0, 0, 0)


def test_an_invocation_refuses_a_task_of_another_session_and_a_bad_status(api: APIClient, session: Session) -> None:
    foreign = make_task(make_session(key="elsewhere"), "task-1")
    response = api.post("/api/v1/agent-invocations/", {"session": session.pk, "task": foreign.pk}, format="json")
    assert "task" in assert_error_shape(response, 400, "validation_error")["details"]
    invocation = AgentInvocation.objects.create(session=session)
    body = assert_error_shape(api.post(f"/api/v1/agent-invocations/{invocation.pk}/complete/",
                                       {"status": "fine"}, format="json"), 400, "validation_error")
    assert "escalated" in body["message"]


def test_attempt_usage_follows_updates_and_deletes(api: APIClient, session: Session) -> None:
    task = make_task(session, "task-1")
    attempt = api.post("/api/v1/task-attempts/", {"task": task.pk, "tokens_input": 10, "cost_usd": "1"},
                       format="json").json()
    api.patch(f"/api/v1/task-attempts/{attempt['id']}/", {"tokens_input": 25, "cost_usd": "2"}, format="json")
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_cost_usd) == (25, Decimal(2))
    api.delete(f"/api/v1/task-attempts/{attempt['id']}/")
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_cost_usd) == (0, 0)


def test_activity_touches_the_session(api: APIClient) -> None:
    session = make_session(key="idle", last_activity_at=timezone.now() - timedelta(hours=2))
    api.post("/api/v1/signals/", {"session": session.pk, "type": "info"}, format="json")
    session.refresh_from_db()
    assert session.last_activity_at > timezone.now() - timedelta(minutes=1)
    assert Signal.objects.count() == 1


def test_changing_an_invocations_task_changes_its_task_key(api: APIClient, session: Session) -> None:
    first, second = make_task(session, "task-1"), make_task(session, "task-2")
    invocation = api.post("/api/v1/agent-invocations/", {"session": session.pk, "task": first.pk},
                          format="json").json()
    moved = api.patch(f"/api/v1/agent-invocations/{invocation['id']}/", {"task": second.pk}, format="json").json()
    assert (moved["task"], moved["task_key"]) == (second.pk, "task-2")
    by_key = api.patch(f"/api/v1/agent-invocations/{invocation['id']}/", {"task_key": "task-1"},
                       format="json").json()
    assert (by_key["task"], by_key["task_key"]) == (first.pk, "task-1")
    cleared = api.patch(f"/api/v1/agent-invocations/{invocation['id']}/", {"task": None}, format="json").json()
    assert (cleared["task"], cleared["task_key"]) == (None, "")
    unknown = api.patch(f"/api/v1/agent-invocations/{invocation['id']}/", {"task_key": "TASK-EXTERNAL"},
                        format="json").json()
    assert (unknown["task"], unknown["task_key"]) == (None, "TASK-EXTERNAL")
    stored = AgentInvocation.objects.get(pk=invocation["id"])
    assert (stored.task_id, stored.task_key) == (None, "TASK-EXTERNAL")


def test_it_refuses_a_task_key_that_is_not_the_tasks_key(api: APIClient, session: Session) -> None:
    task = make_task(session, "task-1")
    make_task(session, "task-2")
    body = assert_error_shape(api.post("/api/v1/agent-invocations/", {
        "session": session.pk, "task": task.pk, "task_key": "task-2"}, format="json"), 400, "validation_error")
    assert "task_key" in body["details"]
    invocation = api.post("/api/v1/agent-invocations/", {"session": session.pk, "task": task.pk, "task_key": "task-1"},
                          format="json").json()
    assert_error_shape(api.patch(f"/api/v1/agent-invocations/{invocation['id']}/", {
        "task": task.pk, "task_key": "task-2"}, format="json"), 400, "validation_error")
    assert AgentInvocation.objects.get(pk=invocation["id"]).task_key == "task-1"


def test_renaming_a_task_renames_it_on_its_invocations(api: APIClient, session: Session) -> None:
    task = make_task(session, "task-1")
    invocation = api.post("/api/v1/agent-invocations/", {"session": session.pk, "task": task.pk},
                          format="json").json()
    assert api.patch(f"/api/v1/tasks/{task.pk}/", {"key": "TASK-001"}, format="json").status_code == 200
    assert api.get(f"/api/v1/agent-invocations/{invocation['id']}/").json()["task_key"] == "TASK-001"
