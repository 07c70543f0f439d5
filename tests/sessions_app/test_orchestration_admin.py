"""The admin pages a person uses for orchestration: session and task pages, attachment downloads."""

import re
from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import models
from django.forms import MultiWidget
from django.test import Client
from django.urls import reverse

from sessions_app.models import (
    AgentInvocation,
    Bug,
    ContextBudget,
    Escalation,
    FeedbackBatch,
    Interview,
    LoopRun,
    Question,
    Session,
    SessionStateEntry,
    Signal,
    Task,
    TaskAttempt,
    TaskFile,
)
from tests.sessions_app.devteam_factories import devteam_rows, devteam_session
from tests.sessions_app.factories import make_batch, make_session, make_task

pytestmark = pytest.mark.django_db


def test_the_session_page_shows_its_inlines_and_links_to_the_rest(admin_client: Client) -> None:
    session = make_session(key="admin-view")
    make_task(session, "task-1")
    Question.objects.create(session=session, key="Q-TECH-001", category="technical", text="?")
    Signal.objects.create(session=session, type="pause", message="hold on")
    page = admin_client.get(reverse("admin:sessions_app_session_change", args=[session.pk])).content.decode()
    for text in ("task-1", "Q-TECH-001", "hold on", f"?session={session.pk}", "agent invocations"):
        assert text in page
    listing = admin_client.get(reverse("admin:sessions_app_agentinvocation_changelist"), {"session": session.pk})
    assert listing.status_code == 200


def test_the_session_page_links_to_every_registered_record_of_the_session(admin_client: Client) -> None:
    devteam_rows("linked")
    devteam_rows("unlinked")
    session = devteam_session("linked")
    page = admin_client.get(reverse("admin:sessions_app_session_change", args=[session.pk])).content.decode()
    related = [relation for relation in Session._meta.related_objects
               if admin.site.is_registered(relation.related_model)]
    assert {Bug, Escalation, LoopRun, SessionStateEntry, ContextBudget, Interview} <= {r.related_model for r in related}
    for relation in related:
        meta = relation.related_model._meta
        url = f"{reverse(f'admin:{meta.app_label}_{meta.model_name}_changelist')}?{relation.field.name}={session.pk}"
        assert url.replace("&", "&amp;") in page, meta.label
        listing = admin_client.get(url)
        assert listing.status_code == 200, meta.label
    bugs = admin_client.get(reverse("admin:sessions_app_bug_changelist"), {"session": session.pk})
    assert bugs.context["cl"].result_count == 1


def test_the_task_page_shows_dependencies_attempts_and_files(admin_client: Client) -> None:
    session = make_session()
    dependency = make_task(session, "task-1")
    task = make_task(session, "task-2", depends_on=(dependency,))
    TaskAttempt.objects.create(task=task, attempt_number=1, agent="executor-7")
    TaskFile.objects.create(task=task, path="src/only-here.py")
    page = admin_client.get(reverse("admin:sessions_app_task_change", args=[task.pk])).content.decode()
    for text in (dependency.pk, "executor-7", "src/only-here.py"):
        assert text in page


def add_task_in_the_admin(client: Client, session: Session, key: str, depends_on: Task) -> Any:
    return client.post(reverse("admin:sessions_app_task_add"), {
        "session": session.pk, "key": key, "title": "From the admin", "task_type": "sequential",
        "status": "not_started", "priority": "medium", "sequence": 0, "iteration_created": 1, "iteration_updated": 1,
        "iteration_count": 0, "success_criteria": "[]", "files_changed": "[]", "scope": "null",
        **{f"{prefix}-{name}": value for prefix in ("dependencies", "attempts", "files")
           for name, value in (("TOTAL_FORMS", 0), ("INITIAL_FORMS", 0))},
        "dependencies-TOTAL_FORMS": 1, "dependencies-0-depends_on": depends_on.pk,
        "files-TOTAL_FORMS": 1, "files-0-path": "src/*.py", "files-0-is_pattern": "on",
        "files-0-access_type": "allowed",
    }, follow=True)


def test_a_task_added_in_the_admin_gets_its_dependencies_and_files_through_the_service(admin_client: Client) -> None:
    session = make_session()
    dependency = make_task(session, "task-1")
    response = add_task_in_the_admin(admin_client, session, "task-9", dependency)
    assert response.status_code == 200
    task = Task.objects.get(key="task-9")
    assert [d.depends_on.key for d in task.dependencies.all()] == ["task-1"]
    assert [f.path for f in task.files.all()] == ["src/*.py"]


def test_a_dependency_on_another_session_is_refused_with_a_message(admin_client: Client) -> None:
    foreign = make_task(make_session(key="foreign"), "task-x")
    response = add_task_in_the_admin(admin_client, make_session(key="home"), "task-9", foreign)
    assert any("dependencies not saved" in str(message) for message in response.context["messages"])
    assert not Task.objects.get(key="task-9").dependencies.exists()


def test_an_attachment_downloads_from_the_admin(admin_client: Client) -> None:
    attachment = make_batch(make_session()).attachments.create(file_name="shot.png", content=b"\x89PNG",
                                                              content_type="image/png", size=4)
    page = admin_client.get(reverse("admin:sessions_app_feedbackattachment_change", args=[attachment.pk]))
    download_url = reverse("admin:sessions_app_feedbackattachment_download", args=[attachment.pk])
    assert download_url in page.content.decode()
    download = admin_client.get(download_url)
    assert (download.status_code, download.content, download["Content-Type"]) == (200, b"\x89PNG", "image/png")


# Plurals a bare "s" gets wrong ("batchs", "entrys", "analysiss"): -ch, -sh, -s, -x, -z, consonant + y.
MISSPELLED_PLURAL = re.compile(r"(ch|sh|s|x|z)s$|[^aeiou]ys$")


@pytest.mark.parametrize("model", list(apps.get_app_config("sessions_app").get_models()),
                         ids=lambda model: model.__name__)
def test_every_model_has_a_real_plural(model: type[models.Model]) -> None:
    plural = str(model._meta.verbose_name_plural)
    assert not MISSPELLED_PLURAL.search(plural), f"{model.__name__}: {plural!r}"
    assert plural != str(model._meta.verbose_name)


def test_the_admin_index_names_feedback_batches_properly(admin_client: Client) -> None:
    page = admin_client.get(reverse("admin:index")).content.decode()
    assert "Feedback batches" in page and "batchs" not in page
    assert FeedbackBatch._meta.verbose_name_plural == "feedback batches"


def change_form_data(client: Client, url: str, **changes: Any) -> dict[str, Any]:
    """The admin change form's current values as a POST body (split date/time widgets included), changed."""
    form = client.get(url).context["adminform"].form
    data: dict[str, Any] = {}
    for bound in form:
        widget, value = bound.field.widget, bound.value()
        if isinstance(widget, MultiWidget):
            parts = value if isinstance(value, list) else widget.decompress(value)
            data.update({f"{bound.html_name}{suffix}": part or ""
                         for suffix, part in zip(widget.widgets_names, parts, strict=True)})
        elif value is not None and value is not False:
            data[bound.html_name] = bound.field.prepare_value(value)
    return {**data, **changes}


def test_the_invocation_page_keeps_task_and_task_key_consistent(admin_client: Client) -> None:
    session = make_session()
    first, second = make_task(session, "task-1"), make_task(session, "task-2")
    invocation = AgentInvocation.objects.create(session=session, task=first, task_key="task-1")
    url = reverse("admin:sessions_app_agentinvocation_change", args=[invocation.pk])
    response = admin_client.post(url, change_form_data(admin_client, url, task=second.pk))
    assert response.status_code == 302, response.context["adminform"].form.errors
    invocation.refresh_from_db()
    assert (invocation.task_id, invocation.task_key) == (second.pk, "task-2")
    response = admin_client.post(url, change_form_data(admin_client, url, task=first.pk, task_key="task-9"))
    assert response.status_code == 200
    assert "task_key" in response.context["adminform"].form.errors
    invocation.refresh_from_db()
    assert (invocation.task_id, invocation.task_key) == (second.pk, "task-2")
