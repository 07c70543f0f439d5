"""The admin's task graph page of a session: tasks by wave, statuses, dependencies, cycles."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from sessions_app.models import Session, TaskDependency
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db


def graph_url(session: Session) -> str:
    return reverse("admin:sessions_app_session_task_graph", args=[session.pk])


def layered_session() -> Session:
    """Three waves: a, b → c → d, plus e alone."""
    session = make_session(key="graph")
    a = make_task(session, "task-a", status="completed", assigned_agent="executor-1")
    b = make_task(session, "task-b", status="failed", title="Fails <b>loudly</b>")
    c = make_task(session, "task-c", depends_on=(a, b), status="in_progress", assigned_agent="executor-2")
    make_task(session, "task-d", depends_on=(c,))
    make_task(session, "task-e", status="blocked")
    return session


def columns(page: str) -> list[list[str]]:
    """The task keys of each column, in page order."""
    result: list[list[str]] = []
    for chunk in page.split('class="tg-column-label')[1:]:
        result.append(re.findall(r'<span class="tg-key">([^<]+)</span>', chunk))
    return result


def test_the_session_page_links_to_its_task_graph(admin_client: Client) -> None:
    session = make_session()
    page = admin_client.get(reverse("admin:sessions_app_session_change", args=[session.pk])).content.decode()
    assert f'href="{graph_url(session)}"' in page and "Task graph" in page


def test_it_shows_the_tasks_by_wave_with_status_agent_links_and_dependencies(admin_client: Client) -> None:
    session = layered_session()
    response = admin_client.get(graph_url(session))
    assert response.status_code == 200
    assert response.templates[0].name == "admin/sessions_app/session/task_graph.html"
    page = response.content.decode()
    assert columns(page) == [["task-a", "task-b", "task-e"], ["task-c"], ["task-d"]]
    assert [label.strip() for label in re.findall(r">\s*(Wave \d)", page)] == ["Wave 1", "Wave 2", "Wave 3"]
    task_c = session.tasks.get(key="task-c")
    box = page.split(f'href="{reverse("admin:sessions_app_task_change", args=[task_c.pk])}"')[1].split("</a>")[0]
    for text in ("task-c", "In Progress", "executor-2", "depends on: task-a, task-b"):
        assert text in box
    for status in ("completed", "failed", "in_progress", "not_started", "blocked"):
        assert f"tg-box tg-s-{status}" in page
    assert "Fails &lt;b&gt;loudly&lt;/b&gt;" in page and "<b>loudly" not in page
    assert page.count('marker-end="url(#tg-arrow)"') == 3  # a→c, b→c, c→d
    assert "cycle" not in page.split('id="content-main"')[1].split("tg-legend")[0]
    breadcrumbs = page.split('class="breadcrumbs"')[1].split("</div>")[0]
    assert reverse("admin:sessions_app_session_change", args=[session.pk]) in breadcrumbs
    assert "Task graph" in breadcrumbs


def test_it_names_a_cycle_instead_of_failing(admin_client: Client) -> None:
    session = make_session()
    root = make_task(session, "task-1", status="completed")
    x = make_task(session, "task-x", depends_on=(root,))
    y = make_task(session, "task-y", depends_on=(x,))
    make_task(session, "task-z", depends_on=(y,))
    TaskDependency.objects.create(task=x, depends_on=y)  # written past the services, which refuse cycles
    response = admin_client.get(graph_url(session))
    assert response.status_code == 200
    page = response.content.decode()
    assert "The dependency graph has a cycle." in page
    assert "have no wave: task-x, task-y, task-z." in page
    assert columns(page) == [["task-1"], ["task-x", "task-y", "task-z"]]
    assert "Cycle (no wave)" in page


def test_it_shows_an_empty_session(admin_client: Client) -> None:
    page = admin_client.get(graph_url(make_session())).content.decode()
    assert "This session has no tasks yet." in page


@pytest.mark.parametrize("task_count", [3, 40])
def test_it_runs_a_constant_number_of_queries(admin_client: Client, django_assert_num_queries,
                                             task_count: int) -> None:
    session = make_session()
    previous = None
    for index in range(task_count):
        previous = make_task(session, f"task-{index:02}", depends_on=(previous,) if index % 3 and previous else ())
    # auth session, user, the session row, its tasks, its dependency edges
    with django_assert_num_queries(5):
        response = admin_client.get(graph_url(session))
    assert response.content.decode().count('class="tg-box') == task_count


def test_it_sends_anonymous_visitors_to_the_login_page(client: Client) -> None:
    session = make_session()
    response = client.get(graph_url(session))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_it_needs_the_permission_to_view_sessions(client: Client) -> None:
    session = make_session()
    staff = get_user_model().objects.create_user(username="staff", password="pw-123456", is_staff=True)
    client.force_login(staff)
    assert client.get(graph_url(session)).status_code == 403
    staff.user_permissions.add(Permission.objects.get(codename="view_session", content_type__app_label="sessions_app"))
    assert client.get(graph_url(session)).status_code == 200


def test_it_answers_an_unknown_session_with_404(admin_client: Client) -> None:
    assert admin_client.get(reverse("admin:sessions_app_session_task_graph", args=["nope"])).status_code == 404
    assert admin_client.get(reverse("admin:sessions_app_session_task_graph",
                                    args=["01JAAAAAAAAAAAAAAAAAAAAAAA"])).status_code == 404


def test_it_draws_an_edge_that_skips_a_wave_dashed_over_the_boxes(admin_client: Client) -> None:
    session = make_session()
    a = make_task(session, "task-a")
    b = make_task(session, "task-b", depends_on=(a,))
    make_task(session, "task-c", depends_on=(a, b))  # a → c skips wave 2
    page = admin_client.get(graph_url(session)).content.decode()
    over = page.split('<svg class="tg-over"')[1].split("</svg>")[0]
    assert over.count('class="tg-long"') == 1 and "task-c depends on task-a" in over
    assert page.split('<svg class="tg-over"')[0].count('marker-end="url(#tg-arrow)"') == 2  # a → b, b → c
