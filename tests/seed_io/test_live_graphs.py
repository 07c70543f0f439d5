"""Imported DevTeam graphs are live (issue #29): `depends_on`, `blocks` and `parent_task_id` become the edges and
parent the API makes (task detail, waves), under the API's rules (an edge to another session or one that closes a
cycle is left out and reported), and a newer copy's changes to them move the edges. Enum spellings arrive
canonical through the API's aliases."""

import sqlite3
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from sessions_app.models import Task, TaskDependency
from tests.seed_io.helpers import file_rows, import_seed
from tests.seed_io.test_devteam import _devteam_db

pytestmark = pytest.mark.django_db

A = "/api/v1/sessions/sess-20250201-a"


def _file(path: Path, *updates: str) -> Path:
    """The DevTeam test file with `updates` (SQL) applied."""
    _devteam_db(path)
    with sqlite3.connect(path) as db:
        for update in updates:
            db.execute(update)
    return path


def _edges() -> set[tuple[str, str]]:
    return set(TaskDependency.objects.values_list("task__key", "depends_on__key"))


def test_depends_on_becomes_the_edges_the_api_shows_and_waves_follow(tmp_path: Path, api: APIClient) -> None:
    output = import_seed("devteam", _file(tmp_path / "devteam.db"))
    task = api.get(f"{A}/tasks/TASK-002/")
    assert task.status_code == 200, task.content
    assert task.json()["depends_on"] == ["TASK-001"]
    waves = api.get(f"{A}/waves/").json()
    assert [wave["tasks"] for wave in waves] == [["TASK-001"], ["TASK-002"]]
    # TASK-005 is session B's; TASK-003 and TASK-006 have none: their edges to session A's TASK-001 are left out
    for key in ("TASK-003", "TASK-005", "TASK-006"):
        assert f"{key}: task TASK-001 it names is in another session" in output, output
    assert _edges() == {("TASK-002", "TASK-001")}


def test_blocks_and_parent_task_id_are_edges_and_a_parent(tmp_path: Path, api: APIClient) -> None:
    path = _file(tmp_path / "devteam.db",
                 "UPDATE tasks SET depends_on = NULL, session_id = 'sess-20250201-a'",
                 "UPDATE tasks SET blocks = '[\"TASK-003\"]' WHERE id = 'TASK-002'",
                 "UPDATE tasks SET parent_task_id = 'TASK-001' WHERE id = 'TASK-004'")
    import_seed("devteam", path)
    assert _edges() == {("TASK-003", "TASK-002")}
    assert Task.objects.get(key="TASK-004").parent == Task.objects.get(key="TASK-001")
    assert api.get(f"{A}/tasks/TASK-003/").json()["depends_on"] == ["TASK-002"]


def test_a_cycle_in_the_file_is_refused_as_the_api_refuses_it_and_reported(tmp_path: Path) -> None:
    path = _file(tmp_path / "devteam.db", "UPDATE tasks SET depends_on = '[\"TASK-002\"]' WHERE id = 'TASK-001'")
    output = import_seed("devteam", path)
    assert "dependencies and parent not set: These dependencies would make a cycle through" in output, output
    assert len(_edges() & {("TASK-001", "TASK-002"), ("TASK-002", "TASK-001")}) == 1


def test_a_newer_copys_dependencies_move_the_edges(tmp_path: Path) -> None:
    path = _file(tmp_path / "devteam.db", "UPDATE tasks SET session_id = 'sess-20250202-b'")
    import_seed("devteam", path)
    assert ("TASK-003", "TASK-001") in _edges()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE tasks SET depends_on = '[\"TASK-002\"]' WHERE id = 'TASK-003'")
    import_seed("devteam", path)
    assert {edge for edge in _edges() if edge[0] == "TASK-003"} == {("TASK-003", "TASK-002")}


def test_enum_spellings_arrive_canonical_and_one_no_alias_maps_is_reported_not_stored(tmp_path: Path) -> None:
    path = _file(tmp_path / "devteam.db", "UPDATE tasks SET status = 'In-Progress' WHERE id = 'TASK-002'",
                 "UPDATE tasks SET priority = 'urgent' WHERE id = 'TASK-003'")
    output = import_seed("devteam", path)
    assert Task.objects.get(key="TASK-002").status == "in_progress"
    assert Task.objects.get(key="TASK-003").priority == "medium"  # the field's default, never 'urgent'
    assert "tasks: 1 value(s) set aside" in output
    assert "priority: 'urgent' is not a valid choice; allowed: critical, high, medium, low." in output  # REST's
    exported = tmp_path / "exported.db"
    call_command("export_seed", "devteam", str(exported), stdout=StringIO())
    assert {row["id"]: (row["status"], row["priority"]) for row in file_rows(exported, "tasks")
            if row["id"] in ("TASK-002", "TASK-003")} == {"TASK-002": ("In-Progress", "high"),
                                                          "TASK-003": ("failed", "urgent")}
