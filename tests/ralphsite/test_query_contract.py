"""Nothing a client sends is silently ignored (issue #14 §1), walked over every route of the three
routers (sessions, conversations, ledger, stats included), so a route added later is covered too:
an unknown query parameter, a junk filter or page value, an unknown ordering and a read-only field in
a write body are each a 400 naming what is allowed, and the schema lists exactly what a route honours."""

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.urls import resolve
from django_filters import filters as django_filters
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers
from rest_framework.test import APIClient
from rest_framework.views import APIView

from ledger_app.api.filters import ULIDFilter
from ralphsite.core.api.filters import FloatFilter
from ralphsite.core.api.query import allowed_query_parameters
from sessions_app.models import Session
from tests.api_mixins import ApiRoute, api_routes, assert_error_shape
from tests.sessions_app.factories import make_session

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

ROUTES = api_routes()
IDS = [route.id for route in ROUTES]


def _send(api: APIClient, route: ApiRoute, query: str) -> Any:
    request = getattr(api, route.method)
    if route.method in ("get", "delete"):
        return request(f"{route.path}?{query}")
    return request(f"{route.path}?{query}", {}, format="json")


def _view(path: str, method: str) -> APIView:
    """The viewset instance the router builds for one method of a path (not dispatched)."""
    match = resolve(path)
    view = match.func.cls(**match.func.initkwargs)
    view.action_map = match.func.actions
    view.action = match.func.actions[method]
    view.request, view.args, view.kwargs, view.format_kwarg = None, (), match.kwargs, None
    return view


def _allowed(route: ApiRoute) -> frozenset[str]:
    return allowed_query_parameters(_view(route.path, route.method))


def test_it_walks_every_router_and_kind_of_route() -> None:
    prefixes = {route.prefix for route in ROUTES}
    assert {"sessions", "chats", "events", "stats", "search", "sync"} <= prefixes
    actions = {(route.prefix, route.action) for route in ROUTES}
    assert {("sessions", "interrupted"), ("stats", "retrieve"), ("runs", "messages"), ("tasks", "status"),
            ("events", "create"), ("chats", "destroy")} <= actions


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_it_refuses_an_unknown_query_parameter_naming_the_allowed_ones(api: APIClient, route: ApiRoute) -> None:
    body = assert_error_shape(_send(api, route, "no_such_parameter=1"), 400, "validation_error")
    assert list(body["details"]) == ["no_such_parameter"], body
    allowed = body["details"]["no_such_parameter"][0].removeprefix("Unknown query parameter; allowed: ")
    assert set(allowed.rstrip(".").split(", ")) == _allowed(route)


def test_it_accepts_format_and_names_a_list_s_filters_ordering_and_pages(api: APIClient) -> None:
    assert api.get("/api/v1/tasks/?format=json&status=failed&ordering=key&page=1&page_size=5").status_code == 200
    message = assert_error_shape(api.get("/api/v1/tasks/?sesion=x"), 400, "validation_error")["message"]
    assert message.startswith("sesion: Unknown query parameter; allowed: ")
    assert {"session", "status", "ordering", "page", "page_size", "format"} <= set(
        message.split("allowed: ")[1].rstrip(".").split(", "))


def _schema_operations() -> list[tuple[str, str, dict[str, Any]]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [(path, method, operation) for path, operations in schema["paths"].items()
            for method, operation in operations.items()]


def test_the_schema_lists_exactly_the_query_parameters_each_route_honours() -> None:
    operations = _schema_operations()
    assert len(operations) == len(ROUTES)
    for path, method, operation in operations:
        declared = {parameter["name"] for parameter in operation.get("parameters", []) if parameter["in"] == "query"}
        view = _view(re.sub(r"\{[^}]+\}", "1", path), method)
        assert declared | {"format"} == allowed_query_parameters(view), (method, path)


def test_interrupted_sessions_advertise_only_what_they_honour() -> None:
    [operation] = [op for path, method, op in _schema_operations() if path == "/api/v1/sessions/interrupted/"]
    assert {parameter["name"] for parameter in operation["parameters"]} == {
        "idle_seconds", "project_path", "page", "page_size"}


# -- junk values ---------------------------------------------------------------------------------

CHOICE_FILTERS = (django_filters.ChoiceFilter, django_filters.MultipleChoiceFilter)


def _junk(filter_: django_filters.Filter) -> str | None:
    """A value the filter cannot mean anything by (None: any text is a valid value for it)."""
    if isinstance(filter_, django_filters.BooleanFilter):
        return "maybe"
    if isinstance(filter_, CHOICE_FILTERS):
        return "no-such-value"
    if isinstance(filter_, FloatFilter):
        return "1e309"  # a number, but no finite float
    if isinstance(filter_, (django_filters.NumberFilter, django_filters.DateTimeFilter, ULIDFilter,
                            django_filters.ModelChoiceFilter)):
        return "x"
    return None


JUNK_FILTERS = [
    pytest.param(route.path, name, junk,
                 isinstance(filter_, CHOICE_FILTERS) and not isinstance(filter_, django_filters.ModelChoiceFilter),
                 id=f"{route.prefix}?{name}={junk}")
    for route in ROUTES if route.action == "list" and getattr(route.viewset, "filterset_class", None)
    for name, filter_ in route.viewset.filterset_class.base_filters.items()
    if (junk := _junk(filter_)) is not None
]


def test_it_finds_junk_for_every_kind_of_filter() -> None:
    ids = {param.id for param in JUNK_FILTERS}
    assert {"acceptance-criteria?passes=maybe", "gate-results?passed=maybe", "chats?include_deleted=maybe",
            "tasks?status=no-such-value", "events?session=x", "tasks?wave=x", "events?since=x",
            "observations?importance_max=1e309"} <= ids


@pytest.mark.parametrize(("path", "name", "junk", "is_choice"), JUNK_FILTERS)
def test_it_refuses_a_junk_filter_value_naming_the_filter(api: APIClient, path: str, name: str, junk: str,
                                                          is_choice: bool) -> None:
    body = assert_error_shape(api.get(path, {name: junk}), 400, "validation_error")
    assert list(body["details"]) == [name], body
    if is_choice:
        assert "allowed: " in body["details"][name][0], body


FILTERED = [pytest.param(route.path, sorted(route.viewset.filterset_class.base_filters), id=route.prefix)
            for route in ROUTES if route.action == "list" and getattr(route.viewset, "filterset_class", None)]


def test_it_finds_the_filters_of_every_filtered_list() -> None:
    filters = {param.id: param.values[1] for param in FILTERED}
    assert {"until", "since", "session", "session_id"} <= set(filters["events"])
    assert {"passes"} <= set(filters["acceptance-criteria"]) and {"status"} <= set(filters["tasks"])
    assert {"importance_max", "created_after", "type"} <= set(filters["observations"])


@pytest.mark.parametrize(("path", "names"), FILTERED)
def test_it_refuses_an_empty_value_of_every_filter_naming_each(api: APIClient, path: str, names: list[str]) -> None:
    """django-filter reads `?until=` as no filter at all: every row, unfiltered, for a client whose
    variable was empty. All of a list's filters are sent empty at once (spaces count as empty)."""
    body = assert_error_shape(api.get(path, {name: "" if index % 2 else " " for index, name in enumerate(names)}),
                              400, "validation_error")
    assert sorted(body["details"]) == names, body
    assert api.get(path, {"ordering": ""}).status_code == 400


def test_it_reads_boolean_filters_in_the_usual_spellings(api: APIClient) -> None:
    for spelling in ("true", "True", "1", "yes", "false", "0", "no"):
        assert api.get("/api/v1/acceptance-criteria/", {"passes": spelling}).status_code == 200, spelling


PAGED = [
    pytest.param(route.path, name, value, id=f"{route.path}?{name}={value}")
    for route in ROUTES if route.method == "get"
    for name, values in (("page_size", ("0", "-1", "x", "1.5")), ("page", ("0", "x")), ("cursor", ("junk",)))
    if name in _allowed(route)
    for value in values
]


def test_it_finds_page_number_cursor_and_declared_pages() -> None:
    paths = {param.values[0] for param in PAGED}
    assert {"/api/v1/tasks/", "/api/v1/events/", "/api/v1/messages/", "/api/v1/sessions/interrupted/",
            "/api/v1/search/"} <= paths


@pytest.mark.parametrize(("path", "name", "value"), PAGED)
def test_it_refuses_a_junk_page_size_page_or_cursor(api: APIClient, path: str, name: str, value: str) -> None:
    body = assert_error_shape(api.get(path, {name: value}), 400, "validation_error")
    assert name in body["details"], body


def test_it_serves_the_last_page_by_name(api: APIClient) -> None:
    Session.objects.create(key="only")
    body = api.get("/api/v1/sessions/", {"page": "last", "page_size": 1}).json()
    assert body["count"] == 1 and len(body["results"]) == 1, body


# -- ordering ------------------------------------------------------------------------------------

ORDERED = [pytest.param(route, id=route.prefix) for route in ROUTES
           if route.method == "get" and "ordering" in _allowed(route)]


def test_every_model_list_is_ordered() -> None:
    model_lists = {route.prefix for route in ROUTES if route.action == "list" and hasattr(route.viewset, "queryset")}
    assert {param.id for param in ORDERED} == model_lists


@pytest.mark.parametrize("route", ORDERED)
def test_it_orders_by_every_allowed_field_and_refuses_others(api: APIClient, route: ApiRoute) -> None:
    fields = route.viewset.ordering_fields
    for field in fields:
        for term in (field, f"-{field}"):
            assert api.get(route.path, {"ordering": term}).status_code == 200, term
    body = assert_error_shape(api.get(route.path, {"ordering": "-no_such_field"}), 400, "validation_error")
    assert body["details"]["ordering"][0].endswith(f"allowed: {', '.join(sorted(fields))} (prefix '-' for "
                                                   "descending).")


# -- read-only fields in write bodies -----------------------------------------------------------

def _body_fields(route: ApiRoute) -> dict[str, serializers.Field]:
    """The body fields of a route's serializer (none for a route with no model serializer)."""
    view = _view(route.path, route.method)
    if not hasattr(view, "get_serializer"):  # not a model's create (POST search/ takes the search params)
        return {}
    return dict(view.get_serializer().fields)


def _fields(route: ApiRoute, wanted: Callable[[serializers.Field], bool]) -> list[str]:
    """The names of the body fields of a route's serializer that `wanted` picks."""
    return sorted(name for name, field in _body_fields(route).items() if wanted(field))


def _read_only_fields(route: ApiRoute) -> list[str]:
    return _fields(route, lambda field: field.read_only)


def _on_create(cases_of: Callable[[ApiRoute], list[Any]], *, shown: Callable[[tuple], str] = lambda case: case[0]
               ) -> list[Any]:
    """One case per create route and case `cases_of` gives: a field's name, or a tuple starting with
    it; each test gets the route's path and then the case, and is named by the route and `shown(case)`."""
    return [pytest.param(route.path, *case, id=f"{route.prefix} {shown(case)}")
            for route in ROUTES if route.action == "create"
            for case in (item if isinstance(item, tuple) else (item,) for item in cases_of(route))]


READ_ONLY_ON_CREATE = _on_create(_read_only_fields)


def test_it_finds_the_read_only_fields_of_every_create() -> None:
    ids = {param.id for param in READ_ONLY_ON_CREATE}
    assert {"sessions total_cost_usd", "runs sequence_number", "events id", "signals processed_by",
            "acceptance-criteria failure_count", "chats created_at"} <= ids
    assert "acceptance-criteria passes" not in ids and "sessions token_count" not in ids  # the seeds write these


@pytest.mark.parametrize(("path", "name"), READ_ONLY_ON_CREATE)
def test_it_refuses_a_read_only_field_in_a_create_body(api: APIClient, path: str, name: str) -> None:
    body = assert_error_shape(api.post(path, {name: "x"}, format="json"), 400, "validation_error")
    assert name in body["details"], body


READ_ONLY_ON_UPDATE = [
    pytest.param(route, name, id=f"{route.prefix} {name}")
    for route in ROUTES if route.action == "partial_update"
    for name in _read_only_fields(route)
]


@pytest.mark.parametrize(("route", "name"), READ_ONLY_ON_UPDATE)
def test_it_refuses_a_changed_read_only_field_in_an_update(route: ApiRoute, name: str) -> None:
    view = _view(route.path, route.method)
    model = view.get_queryset().model
    serializer = view.get_serializer_class()(instance=model(), data={name: "x"}, partial=True)
    assert not serializer.is_valid()
    assert name in serializer.errors and "Read-only" in str(serializer.errors[name][0]), serializer.errors


# -- null is null -----------------------------------------------------------------------------------

def _read_as_null(field: serializers.Field) -> bool:
    """Whether DRF's own field reads `""` as null (a relation, a nullable number or boolean)."""
    try:
        return field.run_validation("") is None
    except (serializers.ValidationError, serializers.SkipField):
        return False


NULLABLE_ON_CREATE = _on_create(lambda route: _fields(route, lambda field: not field.read_only
                                                                      and _read_as_null(field)))


def test_it_finds_the_fields_drf_reads_an_empty_string_as_null_in() -> None:
    ids = {param.id for param in NULLABLE_ON_CREATE}
    assert {"tasks plan", "tasks parent", "chats session", "errors recovery_success"} <= ids, sorted(ids)


@pytest.mark.parametrize(("path", "name"), NULLABLE_ON_CREATE)
def test_it_refuses_an_empty_string_for_null_naming_the_field(api: APIClient, path: str, name: str) -> None:
    """DRF reads `""` as null in a relation, a number or a boolean: `"session": ""` created a row of no
    session. null says no value; an empty string is refused."""
    body = assert_error_shape(api.post(path, {name: ""}, format="json"), 400, "validation_error")
    assert name in body["details"], body


# -- text fields take text only ---------------------------------------------------------------------

def _text_fields(route: ApiRoute) -> list[tuple[str, Any, Any]]:
    """The writable text fields of a create body (lists of text too), each with a number in place of
    its text and with its longest text padded by one space past its max_length (None for a ULID)."""
    found = []
    for name, field in _body_fields(route).items():
        text, wrap = field, (lambda value: value)
        if isinstance(field, serializers.ListField):
            text, wrap = field.child, (lambda value: ["a", value])
        if not field.read_only and isinstance(text, serializers.CharField):
            found.append((name, wrap(123), wrap("a" * text.max_length + " ") if text.max_length else None))
    return found


TEXT_ON_CREATE = _on_create(_text_fields)


def test_it_finds_the_text_fields_of_every_create() -> None:
    ids = {param.id for param in TEXT_ON_CREATE}
    assert {"baselines branch", "acceptance-criteria verification_evidence", "runs remote_id", "chats title",
            "chats tags", "events type", "tasks key"} <= ids


@pytest.mark.parametrize(("path", "name", "number", "padded"), TEXT_ON_CREATE)
def test_it_refuses_a_number_or_padded_text_in_a_text_field_naming_it(api: APIClient, path: str, name: str,
                                                                       number: Any, padded: Any) -> None:
    """DRF's CharField would store `123` as "123", and measure text after trimming its whitespace: a
    wrong type or a length past the schema's maxLength is the client's mistake to hear about."""
    body = assert_error_shape(api.post(path, {name: number}, format="json"), 400, "validation_error")
    assert body["details"].get(name) == ["Not a valid string."], body
    if padded is not None:
        body = assert_error_shape(api.post(path, {name: padded}, format="json"), 400, "validation_error")
        assert "no more than" in str(body["details"].get(name)), body


# -- numbers and booleans take their JSON type only ---------------------------------------------------

# What DRF would coerce into each kind of field: text, a fraction, a boolean as a number, a number as
# a boolean. Decimals and times are left out: they take a number by contract (epoch times, amounts).
WRONG_JSON_TYPES: dict[type[serializers.Field], tuple[Any, ...]] = {
    serializers.BooleanField: (0, "true", "no"),
    serializers.IntegerField: ("7", 7.5, 7.0, True),
    serializers.FloatField: ("0.5", False),
}


def _typed_fields(route: ApiRoute) -> list[tuple[str, str, Any]]:
    """(name, the message for a wrong value, a wrong value) for each boolean or number: the kind's
    message on every DRF version (3.17 gave big integers their own wording)."""
    return [(name, kind.default_error_messages["invalid"], wrong)
            for name, field in _body_fields(route).items() if not field.read_only
            for kind, values in WRONG_JSON_TYPES.items() if isinstance(field, kind) for wrong in values]


TYPED_ON_CREATE = _on_create(_typed_fields, shown=lambda case: f"{case[0]} {case[2]!r}")


def test_it_finds_the_boolean_and_number_fields_of_every_create() -> None:
    ids = {param.id for param in TYPED_ON_CREATE}
    assert {"sessions max_iterations '7'", "sessions bug_council_activated 0", "errors recovery_success 'true'",
            "features sequence 7.0", "tasks wave True"} <= ids, sorted(ids)


@pytest.mark.parametrize(("path", "name", "message", "wrong"), TYPED_ON_CREATE)
def test_it_refuses_a_boolean_or_number_of_another_json_type_naming_it(
        api: APIClient, path: str, name: str, message: str, wrong: Any) -> None:
    """DRF would read `"true"`, `0` and `"no"` as booleans and `"7"`, `7.5` (truncated) and `true` as
    integers: the schema states each field's JSON type, and another is the client's bug to hear about."""
    body = assert_error_shape(api.post(path, {name: wrong}, format="json"), 400, "validation_error")
    assert body["details"].get(name) == [message], body


def test_action_bodies_take_json_types_and_query_strings_take_text(api: APIClient) -> None:
    session = make_session(key="typed", status="failed")
    body = assert_error_shape(api.post(f"/api/v1/sessions/{session.pk}/resume/", {"force": 0}, format="json"),
                              400, "validation_error")
    assert body["details"] == {"force": ["Must be a valid boolean."]}, body
    body = assert_error_shape(api.post(f"/api/v1/sessions/{session.pk}/claim-task/",
                                       {"agent": "a", "lease_seconds": "60"}, format="json"), 400, "validation_error")
    assert body["details"] == {"lease_seconds": ["A valid integer is required."]}, body
    assert api.get("/api/v1/search/?q=x&page=1&page_size=5").status_code == 200  # numbers in a query are text
