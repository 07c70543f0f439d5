"""The admin behaves as the API for lifecycles and deletes: the same services, the same refusals."""

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from sessions_app.models import Iteration, ResearchSession, Task
from tests.sessions_app.factories import make_session, make_task
from tests.sessions_app.test_orchestration_admin import change_form_data

pytestmark = pytest.mark.django_db


def messages_of(response: Any) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def finish(client: Client, session: Any, status: str) -> Any:
    """The console's Finish button (status is read-only on the raw form: it changes by transitions)."""
    return client.post(reverse("admin:sessions_app_session_act", args=[session.pk, "finish"]),
                       {"status": status, "exit_reason": "operator"}, follow=True)


def test_finishing_a_running_session_from_its_console_finishes_it(admin_client: Client) -> None:
    session = make_session()
    assert finish(admin_client, session, "stopped").status_code == 200
    session.refresh_from_db()
    assert session.status == "stopped" and session.ended_at is not None
    assert session.ledger_events.filter(type="session_finished").count() == 1


def test_a_finished_session_keeps_its_status_and_the_person_reads_why(admin_client: Client) -> None:
    session = make_session(status="completed", ended_at=timezone.now())
    response = finish(admin_client, session, "failed")
    assert response.status_code == 200
    assert any("already finished" in message for message in messages_of(response))
    session.refresh_from_db()
    assert session.status == "completed"


def test_a_task_others_depend_on_is_not_deleted_unless_they_go_too(admin_client: Client) -> None:
    session = make_session()
    first = make_task(session, "task-1")
    second = make_task(session, "task-2", depends_on=(first,))
    confirm = admin_client.get(reverse("admin:sessions_app_task_delete", args=[first.pk]))
    assert confirm.context["protected"], "the confirmation page names the dependent edge"
    changelist = reverse("admin:sessions_app_task_changelist")
    refused = admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [first.pk],
                                             "post": "yes"}, follow=True)
    assert Task.objects.filter(pk=first.pk).exists()
    assert refused.status_code == 200
    both = admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [first.pk, second.pk],
                                          "post": "yes"})
    assert both.status_code == 302
    assert not Task.objects.exists()


def test_research_findings_added_in_the_admin_are_counted(admin_client: Client) -> None:
    research = ResearchSession.objects.create(session=make_session())
    response = admin_client.post(reverse("admin:sessions_app_researchfinding_add"), {
        "research_session": research.pk, "finding_type": "blocker", "title": "no network", "priority": "high",
        "recorded_at_0": "2026-01-02", "recorded_at_1": "10:00:00"})
    assert response.status_code == 302, response.context["adminform"].form.errors
    research.refresh_from_db()
    assert (research.findings_count, research.blockers_found) == (1, 1)


def test_planning_completed_at_follows_the_admin_checkbox(admin_client: Client) -> None:
    iteration = Iteration.objects.create(session=make_session(), number=1)
    url = reverse("admin:sessions_app_iteration_change", args=[iteration.pk])
    response = admin_client.post(url, change_form_data(admin_client, url, planning_complete="on"))
    assert response.status_code == 302, response.context["adminform"].form.errors
    iteration.refresh_from_db()
    assert iteration.planning_complete and iteration.planning_completed_at is not None
