"""Every action a person takes in the console goes through the API's service and writes the same
ledger events: each test does the thing once through the API and once through the admin, and
compares what the ledger recorded (type, category, task, message shape and data keys)."""

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import DeadLetter, DeadLetterStatus, LedgerEvent
from sessions_app.models import FeedbackItem, Question, QuestionStatus, Session, Signal, Task, TaskStatus
from tests.sessions_app.factories import make_batch, make_session, make_task

pytestmark = pytest.mark.django_db
OPERATOR = "admin:admin"


def recorded(session: Session) -> list[dict[str, Any]]:
    """The session's ledger events without what legitimately differs between two runs (ids, times,
    who acted)."""
    return [{"type": e.type, "category": e.category, "task_key": e.task_key, "data_keys": sorted(e.data)}
            for e in LedgerEvent.objects.filter(session=session).order_by("id")]


def act(client: Client, obj: Any, name: str, **inputs: str) -> Any:
    opts = obj._meta
    return client.post(reverse(f"admin:{opts.app_label}_{opts.model_name}_act", args=[obj.pk, name]), inputs)


def make_question(session: Session) -> Question:
    return Question.objects.create(session=session, key="Q-TECH-001", category="technical",
                                   text="Which database should the cache use?")


ANSWER = {"answer": "PostgreSQL", "answer_source": "the team", "answer_confidence": "high",
          "answer_implication": "one backend fewer"}


def test_answering_a_question_in_the_admin_answers_it_as_the_api_does(admin_client: Client, api: APIClient) -> None:
    through_api, through_admin = make_session(key="api"), make_session(key="admin")
    question = make_question(through_api)
    assert api.post(f"/api/v1/questions/{question.pk}/answer/", ANSWER, format="json").status_code == 200
    question = make_question(through_admin)
    page = admin_client.get(reverse("admin:sessions_app_question_change", args=[question.pk]))
    assert "Which database should the cache use?" in page.content.decode()
    response = admin_client.post(reverse("admin:sessions_app_question_change", args=[question.pk]), {
        **ANSWER, "category": "technical", "priority": "medium", "text": "changed by hand"})
    assert response.status_code == 302, response.content.decode()[:2000]
    question.refresh_from_db()
    assert question.status == QuestionStatus.ANSWERED and question.answered_at is not None
    assert (question.answer, question.answer_confidence) == ("PostgreSQL", "high")
    assert question.text == "Which database should the cache use?"  # the agent's question is read-only
    assert recorded(through_admin) == recorded(through_api)
    assert LedgerEvent.objects.get(session=through_admin, type="question_answered").agent == OPERATOR


def test_an_answer_is_required_to_answer(admin_client: Client) -> None:
    question = make_question(make_session())
    response = admin_client.post(reverse("admin:sessions_app_question_change", args=[question.pk]), {
        "answer": "", "answer_source": "me", "category": "technical", "priority": "medium"})
    assert response.status_code == 200 and "Write the answer" in response.content.decode()
    question.refresh_from_db()
    assert question.status == QuestionStatus.UNANSWERED
    assert not LedgerEvent.objects.filter(type="question_answered").exists()


def test_a_signal_sent_from_the_admin_is_recorded_as_the_api_records_it(admin_client: Client,
                                                                       api: APIClient) -> None:
    through_api, through_admin = make_session(key="api"), make_session(key="admin")
    body = {"type": "steer", "message": "focus on the tests"}
    assert api.post("/api/v1/signals/", {**body, "session": through_api.pk}, format="json").status_code == 201
    response = admin_client.post(reverse("admin:sessions_app_signal_add"), {
        **body, "session": through_admin.pk, "sent_at_0": "2026-01-01", "sent_at_1": "10:00:00"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Signal.objects.get(session=through_admin).type == "steer"
    assert recorded(through_admin) == recorded(through_api) == [
        {"type": "signal_sent", "category": "orchestration", "task_key": "",
         "data_keys": ["sent_by", "signal", "type"]}]


def claimed(session: Session, api: APIClient) -> Task:
    make_task(session, "task-1")
    response = api.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "executor-1", "lease_seconds": 60},
                        format="json")
    assert response.status_code == 200
    return Task.objects.get(session=session, key="task-1")


def test_releasing_a_claimed_task_from_the_admin_writes_the_release_the_api_writes(admin_client: Client,
                                                                                  api: APIClient) -> None:
    through_api, through_admin = make_session(key="api"), make_session(key="admin")
    task = claimed(through_api, api)
    assert api.post(f"/api/v1/tasks/{task.pk}/release/", {"agent": "executor-1", "reason": "stuck",
                                                          "claim": task.claim}, format="json").status_code == 200
    task = claimed(through_admin, api)
    page = admin_client.get(reverse("admin:sessions_app_task_change", args=[task.pk]))
    assert 'data-action="release"' in page.content.decode()
    assert act(admin_client, task, "release", reason="stuck").status_code == 302
    task.refresh_from_db()
    assert (task.status, task.claimed_by, task.lease_expires_at) == (TaskStatus.NOT_STARTED, "", None)
    api_events, admin_events = recorded(through_api), recorded(through_admin)
    assert [e["type"] for e in admin_events] == [e["type"] for e in api_events] == ["task_claimed", "task_released"]
    released = LedgerEvent.objects.get(session=through_admin, type="task_released")
    assert (released.agent, released.data["claimed_by"]) == (OPERATOR, "executor-1")
    assert "claimed by executor-1" in released.message


def test_failing_a_claimed_task_from_the_admin_clears_the_claim_as_the_status_api_does(admin_client: Client,
                                                                                      api: APIClient) -> None:
    through_api, through_admin = make_session(key="api"), make_session(key="admin")
    task = claimed(through_api, api)
    assert api.post(f"/api/v1/tasks/{task.pk}/status/", {"status": "failed", "annotation": "timeout",
                                                         "claim": task.claim}, format="json").status_code == 200
    task = claimed(through_admin, api)
    assert act(admin_client, task, "fail", reason="timeout").status_code == 302
    task.refresh_from_db()
    assert (task.status, task.status_annotation, task.claimed_by, task.lease_expires_at) == (
        TaskStatus.FAILED, "timeout", "", None)
    assert recorded(through_admin) == recorded(through_api)


def test_the_task_form_does_not_edit_status(admin_client: Client) -> None:
    task = make_task(make_session(), "task-1")
    page = admin_client.get(reverse("admin:sessions_app_task_edit", args=[task.pk]))
    assert 'name="title"' in page.content.decode() and 'name="status"' not in page.content.decode()


def test_an_action_refused_by_its_service_says_why(admin_client: Client) -> None:
    task = make_task(make_session(), "task-1")  # not claimed
    response = act(admin_client, task, "release")
    assert response.status_code == 302
    page = admin_client.get(response.url)
    assert "is not claimed" in page.content.decode()
    assert not LedgerEvent.objects.exists()


def test_an_action_needs_a_post_and_the_change_permission(client: Client, admin_client: Client,
                                                          django_user_model: Any) -> None:
    task = make_task(make_session(), "task-1")
    url = reverse("admin:sessions_app_task_act", args=[task.pk, "fail"])
    assert admin_client.get(url).status_code == 405
    viewer = django_user_model.objects.create_user("viewer", password="pw-viewer-1", is_staff=True)
    client.force_login(viewer)
    assert client.post(url).status_code == 403
    assert act(admin_client, task, "nonsense").status_code == 404


def test_feedback_items_are_resolved_through_the_resolve_service(admin_client: Client, api: APIClient) -> None:
    batch = make_batch(make_session())
    first, second, third = (FeedbackItem.objects.create(batch=batch, issue_key=f"FB-{n}", description="x")
                            for n in range(3))
    assert api.post(f"/api/v1/feedback-items/{first.pk}/resolve/").status_code == 200
    assert act(admin_client, second, "resolve").status_code == 302
    response = admin_client.post(reverse("admin:sessions_app_feedbackitem_changelist"), {
        "action": "resolve_selected", "_selected_action": [third.pk]})
    assert response.status_code == 302
    stamps = [item.resolved_at for item in FeedbackItem.objects.order_by("issue_key")]
    assert all(stamps) and FeedbackItem.objects.filter(is_resolved=True).count() == 3


def dead_letter(**fields: Any) -> DeadLetter:
    return DeadLetter.objects.create(operation_type="notify", error_message="timeout", **fields)


def test_dead_letters_are_retried_and_discarded_through_the_api_services(admin_client: Client,
                                                                         api: APIClient) -> None:
    retried_by_api, retried_here, discarded_by_api, discarded_here = (dead_letter() for _ in range(4))
    later = dead_letter(retry_after=timezone.now() + timedelta(hours=1))
    assert api.post(f"/api/v1/dead-letters/{retried_by_api.pk}/retry/").status_code == 200
    assert api.post(f"/api/v1/dead-letters/{discarded_by_api.pk}/discard/").json()["status"] == "failed"
    assert api.post(f"/api/v1/dead-letters/{discarded_by_api.pk}/discard/").status_code == 409
    assert act(admin_client, retried_here, "retry").status_code == 302
    assert act(admin_client, discarded_here, "discard").status_code == 302
    response = admin_client.post(reverse("admin:ledger_app_deadletter_changelist"), {
        "action": "retry_selected", "_selected_action": [later.pk]})
    assert response.status_code == 302  # not due yet: left pending
    statuses = dict(DeadLetter.objects.values_list("pk", "status"))
    assert statuses == {retried_by_api.pk: DeadLetterStatus.RETRIED, retried_here.pk: DeadLetterStatus.RETRIED,
                        discarded_by_api.pk: DeadLetterStatus.FAILED, discarded_here.pk: DeadLetterStatus.FAILED,
                        later.pk: DeadLetterStatus.PENDING}
    page = admin_client.get(reverse("admin:ledger_app_deadletter_change", args=[later.pk]))
    assert 'data-action="retry"' in page.content.decode() and 'data-action="discard"' in page.content.decode()
