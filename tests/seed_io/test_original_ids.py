"""Original ids stay addressable (issue #29 §7): the id a row had in the seed tool's file (a Ralph V2 GUID, a
ralphy run id that is no ULID, claude-mem's `obs-1`) finds that row wherever an id or key is accepted (paths,
filters, related rows in a body), unless two files gave that id to rows in scope (then it names none: never the
wrong one). Every list of a model with ULID ids takes `?source_id=`: all the rows in scope imported under that id."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from conversations_app.models import Observation
from ralphsite.core.models import SeedRow, TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session
from tests.api_mixins import assert_error_shape
from tests.seed_io.helpers import import_seed
from tests.seed_io.test_memory import _memory_db
from tests.seed_io.test_ralph import AUTH, _ralph_db
from tests.seed_io.test_ralphy import _ralphy_db
from tests.seed_io.test_sources import _second_project

pytestmark = pytest.mark.django_db


def test_a_ralph_v2_session_guid_names_its_session_in_paths_filters_and_bodies(tmp_path: Path,
                                                                              api: APIClient) -> None:
    import_seed("ralph", _ralph_db(tmp_path / "ralph.db"))
    session = Session.objects.get(key="sess-auth")
    assert session.pk != AUTH
    assert api.get(f"/api/v1/sessions/{AUTH}/").json()["id"] == session.pk
    tasks = api.get("/api/v1/tasks/", {"session": AUTH}).json()["results"]
    assert {task["session"] for task in tasks} == {session.pk} and len(tasks) == 6
    response = api.post("/api/v1/session-state/", {"session": AUTH, "key": "note", "value": {"한": 1}},
                        format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["session"] == session.pk


def test_claude_mems_observation_id_names_its_observation(tmp_path: Path, api: APIClient) -> None:
    import_seed("memory", _memory_db(tmp_path / "memory.db"))
    observation = Observation.objects.get(content=api.get("/api/v1/observations/obs-1/").json()["content"])
    assert observation.pk != "obs-1"
    assert api.get("/api/v1/observations/obs-404/").status_code == 404


def test_an_id_two_files_gave_names_no_row(tmp_path: Path, api: APIClient) -> None:
    first = _memory_db(tmp_path / "first.db")
    import_seed("memory", first)
    import_seed("memory", _second_project("memory", first, tmp_path / "second.db"))  # its own sessions
    assert SeedRow.objects.filter(source_table="observations", source_key="obs-1").values("object_id").distinct() \
        .count() == 2
    assert api.get("/api/v1/observations/obs-1/").status_code == 404


RUN_ID = "01JKQ9ZZZZZZZZZZZZZZZRUN01"  # ULID-like, but U is not in ULID's alphabet: a key, not our id


def test_a_ralphy_run_id_that_is_no_ulid_names_its_session(tmp_path: Path, api: APIClient) -> None:
    path = _ralphy_db(tmp_path / "ralphy.db")
    with sqlite3.connect(path) as db:
        for table, column in (("runs", "id"), ("tasks", "run_id"), ("ledger", "run_id"), ("issues", "run_id")):
            db.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = 'run-20260101-a'", (RUN_ID,))
    import_seed("ralphy", path)
    session = Session.objects.get(key=RUN_ID)
    assert api.get(f"/api/v1/sessions/{RUN_ID}/").json()["id"] == session.pk
    events = api.get("/api/v1/events/", {"session": RUN_ID}).json()["results"]
    assert events and {event["session"] for event in events} == {session.pk}


def test_source_id_lists_the_rows_in_scope_an_import_brought_under_that_id(tmp_path: Path, api: APIClient,
                                                                           user: Any) -> None:
    first = _memory_db(tmp_path / "first.db")
    import_seed("memory", first)
    import_seed("memory", _second_project("memory", first, tmp_path / "second.db"))
    both = api.get("/api/v1/observations/", {"source_id": "obs-1"})
    assert both.status_code == 200, both.content
    mine, theirs = Session.objects.get(key="mem-sess-1"), Session.objects.get(key="mem-sess-1-b")
    assert sorted(o["session"] for o in both.json()["results"]) == sorted([mine.pk, theirs.pk])
    assert api.get("/api/v1/observations/", {"source_id": "obs-404"}).json()["results"] == []
    assert [s["id"] for s in api.get("/api/v1/sessions/", {"source_id": "mem-sess-1"}).json()["results"]] == [mine.pk]
    # A token of one session finds that session's row only: another scope's row of the same seed id is not there.
    minted = api_token_create(user=user, scope=TokenScope.SESSION, session_id=mine.pk)
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Token {minted.secret}")
    found = scoped.get("/api/v1/observations/", {"source_id": "obs-1"}).json()["results"]
    assert [o["session"] for o in found] == [mine.pk]
    assert scoped.get("/api/v1/sessions/", {"source_id": "mem-sess-1-b"}).json()["results"] == []


def test_source_id_finds_a_ralph_v2_session_by_its_guid(tmp_path: Path, api: APIClient) -> None:
    import_seed("ralph", _ralph_db(tmp_path / "ralph.db"))
    session = Session.objects.get(key="sess-auth")
    assert [s["id"] for s in api.get("/api/v1/sessions/", {"source_id": AUTH}).json()["results"]] == [session.pk]
    assert_error_shape(api.get("/api/v1/sessions/", {"source_id": " "}), 400, "validation_error")


def test_the_schema_shows_source_id_on_ulid_lists_and_token_usage_keeps_its_own_field() -> None:
    """Token usage (integer ids) has no seed-id filter: its `source_id` is its own field, the id of the attempt or
    invocation that reported the call."""
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    def parameter(path: str) -> dict[str, Any] | None:
        return next((p for p in paths[path]["get"]["parameters"] if p["name"] == "source_id"), None)

    for path in ("/api/v1/sessions/", "/api/v1/tasks/", "/api/v1/observations/", "/api/v1/chats/"):
        shown = parameter(path)
        assert shown is not None and "seed tool's file" in shown["description"], path
    assert parameter("/api/v1/token-usage/") is None
    assert parameter("/api/v1/events/") is None


def test_source_id_of_a_row_keyed_by_two_columns_joins_them(tmp_path: Path, api: APIClient) -> None:
    import_seed("ralphy", _ralphy_db(tmp_path / "ralphy.db"))
    found = api.get("/api/v1/tasks/", {"source_id": "run-20260101-a|auth-001"}).json()["results"]
    assert [(task["key"], task["session"]) for task in found] == [
        ("auth-001", Session.objects.get(key="run-20260101-a").pk)]
