"""import_seed memory: ralph-mem's memory.db and global.db, built from seed 004's DDL."""

import sqlite3
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from conversations_app.models import GlobalPattern, Observation
from conversations_app.services import pattern_record
from ralphsite.core.models import SeedRow
from sessions_app.models import LoopRun, Session
from tests.seed_io.helpers import import_seed, seed_database, summary_row

pytestmark = pytest.mark.django_db

EMBEDDING = bytes(range(256)) + b"\x00\xff"
OBSERVATIONS = [
    {"id": "obs-1", "session_id": "mem-sess-1", "type": "tool_use", "tool_name": "Read",
     "content": "Read the database connection settings", "content_compressed": "db conn",
     "embedding": EMBEDDING, "importance": 0.9, "created_at": "2026-01-05T10:00:00Z"},
    {"id": "obs-2", "session_id": "mem-sess-1", "type": "bash", "tool_name": "Bash",
     "content": "데이터베이스 연결 오류를 고쳤습니다 🎉", "content_compressed": None, "embedding": None,
     "importance": None, "created_at": "2026-01-05 10:01:02"},
    {"id": "01JH0000000000000000000000", "session_id": "mem-sess-2", "type": "error", "tool_name": None,
     "content": "pytest failed: 3 assertions", "content_compressed": None, "embedding": None,
     "importance": 0.0, "created_at": "2026-01-06T08:00:00.123+09:00"},
    {"id": "obs-4", "session_id": "mem-sess-2", "type": "success", "tool_name": "Edit",
     "content": "테스트 통과", "content_compressed": "", "embedding": b"", "importance": 1.0,
     "created_at": "2026-01-06T09:00:00"},
    {"id": "obs-orphan", "session_id": "no-such-session", "type": "bash", "tool_name": "Bash",
     "content": "left behind", "content_compressed": None, "embedding": None, "importance": 0.5,
     "created_at": "2026-01-06T09:00:00"},
]
LOOP_RUNS = [
    {"id": f"loop-{status}", "session_id": "mem-sess-1", "task": f"make it {status} ✅",
     "criteria": '["tests pass", "lint clean"]' if status != "stopped" else "[]", "status": status,
     "iterations": index, "max_iterations": 10 if index else None, "started_at": f"2026-01-05T1{index}:00:00Z",
     "ended_at": None if status == "running" else f"2026-01-05T1{index}:30:00Z",
     "snapshot_path": ".ralph-mem/snapshots/x" if index else None}
    for index, status in enumerate(["running", "success", "failed", "stopped"])
]


def _memory_db(path: Path, *, observations: list[dict] = OBSERVATIONS) -> Path:
    return seed_database(path, "memory", {
        "sessions": [
            {"id": "mem-sess-1", "project_path": "/home/dev/앱", "started_at": "2026-01-05T09:59:00Z",
             "ended_at": "2026-01-05T11:00:00Z", "summary": "Fixed the DB connection 🔧 연결",
             "summary_embedding": EMBEDDING, "token_count": 12345},
            {"id": "mem-sess-2", "project_path": "/srv/api", "started_at": "2026-01-06 07:00:00", "ended_at": None,
             "summary": None, "summary_embedding": None, "token_count": None},
        ],
        "observations": observations,
        "loop_runs": LOOP_RUNS,
    })


def test_it_imports_every_row_and_column_of_a_memory_db(tmp_path: Path) -> None:
    output = import_seed("memory", _memory_db(tmp_path / "memory.db"))
    assert summary_row(output, "sessions") == ["2", "2", "0", "0", "0", "0"]
    assert summary_row(output, "observations")[:4] == ["5", "4", "0", "0"]
    assert "1 its session is not in the file" in output

    first, second = Session.objects.get(key="mem-sess-1"), Session.objects.get(key="mem-sess-2")
    assert (first.project_path, first.summary, bytes(first.summary_embedding), first.token_count) == (
        "/home/dev/앱", "Fixed the DB connection 🔧 연결", EMBEDDING, 12345)
    assert first.started_at == datetime(2026, 1, 5, 9, 59, tzinfo=UTC)
    assert first.ended_at == datetime(2026, 1, 5, 11, 0, tzinfo=UTC)
    assert (first.status, second.status) == ("completed", "running")  # an ended session arrives ended
    assert (second.summary, second.summary_embedding, second.token_count, second.ended_at) == ("", None, 0, None)
    assert second.started_at == datetime(2026, 1, 6, 7, 0, tzinfo=UTC)
    # A session with an end time has ended (issue #27 §1): it is not an interrupted run to resume.
    assert (first.status, second.status) == ("completed", "running")

    by_key = {row.source_key: Observation.objects.get(pk=row.object_id)
              for row in SeedRow.objects.filter(kind="memory", source_table="observations")}
    assert set(by_key) == {"obs-1", "obs-2", "01JH0000000000000000000000", "obs-4"}
    one = by_key["obs-1"]
    assert (one.session_id, one.type, one.tool_name, one.content, one.content_compressed, bytes(one.embedding),
            one.importance) == (first.id, "tool_use", "Read", "Read the database connection settings", "db conn",
                                EMBEDDING, 0.9)
    assert one.created_at == datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    two = by_key["obs-2"]
    assert (two.content, two.content_compressed, two.embedding, two.importance, two.tool_name) == (
        "데이터베이스 연결 오류를 고쳤습니다 🎉", "", None, 0.5, "Bash")
    assert two.created_at == datetime(2026, 1, 5, 10, 1, 2, tzinfo=UTC)
    three = by_key["01JH0000000000000000000000"]
    assert three.pk == "01JH0000000000000000000000"  # a ULID id is kept as ours
    assert three.created_at == datetime(2026, 1, 5, 23, 0, 0, 123000, tzinfo=UTC)
    assert (three.type, three.importance) == ("error", 0.0)
    assert by_key["obs-4"].type == "success" and bytes(by_key["obs-4"].embedding) == b""

    runs = {run.status: run for run in LoopRun.objects.all()}
    assert set(runs) == {"running", "success", "failed", "stopped"}
    assert runs["success"].criteria == ["tests pass", "lint clean"] and runs["stopped"].criteria == []
    assert runs["running"].max_iterations == 10 and runs["running"].ended_at is None
    assert runs["failed"].task == "make it failed ✅" and runs["failed"].iterations == 2
    assert runs["failed"].ended_at == datetime(2026, 1, 5, 12, 30, tzinfo=UTC)


def test_search_finds_imported_observations_in_english_and_korean(tmp_path: Path, api: APIClient) -> None:
    import_seed("memory", _memory_db(tmp_path / "memory.db"))
    ids = {row.source_key: row.object_id for row in SeedRow.objects.filter(source_table="observations")}
    for query, expected in (("database", "obs-1"), ("연결", "obs-2"), ("테스트", "obs-4"), ("assertions",
                                                                                         "01JH0000000000000000000000")):
        response = api.get("/api/v1/search/", {"q": query, "kind": "observation"})
        assert response.status_code == 200, response.content
        assert [hit["id"] for hit in response.json()["results"]] == [ids[expected]], query


def test_a_second_import_creates_nothing_and_a_newer_file_adds_only_its_new_rows(tmp_path: Path) -> None:
    path = _memory_db(tmp_path / "memory.db")
    import_seed("memory", path)
    again = import_seed("memory", path)
    assert "nothing new" in again and summary_row(again, "observations")[:4] == ["5", "0", "0", "4"]
    assert Observation.objects.count() == 4 and Session.objects.count() == 2

    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO observations (id, session_id, type, content, created_at) "
                   "VALUES ('obs-5', 'mem-sess-2', 'bash', 'new row', '2026-01-07T00:00:00Z')")
    newer = import_seed("memory", path)
    assert summary_row(newer, "observations")[:4] == ["6", "1", "0", "4"] and "1 rows created" in newer
    assert Observation.objects.count() == 5


def test_a_session_another_tool_created_with_the_same_key_is_linked_not_duplicated(tmp_path: Path) -> None:
    existing = Session.objects.create(key="mem-sess-1")
    output = import_seed("memory", _memory_db(tmp_path / "memory.db"))
    assert summary_row(output, "sessions") == ["2", "1", "0", "1", "0", "0"]
    assert Session.objects.filter(key="mem-sess-1").get().pk == existing.pk
    assert Observation.objects.filter(session=existing).count() == 2


def test_a_session_of_the_same_key_in_another_project_is_neither_linked_nor_in_the_way(tmp_path: Path) -> None:
    """Session keys are unique per project (issue #28 §4): another project's `mem-sess-1` is not this file's."""
    other = Session.objects.create(key="mem-sess-1", project_path="/srv/another")
    output = import_seed("memory", _memory_db(tmp_path / "memory.db"))
    assert summary_row(output, "sessions")[:2] == ["2", "2"]
    imported = Session.objects.exclude(pk=other.pk).get(key="mem-sess-1")
    assert imported.project_path == "/home/dev/앱" and Observation.objects.filter(session=imported).count() == 2
    assert not Observation.objects.filter(session=other).exists()


def test_it_imports_a_global_db_and_links_patterns_already_recorded(tmp_path: Path) -> None:
    pattern_record(pattern_type="tool_usage", description="Run ruff before commit", project="/c")
    path = seed_database(tmp_path / "global.db", "memory", {"global_patterns": [
        {"id": "pat-1", "pattern_type": "error_fix", "description": "ImportError → 가상환경 확인",
         "embedding": EMBEDDING, "source_projects": '["/a", "/b"]', "frequency": 7,
         "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-02T00:00:00Z"},
        {"id": "pat-2", "pattern_type": "best_practice", "description": "Small commits", "embedding": None,
         "source_projects": None, "frequency": None, "created_at": "2026-01-01", "updated_at": "2026-01-01"},
        {"id": "pat-3", "pattern_type": "tool_usage", "description": "Run ruff before commit", "embedding": None,
         "source_projects": "not json", "frequency": 2, "created_at": "2026-01-01", "updated_at": "2026-01-01"},
    ]})
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE observations_fts")
        db.execute("DROP TABLE observations")
        db.execute("DROP TABLE loop_runs")
        db.execute("DROP TABLE sessions")
    output = import_seed("memory", path)
    assert summary_row(output, "global_patterns") == ["3", "2", "0", "1", "0", "0"]
    fix = GlobalPattern.objects.get(pattern_type="error_fix")
    assert (fix.description, bytes(fix.embedding), fix.source_projects, fix.frequency) == (
        "ImportError → 가상환경 확인", EMBEDDING, ["/a", "/b"], 7)
    assert fix.updated_at == datetime(2026, 1, 2, tzinfo=UTC)
    practice = GlobalPattern.objects.get(pattern_type="best_practice")
    assert (practice.source_projects, practice.frequency) == ([], 1)


@pytest.mark.parametrize(("setup", "message"), [
    ("text", "is not a SQLite database, so not a memory database"),
    ("other", "is not a ralph-mem database: no tables sessions and observations"),
    ("column", "table observations has no column importance"),
    ("missing", "no such file"),
])
def test_it_refuses_a_file_that_is_not_a_memory_db_and_writes_nothing(tmp_path: Path, setup: str,
                                                                       message: str) -> None:
    path = tmp_path / "memory.db"
    if setup == "text":
        path.write_text("SQLite? no.")
    elif setup == "other":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE sessions (id TEXT)")
    elif setup == "column":
        _memory_db(path)
        with sqlite3.connect(path) as db:
            db.execute("DROP TRIGGER obs_ai")
            db.execute("ALTER TABLE observations DROP COLUMN importance")
    with pytest.raises(CommandError, match=message):
        import_seed("memory", path)
    assert not SeedRow.objects.exists() and not Session.objects.exists()


def test_it_refuses_a_corrupt_file(tmp_path: Path) -> None:
    path = _memory_db(tmp_path / "memory.db")
    data = bytearray(path.read_bytes())
    data[4096: 4 * 4096] = b"\xff" * 3 * 4096  # the tables' first pages; the schema (page 1) still reads
    path.write_bytes(bytes(data))
    with pytest.raises(CommandError, match=r"memory.db is (corrupt|not a readable SQLite database): .*malformed"):
        import_seed("memory", path)
    assert not Session.objects.exists()


def test_an_export_is_a_memory_db_ralph_mem_searches(tmp_path: Path) -> None:
    import_seed("memory", _memory_db(tmp_path / "memory.db"))
    exported = tmp_path / "exported.db"
    call_command("export_seed", "memory", str(exported), stdout=StringIO())
    with sqlite3.connect(exported) as db:
        found = db.execute("SELECT o.id FROM observations_fts JOIN observations o ON o.rowid = observations_fts.rowid "
                           "WHERE observations_fts MATCH ?", ["연결"]).fetchall()
    assert found == [("obs-2",)]
