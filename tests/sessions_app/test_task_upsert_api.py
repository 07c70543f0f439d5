"""ralphy's `updateTaskState(run, task, partial)` (issue #26 §5): `PUT sessions/{run}/tasks/{task}/` creates the
task its path names (201) or sets the fields sent on it (200), without a title (ralphy's tasks have none: the key
is the title, as the import names them), through the verbs POST tasks/ and PATCH use: their validation, lifecycle
and scope rules, and the add permission to create."""

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from ralphsite.core.models import SeedRow, TokenScope
from ralphsite.tokens.services import MintedToken, api_token_create
from sessions_app.models import Session, SessionStatus, Task
from tests.api_mixins import assert_error_shape
from tests.concurrency import api_in_threads
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db
RALPHY_STATE = {"status": "pending", "iter_count": 2, "last_phase": "plan"}  # a Partial<TaskState>


@pytest.fixture
def run() -> Session:
    """A session a ralphy import brought in under its run id."""
    session = make_session(key="run-key")
    SeedRow.objects.create(kind="ralphy", source_table="runs", source_key="run-20260101-a",
                           object_model="sessions_app.session", object_id=session.pk)
    return session


def _put(client: APIClient, session: str, task: str, body: dict[str, Any]) -> Any:
    return client.put(f"/api/v1/sessions/{session}/tasks/{task}/", body, format="json")


@pytest.mark.parametrize("reference", ["id", "key", "run id"])
def test_a_put_creates_the_task_its_path_names_then_updates_it(api: APIClient, run: Session, reference: str) -> None:
    session = {"id": run.pk, "key": run.key, "run id": "run-20260101-a"}[reference]
    created = _put(api, session, "auth-001", RALPHY_STATE)
    assert created.status_code == 201, created.json()
    assert {name: created.json()[name] for name in ("session", "key", "title", "status", "iteration_count",
                                                    "last_phase")} == {
        "session": run.pk, "key": "auth-001", "title": "auth-001", "status": "not_started", "iteration_count": 2,
        "last_phase": "plan"}
    updated = _put(api, session, "auth-001", {"iter_count": 3, "last_phase": "review"})
    assert updated.status_code == 200, updated.json()
    task = Task.objects.get(session=run)  # one task, updated: what the PUT did not send is kept
    assert (task.pk, task.title, task.iteration_count, task.last_phase) == (created.json()["id"], "auth-001", 3,
                                                                            "review")


def test_a_put_keeps_a_title_it_is_sent_and_the_body_may_name_the_path_s_session_and_key(
        api: APIClient, run: Session) -> None:
    body = {"title": "Log in", "run_id": "run-20260101-a", "key": "auth-001"}
    assert _put(api, run.key, "auth-001", body).status_code == 201
    assert Task.objects.get(session=run).title == "Log in"


@pytest.mark.parametrize("exists", [False, True], ids=["new", "stored"])
def test_a_put_naming_another_session_or_key_than_its_path_is_refused(api: APIClient, run: Session,
                                                                     exists: bool) -> None:
    if exists:
        make_task(run, "auth-001")
    other = make_session(key="other")
    for body, field in (({"key": "auth-002"}, "key"), ({"session": other.pk}, "session"),
                        ({"run_id": other.key}, "session")):
        refusal = assert_error_shape(_put(api, run.key, "auth-001", body), 400, "validation_error")
        assert set(refusal["details"]) == {field}, refusal
    assert list(Task.objects.values_list("key", flat=True)) == (["auth-001"] if exists else [])


def test_a_put_is_validated_as_post_and_patch_are(api: APIClient, run: Session) -> None:
    for body in ({"iter_count": -1}, {"status": "made_up"}, {"success_criteria": "one"}, {"title": "x" * 501}):
        posted = api.post("/api/v1/tasks/", {"session": run.pk, "key": "auth-001", "title": "t", **body},
                          format="json")
        put = _put(api, run.key, "auth-001", body)
        assert put.status_code == posted.status_code == 400, (body, put.json())
        assert put.json() == posted.json(), body
    assert not Task.objects.exists()


def test_a_put_follows_the_task_lifecycle_and_the_session_s(api: APIClient, run: Session) -> None:
    # Only claim-task puts a task in progress (ralphy's `running`), on a create as on an update.
    posted = api.post("/api/v1/tasks/", {"session": run.pk, "key": "auth-001", "title": "t", "status": "running"},
                      format="json")
    assert_error_shape(posted, 409, "claim_required")
    assert _put(api, run.key, "auth-001", {"status": "running"}).json() == posted.json()
    run.status = SessionStatus.COMPLETED
    run.save(update_fields=["status"])
    posted = api.post("/api/v1/tasks/", {"session": run.pk, "key": "auth-001", "title": "t"}, format="json")
    assert posted.status_code == 409, posted.json()
    assert _put(api, run.key, "auth-001", {}).json() == posted.json()
    assert not Task.objects.exists()


def _token_client(user: Any, scope: str, session: Session, permission: str = "write") -> APIClient:
    minted = api_token_create(user=user, scope=scope, permission=permission,
                              session_id=session.pk if scope == TokenScope.SESSION else None,
                              project_path=session.project_path if scope == TokenScope.PROJECT else "")
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.secret}")


def test_a_put_writes_where_the_token_may_create_a_task_and_only_there(user: Any) -> None:
    mine = make_session(key="run-1", project_path="/srv/app")
    other = make_session(key="run-2", project_path="/srv/other")
    for scope in (TokenScope.SESSION, TokenScope.PROJECT):
        client = _token_client(user, scope, mine)
        assert _put(client, mine.key, f"{scope}-task", {}).status_code == 201
        assert_error_shape(_put(client, other.key, f"{scope}-task", {}), 404, "not_found")
        reader = _token_client(user, scope, mine, permission="read")
        assert_error_shape(_put(reader, mine.key, f"{scope}-read", {}), 403, "permission_denied")
    assert sorted(Task.objects.values_list("session__key", "key")) == [("run-1", "project-task"),
                                                                       ("run-1", "session-task")]


def test_a_staff_member_who_may_change_but_not_add_tasks_updates_by_put_and_creates_nothing() -> None:
    run = make_session(key="run-1")
    make_task(run, "stored")
    staff = get_user_model().objects.create_user("editor", password="x", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__in=["view_session", "view_task", "change_task"]))
    login = APIClient()
    login.force_login(staff)
    assert _put(login, run.key, "stored", {"last_phase": "review"}).status_code == 200
    refusal = assert_error_shape(_put(login, run.key, "new", {}), 403, "permission_denied")
    assert refusal["details"] == {"permissions": ["sessions_app.add_task"]}
    assert list(Task.objects.values_list("key", flat=True)) == ["stored"]


def test_the_schema_says_a_put_creates_or_updates_and_needs_no_title(api: APIClient) -> None:
    schema = api.get("/api/schema/?format=json").json()
    [path] = [path for path in schema["paths"]
              if path.startswith("/api/v1/sessions/{session}/tasks/{") and path.count("/") == 7]
    put = schema["paths"][path]["put"]
    assert {"200", "201"} <= set(put["responses"])
    body = put["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert not schema["components"]["schemas"][body].get("required")


@pytest.mark.django_db(transaction=True)
def test_concurrent_puts_of_one_new_key_create_one_task(token: MintedToken) -> None:
    run = make_session(key="run-1")
    statuses = api_in_threads(6, token, lambda client, index: _put(
        client, run.key, "auth-001", {"iter_count": index}).status_code)
    assert sorted(statuses) == [200] * 5 + [201]
    assert Task.objects.filter(session=run).count() == 1
