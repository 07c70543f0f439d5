"""Human keys wherever an id is taken (issue #14 §2), walked over every route: a session, plan or
checkpoint named by its key in paths (every action included), bodies and filters; tasks named within
their session at `sessions/{session}/tasks/{task}/`; scoped tokens see no more through keys than
through ids."""

from typing import Any

import pytest
from rest_framework import serializers
from rest_framework.test import APIClient

from ledger_app.models import Checkpoint
from ralphsite.core.addressing import address_key_of
from ralphsite.core.api.fields import ReferenceFilterField, ReferenceIdField, ScopedPrimaryKeyRelatedField
from ralphsite.core.api.query import query_declaration
from ralphsite.core.api.routers import PATH_VALUE
from ralphsite.core.models import TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Plan, Question, Session, Task
from tests.api_mixins import ULID, ApiRoute, api_routes, assert_error_shape
from tests.ralphsite.test_seed_spellings import _input_serializers, _writable_fields
from tests.sessions_app.factories import make_session, make_task

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

ROUTES = api_routes()
KEYED_PREFIXES = {"sessions": Session, "plans": Plan, "checkpoints": Checkpoint}
# Rows named within their session, `sessions/{session}/<rows>/{row}/`, by id or key.
NESTED = {rows: rf"sessions/(?P<session>{PATH_VALUE})/{rows}" for rows in ("tasks", "questions")}


# Bodies that pass validation, so that the row is looked up (an action validates its body first).
BODIES: dict[str, dict[str, Any]] = {
    "claim_task": {"agent": "a"}, "poll_signal": {"agent": "a"}, "transition": {"agent": "a", "state": "planning"},
    "resume": {"agent": "a", "force": True}, "finish": {"status": "completed"}, "plan": {"agent": "a", "content": "x"},
    "status": {"status": "done"}, "report": {"agent": "a", "implementation_report": "r"},
    "review": {"agent": "r", "review_report": "ok", "verdict": "qualified"}, "heartbeat": {"agent": "a"},
    "release": {"agent": "a"}, "partial_update": {"title": "renamed"}, "answer": {"answer": "PostgreSQL"},
    "increment": {"counter": "consecutive_failures"},
}


def _send(api: APIClient, route: ApiRoute, path: str) -> Any:
    if route.method in ("get", "delete"):
        return getattr(api, route.method)(path)
    return getattr(api, route.method)(path, BODIES.get(route.action, {}), format="json")


def _keyed_row(prefix: str) -> Any:
    """A row of the keyed model with a key that has dots (paths take them: seeds number plans and tasks so)."""
    session = make_session(key="sess-a.1")
    if prefix == "sessions":
        return session
    if prefix == "plans":
        return Plan.objects.create(key="plan-1.2", name="P", session=session)
    return Checkpoint.objects.create(key="chkpt-20250201.120000-abc123", session=session)


KEYED_DETAIL = [pytest.param(route, id=route.id) for route in ROUTES
                if route.prefix in KEYED_PREFIXES and route.detail]


def test_it_walks_every_detail_route_of_the_keyed_models() -> None:
    ids = {param.id for param in KEYED_DETAIL}
    assert {f"post /api/v1/sessions/{ULID}/claim-task/", f"get /api/v1/sessions/{ULID}/plan/",
            f"put /api/v1/sessions/{ULID}/plan/", f"post /api/v1/checkpoints/{ULID}/restore/",
            f"get /api/v1/plans/{ULID}/", f"delete /api/v1/sessions/{ULID}/"} <= ids
    assert {prefix for prefix, model in KEYED_PREFIXES.items() if address_key_of(model) == "key"} == set(KEYED_PREFIXES)


@pytest.mark.parametrize("route", KEYED_DETAIL)
def test_every_route_of_a_keyed_model_takes_its_key(api: APIClient, route: ApiRoute) -> None:
    row = _keyed_row(route.prefix)
    if route.method == "get":
        by_id = api.get(route.path.replace(ULID, row.pk))
        by_key = api.get(route.path.replace(ULID, row.key))
        assert (by_key.status_code, by_key.content) == (by_id.status_code, by_id.content)
    by_key = _send(api, route, route.path.replace(ULID, row.key))
    assert by_key.status_code != 404, by_key.content
    assert_error_shape(_send(api, route, route.path.replace(ULID, "no-such-key")), 404, "not_found")


NESTED_ROUTES = [pytest.param(route, id=route.id) for route in ROUTES if route.prefix in NESTED.values()]


@pytest.mark.parametrize("rows", list(NESTED))
def test_the_nested_routes_are_the_flat_ones_detail_routes(rows: str) -> None:
    nested = {(route.method, route.action) for route in ROUTES if route.prefix == NESTED[rows]}
    flat = {(route.method, route.action) for route in ROUTES if route.prefix == rows and route.detail}
    assert nested == flat
    assert {("get", "retrieve"), ("patch", "partial_update"), ("delete", "destroy")} <= nested
    assert {"tasks": {("post", "status"), ("post", "report"), ("post", "review"), ("post", "heartbeat"),
                      ("post", "release")}, "questions": {("post", "answer")}}[rows] <= nested


def _nested_row(rows: str, session: Session, key: str) -> Any:
    if rows == "tasks":
        return make_task(session, key)
    return Question.objects.create(session=session, key=key, category="technical", text="Which database?")


@pytest.mark.parametrize("route", NESTED_ROUTES)
def test_every_nested_route_takes_ids_and_keys(api: APIClient, route: ApiRoute) -> None:
    rows = route.prefix.rsplit("/", 1)[1]
    session, other = make_session(key="sess-a"), make_session(key="sess-b")
    row = _nested_row(rows, session, "key-1.1")
    _nested_row(rows, other, "key-2")
    tail = route.path.split(f"/{rows}/{ULID}/", 1)[1]

    def path(session_ref: str, row_ref: str) -> str:
        return f"/api/v1/sessions/{session_ref}/{rows}/{row_ref}/{tail}"

    for session_ref, row_ref in (("no-such", "key-1.1"), (other.pk, row.pk)):
        assert_error_shape(_send(api, route, path(session_ref, row_ref)), 404, "not_found")
    # A key the session has no row of: a 404, except for a task's PUT, which creates the task (ralphy's upsert).
    creates = (rows, route.method, tail) == ("tasks", "put", "")
    for session_ref, row_ref in (("sess-b", "key-1.1"), ("sess-a", "key-2"), ("sess-a", "key-1")):
        response = _send(api, route, path(session_ref, row_ref))
        if creates:
            assert response.status_code == 201, response.content
        else:
            assert_error_shape(response, 404, "not_found")
    if route.action == "review":  # a review needs a report to review
        assert _send(api, route._replace(action="report"), path("sess-a", "key-1.1").replace("review", "report")) \
            .status_code == 201
    for session_ref, row_ref in ((session.key, row.key), (session.pk, row.key), (session.key, row.pk)):
        response = _send(api, route, path(session_ref, row_ref))
        assert response.status_code != 404, (session_ref, row_ref, response.content)
        if route.method == "delete":
            break


@pytest.mark.parametrize("rows", list(NESTED))
def test_a_key_on_a_flat_route_says_where_keys_are_taken(api: APIClient, rows: str) -> None:
    _nested_row(rows, make_session(key="sess-a"), "Q-TECH-001")
    body = assert_error_shape(api.post(f"/api/v1/{rows}/Q-TECH-001/answer/", {"answer": "x"}, format="json")
                              if rows == "questions" else api.get(f"/api/v1/{rows}/Q-TECH-001/"), 404, "not_found")
    assert f"/api/v1/sessions/{{session}}/{rows}/Q-TECH-001/" in body["message"]


def test_a_nested_answer_answers_the_question_of_that_session(api: APIClient) -> None:
    session, other = make_session(key="sess-a"), make_session(key="sess-b")
    question = _nested_row("questions", session, "Q-TECH-001")
    elsewhere = _nested_row("questions", other, "Q-TECH-001")
    got = api.get("/api/v1/sessions/sess-a/questions/Q-TECH-001/")
    assert got.status_code == 200 and got.json() == api.get(f"/api/v1/questions/{question.pk}/").json()
    answered = api.post("/api/v1/sessions/sess-a/questions/Q-TECH-001/answer/", {"answer": "PostgreSQL"},
                        format="json")
    assert answered.status_code == 200 and answered.json()["status"] == "answered"
    assert Question.objects.get(pk=elsewhere.pk).status == "unanswered"


def test_a_nested_get_is_one_object_and_a_nested_status_changes_it(api: APIClient) -> None:
    session = make_session(key="sess-a")
    task = make_task(session, "task-1", status="review_pending")
    got = api.get("/api/v1/sessions/sess-a/tasks/task-1/")
    assert got.status_code == 200 and got.json() == api.get(f"/api/v1/tasks/{task.pk}/").json()
    changed = api.post("/api/v1/sessions/sess-a/tasks/task-1/status/", {"status": "done"}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["status"] == "completed"
    assert api.patch("/api/v1/sessions/sess-a/tasks/task-1/", {"title": "renamed"}, format="json").json()["title"] \
        == "renamed"
    assert api.delete(f"/api/v1/sessions/{session.pk}/tasks/task-1/").status_code == 204
    assert not Task.objects.filter(pk=task.pk).exists()


# -- bodies and filters -----------------------------------------------------------------------------

def test_every_body_field_naming_a_keyed_model_takes_its_key() -> None:
    found = set()
    for cls in _input_serializers():
        for name, field in _writable_fields(cls):
            model = getattr(field, "referenced_model", None) if isinstance(field, ReferenceIdField) else None
            if isinstance(field, serializers.RelatedField):
                model = field.queryset.model if field.queryset is not None else None
            if model is not None and address_key_of(model):
                assert isinstance(field, (ReferenceIdField, ScopedPrimaryKeyRelatedField)), (cls, name)
                found.add((model.__name__, name))
    assert {("Session", "session"), ("Plan", "plan"), ("Checkpoint", "checkpoint")} <= found


def test_bodies_take_keys(api: APIClient) -> None:
    session = make_session(key="sess-a")
    plan = Plan.objects.create(key="plan-001", name="P", session=session)
    task = api.post("/api/v1/tasks/", {"session": "sess-a", "plan": "plan-001", "key": "t1", "title": "T"},
                    format="json")
    assert task.status_code == 201, task.content
    assert (task.json()["session"], task.json()["plan"]) == (session.pk, plan.pk)
    event = api.post("/api/v1/events/", {"session": "sess-a", "type": "run_started"}, format="json")
    assert event.status_code == 201 and event.json()["session"] == session.pk
    checkpoint = api.post("/api/v1/checkpoints/", {"session": "sess-a", "key": "chkpt-1"}, format="json").json()
    restore = api.post("/api/v1/checkpoint-restores/", {"checkpoint": "chkpt-1"}, format="json")
    assert restore.status_code == 201, restore.content
    assert restore.json()["checkpoint"] == checkpoint["id"]
    for body, url in (({"session": "no-such", "type": "run_started"}, "/api/v1/events/"),
                      ({"session": "no-such", "key": "t2", "title": "T"}, "/api/v1/tasks/"),
                      ({"checkpoint": "no-such"}, "/api/v1/checkpoint-restores/")):
        details = assert_error_shape(api.post(url, body, format="json"), 400, "validation_error")["details"]
        assert "no-such" in str(details), details


KEYED_FILTERS = [
    pytest.param(route.path, name, id=f"{route.prefix}?{name}")
    for route in ROUTES if route.action == "list" and getattr(route.viewset, "filterset_class", None)
    for name, filter_ in route.viewset.filterset_class.base_filters.items()
    if name.removesuffix("_id") in ("session", "plan", "checkpoint")
]


def test_it_finds_the_session_plan_and_checkpoint_filters() -> None:
    ids = {param.id for param in KEYED_FILTERS}
    assert {"tasks?session", "tasks?session_id", "tasks?plan", "events?session", "chats?session",
            "replanning-deltas?session", "checkpoint-restores?checkpoint", "observations?session"} <= ids


@pytest.mark.parametrize(("path", "name"), KEYED_FILTERS)
def test_every_filter_of_a_keyed_model_takes_its_key(api: APIClient, path: str, name: str) -> None:
    row = _keyed_row({"session": "sessions", "plan": "plans", "checkpoint": "checkpoints"}[name.removesuffix("_id")])
    by_key, by_id = api.get(path, {name: row.key}), api.get(path, {name: row.pk})
    assert by_key.status_code == 200, by_key.content
    assert by_key.json() == by_id.json()
    body = assert_error_shape(api.get(path, {name: "no-such-key"}), 400, "validation_error")
    assert list(body["details"]) == [name]


def test_a_session_filter_by_key_keeps_its_rows(api: APIClient) -> None:
    session, other = make_session(key="sess-a"), make_session(key="sess-b")
    make_task(session, "a")
    make_task(other, "b")
    assert [row["key"] for row in api.get("/api/v1/tasks/", {"session": "sess-b"}).json()["results"]] == ["b"]


def _declared_keyed_parameters() -> list[tuple[ApiRoute, str]]:
    """Every query parameter an action declares (outside FilterSets) that names a session, plan or
    checkpoint: each must read its value as the FilterSets do."""
    found = []
    for route in ROUTES:
        declared = query_declaration(route.viewset(action=route.action)).serializer_class
        for name, field in (declared().fields.items() if declared is not None else ()):
            if name.removesuffix("_id") in ("session", "plan", "checkpoint"):
                assert isinstance(field, ReferenceFilterField), (route.id, name)
                found.append((route, name))
    return found


KEYED_PARAMETERS = [pytest.param(route, name, id=f"{route.id}?{name}") for route, name in _declared_keyed_parameters()]
# What makes each answer depend on the session (a search without words matches nothing).
OTHER_PARAMETERS = {"search": {"q": "needle"}}


def test_it_finds_the_declared_session_parameters() -> None:
    assert {("search", "list", "session"), ("stats", "retrieve", "session")} \
        <= {(route.prefix, route.action, name) for route, name in _declared_keyed_parameters()}


def _rows_of_two_sessions(api: APIClient) -> Session:
    """Two sessions, each with a message and an observation saying "needle" and a provider call; the
    first (not the one started last)."""
    for key in ("sess-b", "sess-a"):
        session = make_session(key=key)
        chat = api.post("/api/v1/chats/", {"session": session.pk, "title": "c"}, format="json").json()
        run = api.post("/api/v1/runs/", {"chat": chat["id"]}, format="json").json()
        assert api.post(f"/api/v1/runs/{run['id']}/messages/", {"role": "user", "content": f"needle {key}"},
                        format="json").status_code == 201
        assert api.post("/api/v1/observations/", {"session": session.pk, "type": "note", "content": "needle"},
                        format="json").status_code == 201
        usage = api.post("/api/v1/token-usage/", {"session": session.pk, "model": "m", "input_tokens": 10,
                                                  "output_tokens": 5, "cost_usd": "0.01"}, format="json")
        assert usage.status_code == 201, usage.content
    return Session.objects.get(key="sess-b")


@pytest.mark.parametrize(("route", "name"), KEYED_PARAMETERS)
def test_every_declared_session_parameter_takes_its_key(api: APIClient, route: ApiRoute, name: str) -> None:
    session = _rows_of_two_sessions(api)
    other = OTHER_PARAMETERS.get(route.prefix, {})
    everything = api.get(route.path, other).json()
    by_key, by_id = api.get(route.path, {**other, name: session.key}), api.get(route.path, {**other, name: session.pk})
    assert by_key.status_code == 200, by_key.content
    assert by_key.json() == by_id.json() != everything
    # As a FilterSet's: an unknown key is a 400 naming the parameter, an unknown id matches nothing.
    body = assert_error_shape(api.get(route.path, {**other, name: "no-such-key"}), 400, "validation_error")
    assert body["details"] == {name: ["No session has the id or key 'no-such-key'."]}
    assert body["details"] == api.get("/api/v1/tasks/", {name: "no-such-key"}).json()["details"]
    unknown_id = api.get(route.path, {**other, name: ULID})
    assert unknown_id.status_code == 200 and unknown_id.json() != everything


def test_a_search_body_takes_a_session_key(api: APIClient) -> None:
    session = _rows_of_two_sessions(api)
    by_key = api.post("/api/v1/search/", {"q": "needle", "session": "sess-b"}, format="json")
    assert by_key.status_code == 200, by_key.content
    assert by_key.json() == api.post("/api/v1/search/", {"q": "needle", "session": session.pk}, format="json").json()
    assert {hit["session"] for hit in by_key.json()["results"]} == {session.pk}
    assert by_key.json()["count"] == 2
    assert_error_shape(api.post("/api/v1/search/", {"q": "needle", "session": "no-such"}, format="json"), 400,
                       "validation_error")


# -- scoped tokens ----------------------------------------------------------------------------------

def test_a_session_token_finds_nothing_of_another_session_by_key(user: Any) -> None:
    mine, other = make_session(key="mine"), make_session(key="theirs")
    make_task(mine, "t1")
    make_task(other, "t1")
    minted = api_token_create(user=user, scope=TokenScope.SESSION, session_id=mine.pk)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {minted.secret}")
    assert client.get("/api/v1/sessions/mine/").status_code == 200
    assert client.get("/api/v1/sessions/mine/tasks/t1/").status_code == 200
    assert_error_shape(client.get("/api/v1/sessions/theirs/"), 404, "not_found")
    assert_error_shape(client.get("/api/v1/sessions/theirs/progress/"), 404, "not_found")
    assert_error_shape(client.get("/api/v1/sessions/theirs/tasks/t1/"), 404, "not_found")
    assert_error_shape(client.post("/api/v1/sessions/theirs/tasks/t1/status/", {"status": "done"}, format="json"),
                       404, "not_found")
    theirs = assert_error_shape(client.get("/api/v1/tasks/", {"session": "theirs"}), 400, "validation_error")
    unknown = assert_error_shape(client.get("/api/v1/tasks/", {"session": "nobody"}), 400, "validation_error")
    assert theirs["details"]["session"][0].replace("theirs", "X") == unknown["details"]["session"][0].replace(
        "nobody", "X")
    refused = client.post("/api/v1/events/", {"session": "theirs", "type": "run_started"}, format="json")
    assert_error_shape(refused, 400, "validation_error")
    assert client.post("/api/v1/events/", {"session": "mine", "type": "run_started"}, format="json").status_code == 201
