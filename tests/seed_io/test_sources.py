"""Each file is a source of its own (issue #29 §1, §3): a second project's database, numbered from 1 like
the first, lands whole beside it; a value no field can hold skips its row, listed, and the rest lands;
a file is imported as one unit. For each of the five kinds."""

import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from django.core.management import CommandError

from ralphsite.core.models import SeedRow
from ralphsite.moving.seed_io import importer_class
from ralphsite.moving.seed_io.base import MappedTable, moment
from ralphsite.moving.seed_io.ralphy import epoch
from tests.seed_io.helpers import import_seed, summary_row
from tests.seed_io.test_export import BUILDERS

pytestmark = pytest.mark.django_db

ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _text_cells(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """(table, column) of every text column of the file's own tables."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                       "'sqlite_%' AND sql NOT LIKE '%VIRTUAL%' AND name NOT LIKE '%_fts%'")]
    return [(table, column[1]) for table in tables for column in db.execute(f'PRAGMA table_info("{table}")')]


def _session_keys(kind: str, db: sqlite3.Connection) -> set[str]:
    """The values the kind's sessions are known by (their keys are unique across projects)."""
    table = importer_class(kind).tables[0]
    assert isinstance(table, MappedTable)
    column = getattr(table, "key_column", table.key_columns[0])
    return {str(r[0]) for r in db.execute(f'SELECT "{column}" FROM "{table.table}"') if r[0] is not None}


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
HEX = "0123456789abcdef"


def _next(alphabet: str, char: str) -> str:
    return alphabet[(alphabet.index(char.upper() if alphabet is CROCKFORD else char.lower()) + 1) % len(alphabet)]


def _renamed(value: str) -> str:
    """Another project's id for `value`, one to one (distinct ids stay distinct)."""
    if ULID.match(value):  # the first random character, rotated
        return value[:10] + _next(CROCKFORD, value[10]) + value[11:]
    if GUID.match(value):
        return value[:-1] + _next(HEX, value[-1])
    return value + "-b"


def _second_project(kind: str, first: Path, path: Path) -> Path:
    """Another project's file: the same rows numbered alike, its sessions and ULIDs its own."""
    shutil.copy(first, path)
    with sqlite3.connect(path) as db:
        cells = _text_cells(db)
        identities = _session_keys(kind, db)
        for table, column in cells:
            identities |= {v for (v,) in db.execute(f'SELECT "{column}" FROM "{table}"')
                           if isinstance(v, str) and (ULID.match(v) or GUID.match(v))}
        for old in sorted(identities, key=len, reverse=True):
            for table, column in cells:
                db.execute(f'UPDATE "{table}" SET "{column}" = replace("{column}", ?, ?) '
                           f'WHERE typeof("{column}") = \'text\' AND instr("{column}", ?) > 0',
                           (old, _renamed(old), old))
    return path


def _created(output: str, kind: str) -> dict[str, str]:
    return {table.table: summary_row(output, table.table)[1] for table in importer_class(kind).tables
            if f"\n{table.table} " in output}


# Tables whose rows belong to no session and are keyed without one in our models (a plan's criteria, a
# repository's baselines, cross-session patterns, DevTeam's plans, which name no session): another project's
# row with the same key is that row, linked, not created again.
SHARED_BY_KEY = {"devteam": {"acceptance_criteria", "features", "baselines", "plans"},
                 "memory": {"global_patterns"}}
# Tables keyed within their session (issue #28 §4): another project's rows are its own, but for those of no
# session, which are shared by key as above.
KEYED_PER_SESSION = {"devteam": {"checkpoints"}}


@pytest.mark.parametrize("kind", BUILDERS)
def test_it_imports_a_second_project_numbered_alike_whole_beside_the_first(tmp_path: Path, kind: str) -> None:
    first = BUILDERS[kind](tmp_path / "first.db")
    second = _second_project(kind, first, tmp_path / "second.db")
    created_first = _created(import_seed(kind, first), kind)
    created_second = _created(import_seed(kind, second), kind)
    shared, per_session = SHARED_BY_KEY.get(kind, set()), KEYED_PER_SESSION.get(kind, set())
    assert {table: n for table, n in created_second.items() if table not in shared | per_session} == \
        {table: n for table, n in created_first.items() if table not in shared | per_session}
    assert all(created_second[table] == "0" for table in shared if table in created_second)
    for table in importer_class(kind).tables:
        if table.table in per_session:
            sessionless = table.model._default_manager.filter(session=None).count()
            assert 0 < int(created_second[table.table]) == int(created_first[table.table]) - sessionless
    assert SeedRow.objects.filter(source=str(first.resolve())).count() == \
        SeedRow.objects.filter(source=str(second.resolve())).count()  # every row of both is remembered
    again = import_seed(kind, second)
    assert "nothing new" in again, again


@pytest.mark.parametrize("kind", BUILDERS)
def test_a_second_import_under_its_source_name_finds_its_rows_wherever_the_file_is(tmp_path: Path, kind: str) -> None:
    first = BUILDERS[kind](tmp_path / "first.db")
    import_seed(kind, first, "--source", "project-a")
    moved = shutil.copy(first, tmp_path / "moved.db")
    output = import_seed(kind, Path(moved), "--source", "project-a")
    assert "nothing new" in output and "source: project-a" in output


def _dated_child_table(kind: str, path: Path) -> tuple[MappedTable, str, str]:
    """The first table after the sessions whose rows carry a date (table, its date column, a row's key)."""
    with sqlite3.connect(path) as db:
        for table in importer_class(kind).tables[1:]:
            if not isinstance(table, MappedTable):
                continue
            dated = [column for column, (_name, convert) in table.columns.items() if convert in (moment, epoch)]
            for column in dated:
                found = db.execute(f'SELECT {", ".join(table.key_columns)} FROM "{table.table}" '
                                   f'WHERE "{column}" IS NOT NULL LIMIT 1').fetchone()
                if found:
                    return table, column, "|".join(str(part) for part in found)
    raise AssertionError(f"no dated rows in {kind}'s file")


@pytest.mark.parametrize("kind", BUILDERS)
def test_a_bad_value_skips_its_row_listed_and_the_rest_lands(tmp_path: Path, kind: str) -> None:
    path = BUILDERS[kind](tmp_path / "bad.db")
    table, column, key = _dated_child_table(kind, path)
    with sqlite3.connect(path) as db:
        where = " AND ".join(f'"{c}" = ?' for c in table.key_columns)
        db.execute(f'UPDATE "{table.table}" SET "{column}" = \'not a date\' WHERE {where}', key.split("|"))
    report = tmp_path / "skipped.tsv"
    output = import_seed(kind, path, "--report", str(report))
    read, created, _updated, _unchanged, _gone, *reasons = summary_row(output, table.table)
    skipped = " ".join(reasons)
    assert f"1 bad value in {column}: " in skipped
    assert int(created) == int(read) - sum(int(n) for n in re.findall(r"(?:^|; )(\d+) ", skipped))
    assert f"{table.table} {key}: {column} = 'not a date': bad value in {column}" in output
    lines = report.read_text().splitlines()
    assert lines[0] == "table\tkey\tcolumn\tvalue\treason"
    assert any(line.startswith(f"{table.table}\t{key}\t{column}\t'not a date'\tbad value in {column}")
               for line in lines)
    for other in importer_class(kind).tables:  # the rest landed: no other row was skipped for a value
        if other.table != table.table and f"\n{other.table} " in output:
            assert "bad value" not in " ".join(summary_row(output, other.table)[5:])


@pytest.mark.parametrize("kind", BUILDERS)
def test_a_file_lands_whole_or_not_at_all(tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupted after its last table was written (Ctrl-C), nothing of the file stays; the next run
    imports it all."""
    path = BUILDERS[kind](tmp_path / "file.db")
    importer = importer_class(kind)
    last = importer.tables[-1].table
    table_import = importer._table

    def interrupted_after_the_last(self: object, db: object, table: MappedTable, *args: object) -> object:
        result = table_import(self, db, table, *args)
        if table.table == last:
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(importer, "_table", interrupted_after_the_last)
    with pytest.raises(KeyboardInterrupt):
        import_seed(kind, path)
    assert not SeedRow.objects.exists()
    monkeypatch.undo()
    assert "rows created" in import_seed(kind, path)


def test_a_file_it_cannot_read_is_one_line_and_nothing_lands(tmp_path: Path) -> None:
    path = BUILDERS["devteam"](tmp_path / "file.db")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(CommandError) as refused:
        import_seed("devteam", path)
    assert "\n" not in str(refused.value)
    assert not SeedRow.objects.exists()


def test_a_file_another_program_holds_locked_is_one_line_and_nothing_lands(tmp_path: Path) -> None:
    path = BUILDERS["devteam"](tmp_path / "file.db")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # the tool in the middle of a write
    try:
        with pytest.raises(CommandError, match=r"is locked by another program: stop the tool, or import a copy"):
            import_seed("devteam", path)
    finally:
        holder.close()
    assert not SeedRow.objects.exists()


KINDS = list(BUILDERS)


def _refused_file(kind: str, case: str, path: Path) -> sqlite3.Connection | None:
    """A file `import_seed KIND` must refuse, made as `case` says; the connection holding it locked, if any."""
    if case == "another kind":  # the next kind's file, whole
        BUILDERS[KINDS[(KINDS.index(kind) + 1) % len(KINDS)]](path)
    elif case == "not sqlite":
        path.write_text("id,title\n1,not a database 🙃\n", encoding="utf-8")
    else:
        BUILDERS[kind](path)
        if case == "truncated":
            path.write_bytes(path.read_bytes()[:4096 * 2])  # the schema's page and one more
        elif case == "locked":
            holder = sqlite3.connect(path, isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")
            return holder
    return None


@pytest.mark.parametrize("case", ["another kind", "not sqlite", "truncated", "locked"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_file_it_must_refuse_is_one_line_for_every_kind(tmp_path: Path, kind: str, case: str) -> None:
    """Not the declared kind, not SQLite, truncated or locked: a CommandError of one line (`manage.py` prints it
    and exits with status 1, no traceback), and nothing written."""
    holder = _refused_file(kind, case, tmp_path / "file.db")
    try:
        with pytest.raises(CommandError) as refused:
            import_seed(kind, tmp_path / "file.db")
    finally:
        if holder is not None:
            holder.close()
    message = str(refused.value)
    assert "\n" not in message and "file.db" in message, message
    assert not SeedRow.objects.exists()


# The values issue #29 §3 found stopping an import with a traceback (after earlier tables had committed).
FOUND_BAD_VALUES = [
    ("conversations", "messages", "created_at", "not a date"),
    ("conversations", "chats", "version", "v2"),
    ("conversations", "runs", "tokens_used", "abc"),
    ("devteam", "agent_runs", "tokens_input", "abc"),
    ("devteam", "token_usage", "cost_usd", "n/a"),
    ("devteam", "sessions", "started_at", "yesterday"),
    ("memory", "observations", "importance", "high"),
]


@pytest.mark.parametrize(("kind", "table", "column", "value"), FOUND_BAD_VALUES,
                         ids=[f"{table}.{column}" for _kind, table, column, _value in FOUND_BAD_VALUES])
def test_each_value_the_issue_found_skips_its_row_listed_and_the_rest_lands(
        tmp_path: Path, kind: str, table: str, column: str, value: str) -> None:
    path = BUILDERS[kind](tmp_path / "bad.db")
    with sqlite3.connect(path) as db:
        db.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = (SELECT min(rowid) FROM "{table}")', (value,))
    output = import_seed(kind, path)
    read, created, *_rest = summary_row(output, table)
    assert int(created) == int(read) - 1, output
    assert re.search(rf"^  {table} \S+: {column} = {re.escape(repr(value))}: ", output, re.MULTILINE), output
    assert "rows created" in output
