"""The admin's task graph page of a session: tasks by wave (the current and next open first, the others
folded), statuses, dependencies, cycles, filters by status and agent, and its cost at scale."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from sessions_app.models import Session, TaskDependency
from tests.sessions_app.factories import make_session, make_task, make_thousand_tasks

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


def waves(page: str) -> list[tuple[str, bool, list[str]]]:
    """Each wave in page order: its label, whether it is open, and the keys of the tasks it draws."""
    result = []
    for chunk in page.split('<details class="tg-wave')[1:]:
        head = chunk.split(">", 1)[0]
        label = re.search(r'data-wave="([^"]+)"', head)
        result.append((label.group(1) if label else "", " open" in head,
                       re.findall(r'<span class="tg-key">([^<]+)</span>', chunk.split("</details>")[0])))
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
    # Wave 1 holds a failure and a blocked task: it is the current one, and no wave is settled yet.
    assert waves(page) == [("Wave 1", True, ["task-a", "task-b", "task-e"]), ("Wave 2", True, ["task-c"]),
                           ("Wave 3", False, ["task-d"])]
    task_c = session.tasks.get(key="task-c")
    box = page.split(f'href="{reverse("admin:sessions_app_task_change", args=[task_c.pk])}"')[1].split("</a>")[0]
    for text in ("task-c", "In Progress", "executor-2", "depends on: task-a, task-b"):
        assert text in box
    for status in ("completed", "failed", "in_progress", "not_started", "blocked"):
        assert f"tg-box tg-s-{status}" in page
    assert "Fails &lt;b&gt;loudly&lt;/b&gt;" in page and "<b>loudly" not in page
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
    assert waves(page) == [("Cycle (no wave)", False, ["task-x", "task-y", "task-z"]),
                           ("Wave 1", False, ["task-1"])]


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
    assert response.content.decode().count('class="tg-box tg-s-') == task_count


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


def test_the_current_and_next_waves_come_first_and_finished_waves_are_folded(admin_client: Client) -> None:
    session = make_session()
    previous = None
    for number, status in enumerate(("completed", "skipped", "in_progress", "not_started", "not_started"), start=1):
        previous = make_task(session, f"t-{number}", status=status, depends_on=(previous,) if previous else ())
    page = admin_client.get(graph_url(session)).content.decode()
    assert waves(page) == [("Wave 3", True, ["t-3"]), ("Wave 4", True, ["t-4"]), ("Wave 5", False, ["t-5"]),
                           ("Wave 1", False, ["t-1"]), ("Wave 2", False, ["t-2"])]
    assert 'rl-v-current">current' in page and 'rl-v-next">next' in page
    # The console's panel draws a folded wave as one line that opens it on the graph's page.
    console = admin_client.get(reverse("admin:sessions_app_session_change", args=[session.pk])).content.decode()
    panel = console.split('id="rc-task-graph"')[1].split("</section>")[0]
    assert [key for _label, _open, keys in waves(panel) for key in keys] == ["t-3", "t-4"]
    assert f'href="{graph_url(session)}#tg-wave-1"' in panel and 'data-key="tg-wave-3"' in panel


def test_it_filters_by_status_and_agent(admin_client: Client) -> None:
    session = make_session()
    for number in range(1, 21):
        make_task(session, f"t-{number}", status="failed" if number % 5 == 0 else "completed",
                  assigned_agent=f"exec-{number % 2}")
    page = admin_client.get(graph_url(session), {"status": "failed"}).content.decode()
    assert waves(page) == [("Wave 1", True, ["t-5", "t-10", "t-15", "t-20"])] and "4 of 20 tasks" in page
    page = admin_client.get(graph_url(session), {"status": "failed", "agent": "exec-1"}).content.decode()
    assert waves(page) == [("Wave 1", True, ["t-5", "t-15"])]
    assert '<option value="exec-1" selected>' in page and '<option value="failed" selected>' in page
    page = admin_client.get(graph_url(session), {"status": "no-such-status"}).content.decode()
    assert "No task matches these filters." in page and waves(page) == []


def test_a_thousand_tasks_cost_the_same_queries_as_three(admin_client: Client, django_assert_num_queries) -> None:
    session = make_session()
    make_thousand_tasks(session)
    with django_assert_num_queries(5):  # auth session, user, the session row, its tasks, its dependency edges
        page = admin_client.get(graph_url(session)).content.decode()
    assert page.count('class="tg-box tg-s-') == 1000 and [open for _label, open, _keys in waves(page)].count(True) == 2

