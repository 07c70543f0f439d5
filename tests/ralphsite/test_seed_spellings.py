"""The seeds' own words (issue #14 §2), walked over every route: enum aliases in bodies and filters
(answered in the canonical value, listed in the schema as `x-aliases`), `?<relation>_id=` twins of
every relation filter, and epoch seconds or milliseconds wherever a time is taken."""

import importlib
from datetime import UTC, datetime
from typing import Any

import pytest
from django.apps import apps
from django_filters import filters as django_filters
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers
from rest_framework.test import APIClient

from ralphsite.core.api.fields import EPOCH_LAST_MILLISECOND, ChoiceFieldNamingAllowed, EpochOrISODateTimeField
from ralphsite.core.api.query import allowed_query_parameters
from ralphsite.core.api.serializers import StrictKeysMixin
from ralphsite.core.choices import choice_canonical
from sessions_app.models import CircuitBreakerState, OrchestratorState, Session, TaskStatus
from tests.api_mixins import ULID, api_routes, assert_error_shape
from tests.ralphsite.test_query_contract import _view
from tests.sessions_app.factories import make_session, make_task

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

ROUTES = api_routes()
LISTS = [route for route in ROUTES if route.action == "list" and getattr(route.viewset, "filterset_class", None)]
CHOICE_FILTERS = (django_filters.ChoiceFilter, django_filters.MultipleChoiceFilter)


def _pascal(value: str) -> str:
    return "".join(part.capitalize() for part in value.split("_"))


# -- enum aliases ------------------------------------------------------------------------------------

def test_the_rule_folds_case_and_separators_and_adds_the_declared_aliases() -> None:
    assert choice_canonical(OrchestratorState.values, "ExecutingBatch") == "executing_batch"
    assert choice_canonical(OrchestratorState.values, "EXECUTING-BATCH") == "executing_batch"
    assert choice_canonical(CircuitBreakerState.values, "half-open") == "half_open"
    assert [choice_canonical(TaskStatus.values, s) for s in ("pending", "Running", "done", "failed", "skipped",
                                                            "ReviewPending")] == [
        "not_started", "in_progress", "completed", "failed", "skipped", "review_pending"]
    assert choice_canonical(TaskStatus.values, "finished") is None
    # a choice set that is part of an enum takes that enum's aliases for its values only
    assert choice_canonical(["completed", "failed"], "done") == "completed"
    assert choice_canonical(["completed", "failed"], "pending") is None


CHOICE_FILTER_PARAMS = [
    pytest.param(route.path, name, value, id=f"{route.prefix}?{name}={_pascal(value)}")
    for route in LISTS
    for name, filter_ in route.viewset.filterset_class.base_filters.items()
    if isinstance(filter_, CHOICE_FILTERS) and not isinstance(filter_, django_filters.ModelChoiceFilter)
    for value in [next(iter(v for v, _label in filter_.extra["choices"] if v))]
]


def test_it_finds_the_choice_filters_of_every_list() -> None:
    ids = {param.id for param in CHOICE_FILTER_PARAMS}
    assert {"tasks?status=NotStarted", "sessions?state=Initializing", "gate-results?gate=Tests",
            "messages?role=User"} <= ids


@pytest.mark.parametrize(("path", "name", "value"), CHOICE_FILTER_PARAMS)
def test_every_choice_filter_reads_pascal_case_as_the_value(api: APIClient, path: str, name: str, value: str) -> None:
    canonical = api.get(path, {name: value})
    assert canonical.status_code == 200, canonical.content
    aliased = api.get(path, {name: _pascal(value).upper() if "_" not in value else _pascal(value)})
    assert aliased.status_code == 200, aliased.content
    assert aliased.json() == canonical.json()


def _input_serializers() -> list[type[serializers.Serializer]]:
    for app in ("sessions_app", "conversations_app", "ledger_app"):
        importlib.import_module(f"{app}.api.serializers")
    found, pending = [], list(StrictKeysMixin.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__ != "ralphsite.core.api.serializers" \
                and cls.__module__.split(".")[0] in {config.name for config in apps.get_app_configs()}:
            found.append(cls)
    return found


def _writable_fields(cls: type[serializers.Serializer]) -> list[tuple[str, serializers.Field]]:
    fields: list[tuple[str, serializers.Field]] = []
    pending = list(cls().fields.items())
    while pending:
        name, field = pending.pop()
        if field.read_only:
            continue
        if isinstance(field, serializers.ListField):
            pending.append((f"{name}[]", field.child))
        elif isinstance(field, serializers.BaseSerializer):
            pending.extend((f"{name}.{inner}", child) for inner, child in getattr(field, "child", field).fields.items())
        else:
            fields.append((name, field))
    return fields


def test_every_body_s_choices_take_aliases_and_its_times_take_epoch_numbers() -> None:
    """Every writable choice and time of every request body (model and action serializers alike)."""
    classes = _input_serializers()
    assert len(classes) > 60
    choices = times = 0
    for cls in classes:
        for name, field in _writable_fields(cls):
            if isinstance(field, serializers.ChoiceField):
                assert isinstance(field, ChoiceFieldNamingAllowed), (cls, name)
                choices += 1
            if isinstance(field, serializers.DateTimeField):
                assert isinstance(field, EpochOrISODateTimeField), (cls, name)
                times += 1
    assert choices > 40 and times > 30


def test_bodies_take_the_seeds_spellings_and_answers_stay_canonical(api: APIClient) -> None:
    response = api.post("/api/v1/sessions/", {"key": "seeds", "state": "ExecutingBatch",
                                              "circuit_breaker_state": "half-open", "status": "Running"},
                        format="json")
    assert response.status_code == 201, response.content
    session = response.json()
    assert (session["state"], session["circuit_breaker_state"], session["status"]) == (
        "executing_batch", "half_open", "running")
    task = api.post("/api/v1/tasks/", {"session": session["id"], "key": "t1", "title": "T", "status": "pending",
                                       "task_type": "Parallelizable"}, format="json")
    assert task.status_code == 201, task.content
    assert (task.json()["status"], task.json()["task_type"]) == ("not_started", "parallelizable")
    claimed = api.post(f"/api/v1/sessions/{session['id']}/claim-task/", {"agent": "a"}, format="json")
    assert claimed.json()["status"] == "in_progress"
    listed = api.get(f"/api/v1/tasks/?session={session['id']}&status=running").json()["results"]
    assert [row["key"] for row in listed] == ["t1"]
    assert api.post(f"/api/v1/tasks/{task.json()['id']}/report/", {"agent": "a", "implementation_report": "did it",
                                                                  "claim": claimed.json()["claim"]},
                    format="json").status_code == 201
    status = api.post(f"/api/v1/tasks/{claimed.json()['id']}/status/", {"status": "Review_Pending",
                                                                        "claim": claimed.json()["claim"]},
                      format="json")
    assert status.status_code == 200, status.content
    assert status.json()["status"] == "review_pending"
    review = api.post(f"/api/v1/tasks/{task.json()['id']}/review/",
                      {"verdict": "Qualified", "agent": "r", "review_report": "fine"}, format="json")
    assert review.status_code == 200, review.content
    done = api.post(f"/api/v1/tasks/{claimed.json()['id']}/status/", {"status": "done"}, format="json")
    assert done.json()["status"] == "completed"
    assert review.json()["review_verdict"] == "qualified"
    body = assert_error_shape(api.post(f"/api/v1/tasks/{task.json()['id']}/status/", {"status": "finished"},
                                       format="json"), 400, "validation_error")
    assert "allowed: not_started" in body["details"]["status"][0]


def test_filters_take_the_seeds_spellings(api: APIClient) -> None:
    session = make_session(key="spell")
    make_task(session, "a")
    make_task(session, "b", status=TaskStatus.COMPLETED)
    for spelling, keys in (("pending", ["a"]), ("done", ["b"]), ("NotStarted", ["a"]), ("COMPLETED", ["b"])):
        response = api.get("/api/v1/tasks/", {"session": session.pk, "status": spelling})
        assert response.status_code == 200, response.content
        assert [row["key"] for row in response.json()["results"]] == keys, spelling


def test_the_schema_lists_the_aliases_of_each_enum_for_bodies_and_filters() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    task_status = schema["components"]["schemas"]["TaskStatusEnum"]
    assert task_status["x-aliases"] == {"InProgress": "in_progress", "NotStarted": "not_started",
                                        "ReviewPending": "review_pending", "pending": "not_started",
                                        "running": "in_progress", "done": "completed"}
    assert schema["components"]["schemas"]["CircuitBreakerStateEnum"]["x-aliases"]["half-open"] == "half_open"
    [status] = [p for p in schema["paths"]["/api/v1/tasks/"]["get"]["parameters"] if p["name"] == "status"]
    assert status["schema"]["items"]["x-aliases"]["done"] == "completed"


# -- ?<relation>_id= ---------------------------------------------------------------------------------

ID_TWINS = [
    pytest.param(route, name, id=f"{route.prefix}?{name}_id")
    for route in LISTS
    for name, filter_ in route.viewset.filterset_class.base_filters.items()
    if f"{name}_id" in route.viewset.filterset_class.base_filters
]


def test_it_finds_the_seeds_column_names_of_every_relation_filter() -> None:
    ids = {param.id for param in ID_TWINS}
    assert {"tasks?session_id", "chats?worktree_id", "chats?session_id", "runs?chat_id", "messages?run_id",
            "events?session_id", "task-attempts?task_id", "checkpoint-restores?checkpoint_id",
            "observations?loop_run_id"} <= ids
    every_relation = {f"{route.prefix}?{name}_id" for route in LISTS
                      for name, filter_ in route.viewset.filterset_class.base_filters.items()
                      if not name.endswith("_id") and filter_.field_name
                      and _reads_a_relation(route.viewset.filterset_class._meta.model, filter_.field_name)}
    assert every_relation <= ids


def _reads_a_relation(model: Any, path: str) -> bool:
    from django_filters.utils import get_model_field

    field = get_model_field(model, path)
    return field is not None and bool(field.many_to_one or field.one_to_one)


@pytest.mark.parametrize(("route", "name"), ID_TWINS)
def test_every_id_twin_means_the_same_as_its_filter(api: APIClient, route: Any, name: str) -> None:
    assert f"{name}_id" in allowed_query_parameters(_view(route.path, route.method))
    by_name, by_id = api.get(route.path, {name: ULID}), api.get(route.path, {f"{name}_id": ULID})
    assert by_name.status_code == by_id.status_code
    if by_name.status_code == 200:
        assert by_name.json() == by_id.json()
    else:  # the same refusal, naming the parameter sent
        assert by_name.json()["details"] == {name: by_id.json()["details"][f"{name}_id"]}


def test_an_id_twin_filters_as_its_filter_and_an_unknown_name_still_lists_the_allowed_ones(api: APIClient) -> None:
    session, other = make_session(key="one"), make_session(key="two")
    make_task(session, "a")
    make_task(other, "b")
    response = api.get("/api/v1/tasks/", {"session_id": session.pk})
    assert [row["key"] for row in response.json()["results"]] == ["a"]
    body = assert_error_shape(api.get("/api/v1/tasks/", {"sesion_id": session.pk}), 400, "validation_error")
    allowed = body["details"]["sesion_id"][0].split("allowed: ")[1].rstrip(".").split(", ")
    assert {"session", "session_id", "plan_id", "parent_id", "status"} <= set(allowed)


@pytest.mark.parametrize("path", ["/api/v1/stats/model-usage/", "/api/v1/stats/session-cost/", "/api/v1/search/"])
def test_a_declared_reference_parameter_answers_to_its_seed_column_name(api: APIClient, path: str) -> None:
    session, other = make_session(key="one"), make_session(key="two")
    query = {"q": "x"} if "search" in path else {}
    by_name = api.get(path, {**query, "session": session.pk})
    by_id = api.get(path, {**query, "session_id": session.pk})
    assert by_name.status_code == by_id.status_code == 200
    assert by_name.json() == by_id.json()
    assert api.get(path, {**query, "session_id": "one"}).json() == by_name.json()  # a key, as `session` takes
    assert api.get(path, {**query, "session_id": other.pk}).status_code == 200
    unknown = assert_error_shape(api.get(path, {**query, "session_id": "nope"}), 400, "validation_error")
    assert list(unknown["details"]) == ["session_id"]
    both = assert_error_shape(api.get(path, {**query, "session": session.pk, "session_id": session.pk}), 400,
                              "validation_error")
    assert both["details"] == {"session_id": ["Give `session` or `session_id`, not both."]}


# -- epoch times ----------------------------------------------------------------------------------

MOMENT = datetime(2026, 2, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize("spelling", [int(MOMENT.timestamp()), int(MOMENT.timestamp() * 1000),
                                      str(int(MOMENT.timestamp())), MOMENT.timestamp(), "2026-02-01T12:00:00Z",
                                      "2026-02-01T21:00:00+09:00"])
def test_times_take_epoch_seconds_milliseconds_and_iso_8601(api: APIClient, spelling: Any) -> None:
    session = make_session()
    response = api.post("/api/v1/events/", {"session": session.pk, "type": "run_started", "timestamp": spelling},
                        format="json")
    assert response.status_code == 201, response.content
    assert response.json()["timestamp"] == "2026-02-01T12:00:00Z"
    assert Session.objects.filter(pk=session.pk).exists()


def test_time_filters_take_epoch_numbers(api: APIClient) -> None:
    session = make_session()
    for moment in ("2026-02-01T11:00:00Z", "2026-02-01T13:00:00Z"):
        api.post("/api/v1/events/", {"session": session.pk, "type": "run_started", "timestamp": moment},
                 format="json")
    seconds = int(MOMENT.timestamp())
    for since in (seconds, seconds * 1000, "2026-02-01T12:00:00Z"):
        response = api.get("/api/v1/events/", {"session": session.pk, "since": since})
        assert response.status_code == 200, response.content
        assert [row["timestamp"] for row in response.json()["results"]] == ["2026-02-01T13:00:00Z"], since


@pytest.mark.parametrize("number", [10**20, EPOCH_LAST_MILLISECOND + 1, -1, -0.5])
def test_an_epoch_number_out_of_range_is_a_400_naming_the_field(api: APIClient, number: float) -> None:
    session = make_session()
    body = assert_error_shape(api.post("/api/v1/events/", {"session": session.pk, "type": "run_started",
                                                            "timestamp": number}, format="json"),
                              400, "validation_error")
    assert list(body["details"]) == ["timestamp"]
    body = assert_error_shape(api.get("/api/v1/events/", {"since": str(number)}), 400, "validation_error")
    assert body["details"]["since"][0].startswith(f"{str(number)!r} is out of range"), body  # as sent


@pytest.mark.parametrize(("number", "moment"), [(0, "1970-01-01T00:00:00Z"), (1e-05, "1970-01-01T00:00:00.000010Z"),
                                                (EPOCH_LAST_MILLISECOND, "9999-12-31T23:59:59.999000Z")])
def test_the_schema_s_epoch_bounds_and_python_s_float_spelling_are_taken(api: APIClient, number: float,
                                                                          moment: str) -> None:
    session = make_session()
    response = api.post("/api/v1/events/", {"session": session.pk, "type": "run_started", "timestamp": number},
                        format="json")
    assert response.status_code == 201 and response.json()["timestamp"] == moment, response.content
    assert api.get("/api/v1/events/", {"since": str(number)}).status_code == 200  # "1e-05" in a query
