"""A task's and an attempt's pages are read-only (issue #31 §6): titled by the task's key, with the task's
attempts and their durations; Django's raw form is behind an explicit "Edit", shown only to people who may
change the record."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from sessions_app.models import Task, TaskAttempt
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db


def failed_task(attempts: int = 2) -> Task:
    session = make_session(key="history")
    dependency = make_task(session, "t-1", status="completed")
    task = make_task(session, "t-10", title="Admin screens", depends_on=(dependency,), status="failed",
                     status_annotation="review failed: TypeError")
    start = timezone.now() - timedelta(hours=1)
    for number in range(1, attempts + 1):
        TaskAttempt.objects.create(task=task, session=session, attempt_number=number, agent=f"exec-{number}",
                                   status="failed", error_message=f"TypeError {number}", started_at=start,
                                   ended_at=start + timedelta(minutes=2, seconds=5 * number))
    return task


def page(task: Task) -> str:
    return reverse("admin:sessions_app_task_change", args=[task.pk])


def test_a_tasks_page_is_read_only_titled_by_its_key_with_its_attempts_and_their_durations(
        admin_client: Client) -> None:
    task = failed_task()
    html = admin_client.get(page(task)).content.decode()
    assert "<title>Task t-10 |" in html and "<h1>Task t-10</h1>" in html
    assert 'name="_save"' not in html and "<textarea" not in html and 'name="title"' not in html
    assert html.count("data-attempt=") == 2 and "2 min 5 s" in html and "2 min 10 s" in html
    assert "review failed: TypeError" in html and "TypeError 2" in html
    dependency = Task.objects.get(key="t-1")
    assert f'<a href="{page(dependency)}">t-1</a>' in html
    edit = reverse("admin:sessions_app_task_edit", args=[task.pk])
    assert f'href="{edit}"' in html and 'data-action="reopen"' in html  # a domain verb, not a raw edit
    form = admin_client.get(edit).content.decode()
    assert 'name="_save"' in form and f'href="{page(task)}">View</a>' in form


def test_an_attempts_page_is_read_only_and_shows_its_tasks_timeline(admin_client: Client) -> None:
    task = failed_task()
    second = TaskAttempt.objects.get(task=task, attempt_number=2)
    html = admin_client.get(reverse("admin:sessions_app_taskattempt_change", args=[second.pk])).content.decode()
    assert "<h1>t-10: attempt 2</h1>" in html and 'name="_save"' not in html
    assert 'data-attempt="2" class="rr-current"' in html and 'data-attempt="1"' in html
    assert f'href="{page(task)}"' in html and reverse("admin:sessions_app_task_history", args=[task.pk]) in html
    assert f'href="{reverse("admin:sessions_app_taskattempt_edit", args=[second.pk])}"' in html


def test_edit_is_offered_only_to_people_who_may_change_the_record(client: Client) -> None:
    task = failed_task()
    attempt = task.attempts.first()
    reader = get_user_model().objects.create_user(username="reader", password="pw-123456", is_staff=True)
    reader.user_permissions.add(*Permission.objects.filter(codename__in=["view_task", "view_taskattempt"]))
    client.force_login(reader)
    for read, edit in ((page(task), reverse("admin:sessions_app_task_edit", args=[task.pk])),
                       (reverse("admin:sessions_app_taskattempt_change", args=[attempt.pk]),
                        reverse("admin:sessions_app_taskattempt_edit", args=[attempt.pk]))):
        html = client.get(read).content.decode()
        assert ">Edit</a>" not in html and edit not in html and "data-action=" not in html
        assert 'name="_save"' not in client.get(edit).content.decode()  # Django's view-only form


@pytest.mark.parametrize("attempts", [1, 12])
def test_a_tasks_page_reads_the_same_number_of_queries_whatever_its_attempts(
        admin_client: Client, django_assert_num_queries, attempts: int) -> None:
    task = failed_task(attempts)
    # auth session, user, the task, its dependencies, files, attempts
    with django_assert_num_queries(6):
        assert admin_client.get(page(task)).status_code == 200


def test_an_unknown_task_is_not_a_server_error(admin_client: Client) -> None:
    response = admin_client.get(reverse("admin:sessions_app_task_change", args=["01JAAAAAAAAAAAAAAAAAAAAAAA"]))
    assert response.status_code == 302  # the admin's "does not exist" redirect to its index
