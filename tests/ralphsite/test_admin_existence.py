"""The admin tells a staff member who may not see a model nothing about its records (issue #28 §1 and §4, found by
the attacker's pass): every page of a record (its page, the read-only page's raw `edit/`, its history, a field's
whole text, an operator action) answers 403 before looking the record up, so a record that exists and one that
does not answer alike. Django's own history page and the project's read-only pages, whole-text view and operator
actions looked the record up first: a missing one was a 404 or a redirect, an existing one a 403."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

from ralphsite.core.service_admin import RalphModelAdmin
from sessions_app.models import Task
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db

MISSING = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
PAGES = {"GET": ("change/", "edit/", "history/", "text/description/", "task-graph/", "live/", "transcript/"),
         "POST": ("act/release/", "change/")}


@pytest.fixture
def no_permissions(client: Client) -> Client:
    get_user_model().objects.create_user("visitor", password="pw-visitor-1", is_staff=True)
    client.login(username="visitor", password="pw-visitor-1")
    return client


def _answers(client: Client, model: type, object_id: str) -> dict[str, str]:
    """Each page's status; a redirect with where it leads (a missing record's is to the admin's index)."""
    base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/{object_id}"
    answers = {}
    for method, pages in PAGES.items():
        for page in pages:
            response = getattr(client, method.lower())(f"{base}/{page}")
            where = response.get("Location", "").replace(object_id, "<id>")
            answers[f"{method} {page}"] = f"{response.status_code} {where}".strip()
    return answers


def test_a_record_that_exists_and_one_that_does_not_answer_alike_without_the_permission(
        no_permissions: Client) -> None:
    task = Task.objects.create(session=make_session(), key="T-1", title="t", description="d")
    assert _answers(no_permissions, Task, task.pk) == _answers(no_permissions, Task, MISSING)
    assert set(_answers(no_permissions, Task, MISSING).values()) == {"403"} | {  # Django's catch-all
        f"302 /admin/sessions_app/task/<id>/{page}change/" for page in ("task-graph/", "live/", "transcript/")}


def test_every_project_admin_refuses_before_looking_a_record_up(no_permissions: Client) -> None:
    """Every record page of every admin of ours, for an id no row has: 403, as for one that exists (a page an admin
    does not have is Django's catch-all redirect to the record's page, which is then refused alike)."""
    for model, model_admin in admin.site._registry.items():
        if not isinstance(model_admin, RalphModelAdmin):
            continue
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/<id>"
        for page, answer in _answers(no_permissions, model, MISSING).items():
            # a page this admin does not have is Django's catch-all, `<id>/<page>/` → `<id>/<page>/change/`,
            # whatever the id names (and that page is then refused)
            assert answer == "403" or answer.startswith(f"302 {base}/{page.split()[1]}change/"), (model, page, answer)
