"""Hostile input against the orchestration actions: each is a 4xx with the error shape, never a 500, and
never leaves rows that break an invariant (same-session links, a batch in its iteration's session)."""

import base64
from typing import Any

import pytest
from rest_framework.test import APIClient

from ralphsite.core.money import usd_max
from sessions_app.models import ContextBudget, FeedbackAttachment, Iteration, Session, Task
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_batch, make_session, make_task

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

HUGE = 10**20  # past every integer column on every backend


@pytest.fixture
def session() -> Session:
    return make_session(key="hostile")


@pytest.mark.parametrize("method, verb, body, field", [
    ("post", "transition", {"state": "planning", "current_iteration": HUGE}, "current_iteration"),
    ("post", "transition", {"state": "planning", "current_wave": HUGE}, "current_wave"),
    ("get", "feedback", {"iteration": HUGE}, "iteration"),
    ("get", "feedback", {"iteration": "0"}, "iteration"),
])
def test_it_refuses_out_of_range_numbers_in_session_actions(api: APIClient, session: Session, method: str,
                                                            verb: str, body: dict[str, Any], field: str) -> None:
    url = f"/api/v1/sessions/{session.pk}/{verb}/"
    response = api.post(url, body, format="json") if method == "post" else api.get(url, body)
    assert field in assert_error_shape(response, 400, "validation_error")["details"]
    session.refresh_from_db()
    assert (session.state, session.current_iteration, session.current_wave) == ("initializing", 1, None)


@pytest.mark.parametrize("idle_seconds", [HUGE, "-1", "soon"])
def test_it_refuses_a_bad_idle_threshold_naming_it(api: APIClient, idle_seconds: Any) -> None:
    response = api.get("/api/v1/sessions/interrupted/", {"idle_seconds": idle_seconds})
    assert list(assert_error_shape(response, 400, "validation_error")["details"]) == ["idle_seconds"]


def test_it_refuses_context_usage_past_the_largest_token_count(api: APIClient, session: Session) -> None:
    budget = ContextBudget.objects.create(session=session, model="opus", context_limit=1000, current_usage=10)
    url = f"/api/v1/context-budgets/{budget.pk}/record-usage/"
    for body, field in [({"tokens_added": HUGE}, "tokens_added"), ({"current_usage": HUGE}, "current_usage"),
                        ({"tokens_added": 2**63 - 1}, "tokens_added")]:
        assert field in assert_error_shape(api.post(url, body, format="json"), 400, "validation_error")["details"]
    budget.refresh_from_db()
    assert budget.current_usage == 10


def attachment(**fields: Any) -> dict[str, Any]:
    return {"file_name": "log.txt", "content": base64.b64encode(b"trace").decode(), **fields}


@pytest.mark.parametrize("fields, field", [
    ({"file_name": "a\r\nSet-Cookie: x.txt"}, "file_name"),
    ({"file_name": "tab\there.txt"}, "file_name"),
    ({"content_type": "text/plain\r\nX-Injected: 1"}, "content_type"),
    ({"content_type": "not a media type"}, "content_type"),
])
def test_it_refuses_attachment_names_and_media_types_that_would_break_a_download(
        api: APIClient, session: Session, fields: dict[str, Any], field: str) -> None:
    batch = make_batch(session)
    alone = api.post("/api/v1/feedback-attachments/", {"batch": batch.pk, **attachment(**fields)}, format="json")
    assert field in assert_error_shape(alone, 400, "validation_error")["details"]
    iteration = Iteration.objects.create(session=session, number=2)
    in_batch = api.post("/api/v1/feedback-batches/", {"iteration": iteration.pk, "batch_timestamp": "t",
                                                      "attachments": [attachment(**fields)]}, format="json")
    assert_error_shape(in_batch, 400, "validation_error")
    assert not FeedbackAttachment.objects.exists()


def test_a_stored_attachment_with_an_unsafe_name_or_type_still_downloads_safely(api: APIClient,
                                                                                session: Session) -> None:
    stored = make_batch(session).attachments.create(file_name="a\r\nb ✓.txt", content=b"x",
                                                    content_type="text/plain\r\nX-Injected: 1")
    response = api.get(f"/api/v1/feedback-attachments/{stored.pk}/download/")
    assert response.status_code == 200 and response.content == b"x"
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"] == "attachment; filename*=utf-8''a%0D%0Ab%20%E2%9C%93.txt"
    assert "X-Injected" not in response


def test_a_batch_moved_to_another_iteration_moves_to_its_session(api: APIClient, session: Session) -> None:
    batch = make_batch(session)
    elsewhere = Iteration.objects.create(session=make_session(key="elsewhere"), number=1)
    body = api.patch(f"/api/v1/feedback-batches/{batch.pk}/", {"iteration": elsewhere.pk}, format="json").json()
    assert (body["iteration"], body["session"]) == (elsewhere.pk, elsewhere.session_id)
    assert [b["id"] for b in api.get(f"/api/v1/sessions/{elsewhere.session_id}/feedback/").json()] == [batch.pk]
    assert api.get(f"/api/v1/sessions/{session.pk}/feedback/").json() == []


def patch_task(api: APIClient, task: Task, **body: Any) -> Any:
    return api.patch(f"/api/v1/tasks/{task.pk}/", body, format="json")


def test_a_parent_is_a_task_of_the_same_session_and_never_a_descendant(api: APIClient, session: Session) -> None:
    epic = make_task(session, "epic")
    story = make_task(session, "story", parent=epic)
    foreign = make_task(make_session(key="foreign"), "epic")
    for task, parent in [(story, foreign), (epic, story), (epic, epic)]:  # other session, a loop, itself
        response = patch_task(api, task, parent=parent.pk)
        assert "parent" in assert_error_shape(response, 400, "validation_error")["details"], (task, parent)
    created = api.post("/api/v1/tasks/", {"session": session.pk, "key": "sub", "title": "t", "parent": foreign.pk},
                       format="json")
    assert "parent" in assert_error_shape(created, 400, "validation_error")["details"]
    assert patch_task(api, make_task(session, "leaf"), parent=story.pk).json()["parent"] == story.pk
    epic.refresh_from_db()
    story.refresh_from_db()
    assert (epic.parent_id, story.parent_id) == (None, epic.pk)
    assert not Task.objects.filter(key="sub").exists()


def test_a_task_with_dependency_edges_stays_in_its_session(api: APIClient, session: Session) -> None:
    first = make_task(session, "task-1")
    second = make_task(session, "task-2", depends_on=(first,))
    lone = make_task(session, "task-3")
    other = make_session(key="other")
    for task in (first, second):  # a dependency and a dependent
        response = patch_task(api, task, session=other.pk)
        assert "session" in assert_error_shape(response, 400, "validation_error")["details"]
    assert set(Task.objects.filter(session=session).values_list("key", flat=True)) == {"task-1", "task-2", "task-3"}
    assert patch_task(api, lone, session=other.pk).json()["session"] == other.pk


@pytest.mark.parametrize("first, second", [
    ({"tokens_input": 2**63 - 6}, {"tokens_input": 10}),
    ({"tokens_input": 2**62 - 1, "tokens_output": 2**62 - 1}, {"tokens_output": 2}),  # token_count = in + out
    ({"cost_usd": str(usd_max() - 1)}, {"cost_usd": "1.5"}),  # the most the backend's money columns hold, less $1
])
def test_a_report_that_would_overflow_the_session_totals_is_refused_and_not_stored(
        api: APIClient, session: Session, first: dict[str, Any], second: dict[str, Any]) -> None:
    task = make_task(session, "task-1")
    url = f"/api/v1/tasks/{task.pk}/report/"
    assert api.post(url, {"implementation_report": "one", "cost_usd": "0", **first}, format="json").status_code == 201
    session.refresh_from_db()
    totals = (session.total_tokens_input, session.total_tokens_output, session.token_count, session.total_cost_usd)
    body = assert_error_shape(api.post(url, {"implementation_report": "two", "cost_usd": "0", **second},
                                       format="json"), 400, "usage_overflow")
    assert body["details"]["session"] == session.pk
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output, session.token_count,
            session.total_cost_usd) == totals
    assert task.attempts.count() == 1
