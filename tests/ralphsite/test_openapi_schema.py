"""The OpenAPI schema is written for the agent calling the API: every operation has a summary and a
description free of developers' notes, lists the errors it can answer in the one error shape, and
declares the shapes the server sends. These tests walk the whole schema, so a new resource is held to
the same rules."""

import gzip
import json
import re
from typing import Any

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from ledger_app.models import EVENT_TYPES
from ralphsite.core.api import schema_view
from ralphsite.core.api.schema import NOT_BLANK

# Phrases of base classes' docstrings and implementation words no agent-facing text uses.
DEVELOPER_PHRASES = ("Override", "override", "viewset", "ViewSet", "DRF", "values()", "services.", "selectors.",
                     "Mixed into", "serializer", "Serializer", "queryset", "docstring", "CPU", "cached")

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, operation) for path, operations in schema["paths"].items()
            for method, operation in operations.items() if method in METHODS]


def test_it_gives_every_operation_a_one_line_summary_and_a_description_for_agents(schema: dict[str, Any]) -> None:
    operations = _operations(schema)
    assert len(operations) > 250
    problems = []
    for method, path, operation in operations:
        summary, description = operation.get("summary", ""), operation.get("description", "")
        if not summary or "\n" in summary or len(summary) > 60:
            problems.append((method, path, "summary", summary))
        if not description:
            problems.append((method, path, "description", description))
        problems += [(method, path, "developer phrase", phrase) for phrase in DEVELOPER_PHRASES
                     if phrase in description]
    assert problems == []
    summaries = [(path.split("/")[3], operation["summary"]) for _method, path, operation in operations]
    assert len(set(summaries)) == len(summaries), "two operations of one resource share a summary"


def test_it_keeps_developer_notes_out_of_the_components(schema: dict[str, Any]) -> None:
    leaks = [(name, phrase) for name, component in schema["components"]["schemas"].items()
             for phrase in DEVELOPER_PHRASES if phrase in component.get("description", "")]
    assert leaks == []


def test_it_names_crud_operations_by_their_resource(schema: dict[str, Any]) -> None:
    paths = schema["paths"]
    assert paths["/api/v1/tasks/"]["get"]["summary"] == "List tasks"
    assert paths["/api/v1/tasks/"]["post"]["summary"] == "Create a task"
    assert paths["/api/v1/acceptance-criteria/{id}/"]["patch"]["summary"] == "Update an acceptance criterion"
    assert paths["/api/v1/chats/{id}/"]["delete"]["summary"] == "Delete a chat"
    assert "If-Match" in paths["/api/v1/chats/{id}/"]["put"]["description"]
    assert "offline-first" in paths["/api/v1/sessions/"]["post"]["description"]


def _error_ref(schema: dict[str, Any], response: dict[str, Any]) -> str:
    """The schema an error response refers to, through its response component."""
    name = response["$ref"].removeprefix("#/components/responses/")
    component = schema["components"]["responses"][name]
    assert component["description"]
    return component["content"]["application/json"]["schema"]["$ref"]


def test_it_documents_the_errors_each_operation_can_answer_in_the_error_shape(schema: dict[str, Any]) -> None:
    error = schema["components"]["schemas"]["Error"]
    assert set(error["properties"]) == {"code", "message", "details"}
    missing = []
    for method, path, operation in _operations(schema):
        responses = operation["responses"]
        expected = {"400", "401", "403", "414", "429", "503"}
        if "{" in path:
            expected.add("404")
        if method in ("POST", "PUT", "PATCH"):
            expected.add("413")
        missing += [(method, path, status) for status in sorted(expected - set(responses))]
        for status, response in responses.items():
            if status >= "400":
                assert _error_ref(schema, response) == "#/components/schemas/Error", (method, path, status)
    assert missing == []
    chat = schema["paths"]["/api/v1/chats/{id}/"]
    assert "412" in chat["patch"]["responses"] and "412" not in chat["get"]["responses"]
    assert "409" in schema["paths"]["/api/v1/sessions/{id}/claim-task/"]["post"]["responses"]
    assert "409" in schema["paths"]["/api/v1/sessions/{id}/waves/"]["get"]["responses"]


def test_it_lists_the_ledger_event_types(schema: dict[str, Any]) -> None:
    event_type = schema["components"]["schemas"]["LedgerEvent"]["properties"]["type"]
    [listed] = [choice["enum"] for choice in event_type["anyOf"] if "enum" in choice]
    assert listed == list(EVENT_TYPES) and "task_completed" in listed
    assert any(choice.get("pattern", "").startswith("^x-") for choice in event_type["anyOf"])


def test_it_declares_the_shapes_the_server_sends(schema: dict[str, Any]) -> None:
    search = schema["paths"]["/api/v1/search/"]
    assert search["get"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SearchPage"}
    assert search["post"]["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SearchPage"}
    waves = schema["paths"]["/api/v1/sessions/{id}/waves/"]["get"]["responses"]["200"]
    assert waves["content"]["application/json"]["schema"]["type"] == "array"
    feedback = schema["paths"]["/api/v1/sessions/{id}/feedback/"]["get"]["responses"]["200"]
    assert feedback["content"]["application/json"]["schema"]["type"] == "array"
    assert schema["components"]["schemas"]["Pattern"]["properties"]["embedding"]["nullable"] is True


# The path segments that name a row by key as well as by id (README: "Keys wherever an id is taken").
KEYED_SEGMENTS = ("/api/v1/sessions/{id}/", "/api/v1/plans/{id}/", "/api/v1/checkpoints/{id}/",
                  "/api/v1/sessions/{session}/tasks/{id}/", "/api/v1/sessions/{session}/questions/{id}/")


def test_it_says_where_a_path_takes_a_key(schema: dict[str, Any]) -> None:
    keyed = 0
    for method, path, operation in _operations(schema):
        named = {parameter["name"]: parameter.get("description", "")
                 for parameter in operation.get("parameters", []) if parameter["in"] == "path"}
        if path.startswith(KEYED_SEGMENTS):
            keyed += 1
            assert "id or `key`" in named["id"], (method, path)
            assert "by its id;" not in operation["description"], (method, path)
        if "{session}" in path:
            assert named["session"] == "The session's id or `key`.", (method, path)
        if path.startswith("/api/v1/tasks/{id}/"):  # a task's key is unique within its session only
            assert "key" not in named["id"], (method, path)
    assert keyed >= 30
    events = schema["paths"]["/api/v1/events/{id}/"]["get"]["parameters"]
    assert [parameter["schema"] for parameter in events if parameter["name"] == "id"] == [{"type": "integer"}]


@pytest.mark.django_db
def _query_schema(schema: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    return next(parameter["schema"] for parameter in schema["paths"][path]["get"]["parameters"]
                if parameter["name"] == name)


def test_not_blank_means_what_drf_s_trimming_means() -> None:
    # Found by schemathesis: "\u001f" matched `\S`, and DRF trimmed it to a blank agent name.
    python_whitespace = [chr(code) for code in range(0x110000) if chr(code).isspace()]
    assert not any(re.search(NOT_BLANK, character) for character in python_whitespace)
    assert all(re.search(NOT_BLANK, character) for character in ("a", "\ufeff", "\x00", "\u200b", "한"))
    assert all(re.search(NOT_BLANK, chr(code)) for code in range(0x110000)
               if not chr(code).isspace() and not 0xD800 <= code <= 0xDFFF)


def test_it_declares_the_bounds_the_server_enforces(schema: dict[str, Any]) -> None:
    """What schemathesis found: an empty bulk body, a blank or out-of-range filter value, a `running`
    finish, a feature step of any shape, a null JSON value were allowed by the schema and refused."""
    messages = schema["paths"]["/api/v1/runs/{id}/messages/"]["post"]["requestBody"]["content"]["application/json"]
    assert (messages["schema"]["minItems"], messages["schema"]["maxItems"]) == (1, 1000)
    components = schema["components"]["schemas"]
    assert components["MarkSyncedRequest"]["properties"]["items"]["minItems"] == 1
    assert _query_schema(schema, "/api/v1/tasks/", "key")["pattern"] == NOT_BLANK
    assert _query_schema(schema, "/api/v1/tasks/", "ordering")["minItems"] == 1
    assert _query_schema(schema, "/api/v1/tasks/", "wave")["maximum"] == 2**63 - 1
    assert _query_schema(schema, "/api/v1/observations/", "importance_max") == {"type": "number", "format": "float"}
    finish = schema["paths"]["/api/v1/sessions/{id}/finish/"]["post"]["requestBody"]["content"]["application/json"]
    finish_status = components[finish["schema"]["$ref"].rsplit("/", 1)[1]]["properties"]["status"]["$ref"]
    assert "running" not in components[finish_status.rsplit("/", 1)[1]]["enum"]
    assert components["FeatureRequest"]["properties"]["steps"]["items"]["required"] == ["step", "passes"]
    assert components["SessionStateSetRequest"]["properties"]["value"] == {"not": {"enum": [None]}}
    assert components["SyncItemRequest"]["properties"]["remote_id"]["pattern"] == NOT_BLANK  # trimmed, then not blank
    price = components["ModelPriceRequest"]["properties"]["input_per_mtok"]["pattern"]
    assert [bool(re.match(price, value)) for value in ("1.5", ".5", "-1", "-", ".", "")] == [
        True, True, False, False, False, False]
    [if_match] = [parameter for parameter in schema["paths"]["/api/v1/chats/{id}/"]["patch"]["parameters"]
                  if parameter["name"] == "If-Match"]
    assert re.match(if_match["schema"]["pattern"], '"3"') and not re.match(if_match["schema"]["pattern"], "nope")
    assert "session" in components["TaskRequest"]["required"]


def test_it_marks_the_operations_whose_valid_requests_may_name_a_missing_row(schema: dict[str, Any]) -> None:
    """`x-refers-to-existing` (tests/schemathesis.toml reads it): a body or filter naming a row, or a
    cursor; a 400 naming it when there is none, which no schema can foresee."""
    marked = {(method, path) for method, path, operation in _operations(schema)
              if operation.get("x-refers-to-existing")}
    assert {("POST", "/api/v1/events/"), ("GET", "/api/v1/tasks/"), ("GET", "/api/v1/token-usage/"),
            ("POST", "/api/v1/search/"), ("GET", "/api/v1/stats/{name}/")} <= marked
    assert not {("GET", "/api/v1/sessions/"), ("POST", "/api/v1/sessions/"), ("GET", "/api/v1/tasks/{id}/"),
                ("POST", "/api/v1/chats/{id}/restore/")} & marked
    assert "query.session" in schema["paths"]["/api/v1/tasks/"]["get"]["description"]


def test_it_serves_the_schema_the_generator_builds(client: Client, schema: dict[str, Any]) -> None:
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    assert json.loads(response.content)["paths"].keys() == schema["paths"].keys()


@pytest.mark.django_db
def test_it_serves_the_schema_to_anyone_from_memory_without_a_query(client: Client, django_assert_num_queries) -> None:
    first = client.get("/api/schema/?format=json")
    assert first.status_code == 200
    entries = len(schema_view._rendered)
    # Built once: later requests, whatever `?version=` says, are answered from memory with no query
    # (no authentication, no throttle count) and add no cache entry.
    with django_assert_num_queries(0):
        again = client.get("/api/schema/?format=json&version=9")
    assert again.status_code == 200 and again.content == first.content
    assert len(schema_view._rendered) == entries
    assert first["Cache-Control"] == "public, max-age=3600"


@pytest.mark.django_db
def test_it_serves_the_schema_gzip_compressed_when_the_client_accepts_it(client: Client) -> None:
    plain = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    compressed = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json",
                            HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert "Content-Encoding" not in plain and compressed["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in compressed["Vary"]
    assert gzip.decompress(compressed.content) == plain.content
    assert len(compressed.content) * 10 < len(plain.content)
    assert compressed["Content-Type"] == plain["Content-Type"] == "application/vnd.oai.openapi+json"
    yaml_schema = client.get("/api/schema/", HTTP_ACCEPT_ENCODING="gzip")
    assert gzip.decompress(yaml_schema.content).startswith(b"openapi: 3.")
