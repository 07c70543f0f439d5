"""Every input gets the error shape, never a 500: odd filter values, bodies past the limit, deep JSON,
a bad Host, text and JSON past their size limits (the real server's own limits: test_live_server.py)."""

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from django.test import override_settings
from rest_framework import serializers
from rest_framework.test import APIClient

from ralphsite.api_urls import router
from ralphsite.core.api.fields import (
    JSON_MAX_BYTES,
    JSON_MAX_DEPTH,
    TEXT_MAX_CHARS,
    StorableJSONField,
    ULIDSerializerField,
)
from ralphsite.core.api.serializers import RalphInputSerializer, RalphModelSerializer
from tests.api_mixins import assert_error_shape
from tests.ledger_app.factories import make_session

# One user and token for the module (tests/conftest.py: shared_user): its tests only call the API with them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]


def _list_filters() -> list[tuple[str, str]]:
    return [(prefix, name) for prefix, viewset, _basename in router.registry
            if (filterset := getattr(viewset, "filterset_class", None)) is not None
            for name in filterset.base_filters]


@pytest.mark.parametrize(("prefix", "name"), _list_filters())
def test_it_answers_a_percent_sign_in_every_filter_of_every_list_without_a_500(
        api: APIClient, prefix: str, name: str) -> None:
    response = api.get(f"/api/v1/{prefix}/?{name}={quote('%s %(x)s %')}")
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert_error_shape(response, 400, "validation_error")


def test_it_names_the_id_filter_refusing_a_percent_sign(api: APIClient) -> None:
    body = assert_error_shape(api.get("/api/v1/events/?session=%25s"), 400, "validation_error")
    assert body["details"] == {"session": ["No session has the id or key '%s'."]}  # not a ULID: read as a key


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=4096)
@pytest.mark.parametrize("size", [4097, 40_000, 33 * 1024 * 1024])
def test_it_answers_a_body_past_the_limit_with_a_413_at_every_size(api: APIClient, size: int) -> None:
    body = json.dumps({"session": make_session().id, "type": "x-big", "message": "a" * size})
    response = api.post("/api/v1/events/", body, content_type="application/json")
    assert assert_error_shape(response, 413, "payload_too_large")["details"] == {"limit_bytes": 4096}


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=4096)
def test_it_takes_a_body_at_the_limit(api: APIClient) -> None:
    envelope = json.dumps({"session": make_session().id, "type": "x-big", "message": ""})
    body = envelope.replace('"message": ""', '"message": "' + "a" * (4096 - len(envelope)) + '"')
    assert len(body) == 4096
    assert api.post("/api/v1/events/", body, content_type="application/json").status_code == 201


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [JSON_MAX_DEPTH, 940, 5_000])
def test_it_refuses_json_nested_past_the_limit_with_a_400(api: APIClient, depth: int) -> None:
    # The body is an object: the value's depth plus one.
    body = f'{{"session": "{make_session().id}", "type": "x-deep", "meta": {_nested(depth)}}}'
    response = api.post("/api/v1/events/", body, content_type="application/json")
    assert f"{JSON_MAX_DEPTH} levels" in assert_error_shape(response, 400, "parse_error")["message"]


def test_it_takes_json_nested_up_to_the_limit(api: APIClient) -> None:
    # The body is an object, then "meta" and its "a": the limit exactly.
    body = f'{{"session": "{make_session().id}", "type": "x-deep", "meta": {{"a": {_nested(JSON_MAX_DEPTH - 2)}}}}}'
    assert api.post("/api/v1/events/", body, content_type="application/json").status_code == 201


def test_it_answers_a_host_it_does_not_serve_with_a_json_400(api: APIClient) -> None:
    for path in ("/api/v1/sessions/", "/healthz"):
        assert_error_shape(api.get(path, HTTP_HOST="evil.example"), 400, "invalid_host")


def _writable_fields(field: serializers.Field, name: str) -> Iterator[tuple[str, serializers.Field]]:
    if field.read_only:
        return
    if isinstance(field, serializers.ListSerializer):
        yield from _writable_fields(field.child, name)
    elif isinstance(field, serializers.Serializer):
        for child_name, child in field.fields.items():
            yield from _writable_fields(child, f"{name}.{child_name}")
    elif isinstance(field, serializers.ListField):
        yield from _writable_fields(field.child, f"{name}[]")
    else:
        yield name, field


def _input_serializers() -> list[type[serializers.Serializer]]:
    """Every serializer built on the project's bases (the router's import loads every app's)."""
    found: set[type] = set()
    pending: list[type] = [RalphInputSerializer, RalphModelSerializer]
    while pending:
        for subclass in pending.pop().__subclasses__():
            pending.append(subclass)
            if issubclass(subclass, RalphInputSerializer) or hasattr(subclass, "Meta"):
                found.add(subclass)
    return sorted(found, key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


@pytest.mark.parametrize("serializer_class", _input_serializers(), ids=lambda cls: cls.__qualname__)
def test_every_writable_text_and_json_field_of_every_serializer_is_bounded(serializer_class: type[Any]) -> None:
    for name, field in _writable_fields(serializer_class(), serializer_class.__name__):
        if isinstance(field, serializers.CharField):
            assert field.max_length is not None or isinstance(field, ULIDSerializerField), name
        if isinstance(field, (serializers.JSONField, serializers.DictField)):
            assert isinstance(field, StorableJSONField), name


def test_it_refuses_event_meta_past_the_json_limit_and_text_past_the_text_limit(api: APIClient) -> None:
    session = make_session().id
    meta = {"blob": "a" * JSON_MAX_BYTES}
    response = api.post("/api/v1/events/", {"session": session, "type": "x-big", "meta": meta}, format="json")
    assert "meta" in assert_error_shape(response, 400, "validation_error")["details"]
    response = api.post("/api/v1/events/", {"session": session, "type": "x-big", "message": "a" * (TEXT_MAX_CHARS + 1)},
                        format="json")
    assert "message" in assert_error_shape(response, 400, "validation_error")["details"]
    at_limits = {"session": session, "type": "x-big", "message": "a" * TEXT_MAX_CHARS,
                 "meta": {"blob": "a" * (JSON_MAX_BYTES - len('{"blob":""}'))}}
    assert api.post("/api/v1/events/", at_limits, format="json").status_code == 201


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=4096)
@pytest.mark.parametrize("path", ["/mcp/", "/admin/login/", "/admin/sessions_app/session/add/", "/no-such-page/"])
def test_it_answers_a_body_past_the_limit_with_the_json_413_on_every_path(anon_api: APIClient, path: str) -> None:
    """Issue #28 §5: /mcp/ and /admin/ answered a text/plain 413."""
    response = anon_api.post(path, "a" * 4097, content_type="application/x-www-form-urlencoded")
    assert assert_error_shape(response, 413, "payload_too_large")["details"] == {"limit_bytes": 4096}
