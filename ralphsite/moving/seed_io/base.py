"""The importer framework: a seed tool's SQLite file, table by table, into our models.

An importer (one module per KIND) lists `TableImport`s in dependency order. Each says which seed
table feeds which model, how a row's key reads (`key_columns`), which columns it maps to fields
(`fields`, with converters from here: dates, cents, JSON, enums), and which it needs. Whatever column
a table has beyond those, and any value no field can hold as it was (a NULL where we keep '', a 0
where we start at 1), lands in the row's `SeedRow.extra`: nothing the tool stored is dropped.

Every imported row gets a `SeedRow` (source, kind, table, key → object, and the row's digest), which
makes an import idempotent and lets rows refer to each other by the seed's keys (`ImportContext.resolve`).
Importing the same source again is the update path (`refresh`): a row whose digest changed is updated
through the model's update service, the one the API calls; rows gone from the file are reported (or
deleted, when asked).

New rows are `bulk_create`s a chunk at a time, the whole file one transaction (its good rows all land
or none do). The create services are per-row (a ledger event, `now` timestamps each), which would be
slow for a history of a million rows and would rewrite its times; the import keeps the tool's own
timestamps. Ledger events still go through the ledger's manager, which puts them on the hash chain.

Before anything is written the whole file is checked (a SQLite database, readable, the tables and
key columns the importer needs): a refusal is one line naming the problem, with nothing written.
"""

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from django.apps import apps
from django.db import connections, models, router, transaction
from django.utils import timezone

from ralphsite.core.addressing import as_ulid, key_in_paths_of, key_shaped_like_id
from ralphsite.core.fields import ULIDField
from ralphsite.core.models import LEGACY_SOURCE, SeedRow
from ralphsite.moving.seed_io.fitting import (
    choices_fit,
    costs_fit,
    costs_rounded,
    jsonable,
    numbers_fit,
    required_missing,
    shapes_fit,
    texts_fit,
)
from ralphsite.moving.seed_io.refresh import (
    Known,
    field_changes,
    known_rows,
    missing_keys,
    object_delete,
    object_update,
    objects_by_id,
    row_digest,
    seed_row_extras,
    seed_rows_refresh,
)
from sessions_app.models import Session

CHUNK_ROWS = 500
KEY_SEPARATOR = "|"
AUTO_TIMESTAMPS = ("created_at", "updated_at")
EXTRA = "_extra"  # a key `fields` may return: seed values no field can hold as they were (kept on the SeedRow)
# A key `fields` may return: the fields a NULL filled with a default made at the time (now), which a newer copy's
# NULL does not change (it would differ from ours on every import).
FILLED_NOW = "_filled_now"

Row = dict[str, Any]


class SeedImportError(Exception):
    """The file cannot be imported, in one line; nothing was written."""


# -- converters: a seed column's value → our field's value ------------------------------------------

def text(value: Any) -> str:
    """A nullable TEXT column → our non-null CharField/TextField ('' for NULL)."""
    return "" if value is None else str(value)


def moment(value: Any) -> datetime | None:
    """Epoch seconds or milliseconds, or a text date (SQLite's `YYYY-MM-DD HH:MM:SS`, ISO 8601 with
    `T`, `Z` or an offset) → an aware datetime; a date without a zone is UTC, as SQLite writes it."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
        number = float(value)
        return datetime.fromtimestamp(number / 1000 if abs(number) >= 1e11 else number, tz=UTC)
    parsed = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def cents(value: Any) -> Decimal:
    """Integer cents → Decimal USD."""
    return Decimal(0) if value is None else Decimal(int(value)) / 100


def usd(value: Any) -> Decimal:
    """REAL dollars → Decimal USD (through its shortest decimal text, not its binary expansion)."""
    return Decimal(0) if value is None else Decimal(repr(float(value)))


def json_value(value: Any, default: Any = None) -> Any:
    """A JSON column: the parsed value, or the text itself when it is not JSON (kept, not dropped)."""
    if value is None:
        return default
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="surrogateescape")
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return value


json_value.is_json = True  # type: ignore[attr-defined]


def flag(value: Any) -> bool:
    return bool(value) and str(value).lower() not in ("0", "false", "f", "no")


def count(value: Any, default: int = 0) -> int:
    return default if value is None else int(value)


def count_or_null(value: Any) -> int | None:
    """A count whose NULL is kept (our field is nullable where the seed's NULL means "not reported")."""
    return None if value is None else count(value)


def json_or(default: Callable[[], Any]) -> Callable[[Any], Any]:
    """A JSON column whose NULL becomes `default()` (our field is not nullable)."""

    def convert(value: Any) -> Any:
        return json_value(value, default=default())

    convert.is_json = True  # type: ignore[attr-defined] - read by MappedTable and export_seed
    return convert


def number(value: Any) -> int | float | None:
    """A nullable numeric column kept nullable."""
    return value


class EnumMap:
    """A seed enum value → ours (`mapping`; values it does not name are kept as they are), and back."""

    def __init__(self, mapping: dict[str, str], default: str) -> None:
        self.mapping, self.default = mapping, default
        self.reverse = {ours: theirs for theirs, ours in mapping.items()}

    def __call__(self, value: Any) -> str:
        return self.default if value is None else self.mapping.get(str(value), str(value))

    def inverse(self, value: str) -> Any:
        """Ours → the seed's (export_seed)."""
        return self.reverse.get(value, value)


class IntEnumMap(EnumMap):
    """An integer enum (Ralph V2's C# enums, stored by EF Core as their ordinal): `names` in declaration
    order, each mapped to our value through the enum aliases (`ExecutingBatch` → `executing_batch`). An
    integer the seed does not declare becomes `default` (ours must be one of our choices: statistics and
    progress count by them); the integer is kept on the SeedRow."""

    def __init__(self, names: list[str], choices: type[models.Choices], default: str,
                 exported_as: dict[str, str] | None = None) -> None:
        """`exported_as`: a value of ours the seed lacks → the seed's name it is exported as."""
        from ralphsite.core.choices import choice_canonical

        mapping = {}
        for number, name in enumerate(names):
            ours = choice_canonical(choices.values, name)
            if ours is None:
                raise ValueError(f"{choices.__name__} has no value for the seed's {name}")
            mapping[str(number)] = ours
        super().__init__(mapping, default)
        for ours, theirs in (exported_as or {}).items():
            self.reverse[ours] = str(names.index(theirs))

    def __call__(self, value: Any) -> str:
        return self.default if value is None else self.mapping.get(str(value), self.default)

    def inverse(self, value: str) -> int | None:
        theirs = self.reverse.get(value)
        return None if theirs is None else int(theirs)


def enum(mapping: dict[str, str], *, default: str = "") -> EnumMap:
    return EnumMap(mapping, default)


def blob(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


# -- tables ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SkippedRow:
    """A row left out, and why: for the summary and the report file."""

    table: str
    key: str
    reason: str
    column: str = ""
    value: str = ""


@dataclass
class TableResult:
    table: str
    read: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0  # imported before and the same in the file, or linked to an object already ours
    skipped_rows: list[SkippedRow] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # keys of rows imported before the file no longer has, kept
    deleted: int = 0  # such rows deleted (`--delete-missing`)
    # Values imported as their field's default because they fit neither its shape nor its choices
    # (the original is kept on the SeedRow, so an export writes it back).
    set_aside: dict[str, int] = field(default_factory=dict)
    rounded: dict[str, int] = field(default_factory=dict)  # seed column → costs rounded to our places (float noise)
    known: int = 0  # rows of the file imported before (the rest of the source's rows are missing from it)
    touched: list[str] = field(default_factory=list)  # keys created or brought up to date (`tracks_touched`)

    @property
    def skipped(self) -> dict[str, int]:
        """How many rows were skipped for each reason."""
        return dict(Counter(row.reason for row in self.skipped_rows))

    def skip(self, reason: str, *, key: str = "", column: str = "", value: Any = None) -> None:
        shown = "" if value is None else repr(value)[:200]
        self.skipped_rows.append(SkippedRow(self.table, key, reason, column, shown))

    def set_aside_one(self, reason: str) -> None:
        self.set_aside[reason] = self.set_aside.get(reason, 0) + 1


class BadValue(ValueError):
    """A seed column's value our field cannot hold (a date that is no date, a count that is no number)."""

    def __init__(self, column: str, value: Any, reason: str) -> None:
        super().__init__(reason)
        self.column, self.value, self.reason = column, value, reason


# What a converter raises on a value it cannot read.
CONVERSION_ERRORS = (ValueError, TypeError, ArithmeticError, OverflowError)


def converted(column: str, convert: Callable[[Any], Any], value: Any) -> Any:
    """`convert(value)`, or BadValue naming the column when the value cannot be read."""
    try:
        return convert(value)
    except BadValue:
        raise
    except CONVERSION_ERRORS as error:
        raise BadValue(column, value, f"bad value in {column}: {error}") from None


class TableImport:
    """One seed table → one model. Subclasses set the class attributes and `fields`."""

    table: ClassVar[str]
    model: ClassVar[type[models.Model]]
    key_columns: ClassVar[tuple[str, ...]] = ("id",)
    mapped: ClassVar[frozenset[str]] = frozenset()  # columns `fields` reads (besides the key)
    required: ClassVar[bool] = True  # a file without this table is refused
    order_by: ClassVar[str] = "rowid"
    # Other spellings of a column (ours → theirs) that files built from another part of the seed use.
    aliases: ClassVar[dict[str, tuple[str, ...]]] = {}
    # The ledger's rows are never changed nor deleted: a row changed in (or gone from) the file is reported.
    append_only: ClassVar[bool] = False
    # Whether `after_table` reads the keys of the rows this import created or brought up to date.
    tracks_touched: ClassVar[bool] = False

    def key(self, row: Row) -> str:
        return KEY_SEPARATOR.join(text(row[column]) for column in self.key_columns)

    def fields(self, row: Row, context: "ImportContext") -> dict[str, Any] | str:
        """The new object's field values, or a reason (str) to skip the row."""
        raise NotImplementedError

    def build(self, values: dict[str, Any]) -> models.Model:
        """The new object of a row's field values."""
        return self.model(**values)

    def after_insert(self, objects: list[models.Model]) -> None:
        """After a chunk's objects were inserted, in its transaction: keep what we derive from them
        (tag rows, counters) right. Nothing by default."""

    def changes(self, obj: models.Model, values: dict[str, Any]) -> dict[str, Any]:
        """What updating `obj` to a newer copy's `values` sets: the model's update service's `data`."""
        return field_changes(obj, values)

    def after_table(self, context: "ImportContext", result: TableResult) -> None:
        """After all of the table's rows, in the file's transaction: what needs every row in (a graph's edges).
        Nothing by default."""

    def existing(self, row: Row, values: dict[str, Any], context: "ImportContext") -> models.Model | str | None:
        """An object of ours that already is this row (e.g. a session another tool created with the
        same key): linked instead of duplicated; a reason (str) to skip the row when linking would join
        another source's object. None by default."""
        return None


@dataclass
class ImportContext:
    kind: str
    source: str
    _keys: dict[str, dict[str, str]] = field(default_factory=dict)
    _sessions: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # What a newer copy's changed rows kept on their SeedRow before (table → key → extra): what the previous
    # copy said of the columns we have no field for (a DevTeam task's scope_files), which a later table undoes.
    replaced: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def resolve(self, table: str, key: Any) -> str | None:
        """Our object id for the row of seed table `table` whose key is `key` (None: not imported)."""
        if key is None:
            return None
        if table not in self._keys:
            self._keys[table] = dict(self.seed_rows(table).values_list("source_key", "object_id"))
        return self._keys[table].get(str(key))

    def seed_rows(self, table: str) -> models.QuerySet[SeedRow]:
        """This source's imported rows of seed table `table`."""
        return SeedRow.objects.filter(source=self.source, kind=self.kind, source_table=table)

    def remember(self, table: str, keys: dict[str, str]) -> None:
        if table in self._keys:
            self._keys[table].update(keys)
        self._sessions.pop(table, None)

    def session_of(self, table: str, object_id: str) -> str | None:
        """The session of our object `object_id` imported from seed table `table` (one query per table)."""
        if table not in self._sessions:
            imported = self.seed_rows(table)
            label = imported.values_list("object_model", flat=True).first()
            model = apps.get_model(label) if label else None
            self._sessions[table] = {} if model is None else {
                str(pk): session for pk, session in
                model._default_manager.filter(pk__in=imported.values("object_id")).values_list("pk", "session_id")}
        return self._sessions[table].get(object_id)


def same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Parent:
    """A seed column naming a row of another seed table (already imported: tables go in dependency
    order), which becomes our foreign key `field`. A row whose parent is not in the file is skipped
    when `required` (a NULL in a nullable column is no parent, not a skip), else imported without it
    (the column's value kept on the SeedRow). `session`: the row's session is its parent's (our model
    keeps it on the row, the seed's does not)."""

    table: str
    field: str
    noun: str  # in the skip reason: "its {noun} is not in the file"
    required: bool = True
    session: bool = False


Converter = Callable[[Any], Any]


class MappedTable(TableImport):
    """A table whose columns map one to one onto fields (`columns`: seed column → (field, converter)).

    `sessions` names the seed column holding the row's session key (resolved through the importer's
    sessions table, `session_table`): a row whose session is not in the file is skipped when
    `session_required`, else imported without one (its session key kept on the SeedRow). A NULL that
    a converter turns into a value ('' or 0) is noted on the SeedRow too, so an export writes NULL back.
    `parents` names the columns that hold another seed table's key (`Parent`): our foreign keys, and
    the seed's keys again on export.
    `created` names the column that dates the row (our created_at/updated_at)."""

    columns: ClassVar[dict[str, tuple[str, Converter]]] = {}
    parents: ClassVar[dict[str, Parent]] = {}
    sessions: ClassVar[str | None] = "session_id"
    session_table: ClassVar[str] = "sessions"
    session_required: ClassVar[bool] = True
    created: ClassVar[str | None] = None
    reads: ClassVar[frozenset[str]] = frozenset()  # further columns a subclass's `fields` reads
    export_needs_session: ClassVar[bool] = False  # export_seed --session: leave this sessionless table out

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.mapped = (frozenset(cls.columns) | frozenset(cls.parents) | cls.reads
                      | ({cls.sessions} if cls.sessions else set()))

    def fields(self, row: Row, context: "ImportContext") -> dict[str, Any] | str:
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for column, (name, convert) in self.columns.items():
            values[name] = converted(column, convert, row[column])
            if values[name] is None:  # a NULL where ours has none: the field's default (DevTeam's DEFAULTs, now)
                model_field = self.model._meta.get_field(name)
                if not model_field.null and model_field.has_default():
                    values[name] = model_field.get_default()
                    if callable(model_field.default):
                        values.setdefault(FILLED_NOW, set()).add(name)
            if row[column] is None and (values[name] is not None or name in AUTO_TIMESTAMPS):
                extra[column] = None  # we store a value (or, for our timestamps, now) where the tool had NULL
            elif getattr(convert, "is_json", False) and isinstance(row[column], str) and values[name] == row[column]:
                extra[column] = row[column]  # not JSON: kept as the tool wrote it
            elif hasattr(convert, "inverse") and row[column] is not None \
                    and str(convert.inverse(values[name])) != str(row[column]):
                extra[column] = row[column]  # ours has no room for it (an undeclared enum value, a 0 we count from 1)
        for column, parent in self.parents.items():
            parent_id = context.resolve(parent.table, row[column])
            if parent_id is None and (row[column] is not None or parent.required):
                if parent.required:
                    return f"its {parent.noun} is not in the file"
                extra[column] = row[column]
            values[parent.field] = parent_id
            if parent.session:
                values["session_id"] = parent_id and context.session_of(parent.table, parent_id)
        if self.sessions:
            session_id = context.resolve(self.session_table, row[self.sessions])
            if session_id is None and row[self.sessions] is not None:
                if self.session_required:
                    return "its session is not in the file"
                extra[self.sessions] = row[self.sessions]
            elif session_id is None and self.session_required:
                return "no session"
            values["session_id"] = session_id
        when = converted(self.created, moment, row[self.created]) if self.created else None
        if when is not None and _has_field(self.model, "created_at"):
            values.setdefault("created_at", when)
            values.setdefault("updated_at", when)
        if isinstance(self.model._meta.pk, ULIDField):
            values["id"] = ulid_for(context, self.table, self.key(row), when)
        if extra:
            values[EXTRA] = extra
        return values

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        """Columns neither `columns` nor `parents` write back (keys, `reads`), for export_seed. None by default."""
        return {}

    def exported(self, obj: models.Model, imported: bool, exporter: Any) -> bool:
        """Whether export_seed writes `obj` as a row of this table (`imported`: it came from one). Yes by default."""
        return True


class SessionTable(MappedTable):
    """A tool's sessions table: its `key_column` is our Session.key (the name agents know it by; our id is a
    ULID), and a session already ours under that key in the same project (another tool's, or one agents
    made) is linked."""

    model, sessions = Session, None
    key_column: ClassVar[str] = "id"

    def fields(self, row: Row, context: "ImportContext") -> dict[str, Any] | str:
        values = super().fields(row, context)
        assert isinstance(values, dict)  # a session names no session it could miss
        values.pop("id")
        name = text(row[self.key_column])
        if own_id := as_ulid(name):  # an id, not a key (export_seed writes a session of no key under its id)
            values["id"], values["key"] = own_id, ""
        else:
            values["key"] = name
        values["last_activity_at"] = values.get("ended_at") or values["started_at"]
        return values

    def existing(self, row: Row, values: dict[str, Any], context: "ImportContext") -> models.Model | str | None:
        if not values["key"]:  # named by its id: `_linked_by_id` links it when it is ours already
            return None
        # A session key is unique within its project only: the tool's project when it names one (or no project,
        # a tool that knows none), else the one session of that key.
        same_key = Session.objects.filter(key=values["key"])
        if "project_path" in values:
            same_key = same_key.filter(project_path__in={values["project_path"], ""}).order_by("-project_path")
        found = list(same_key[:2])
        if len(found) > 1 and "project_path" not in values:
            return "its session key names sessions of several projects (give the file's project_path)"
        if not found:
            return None
        session = found[0]
        other = (SeedRow.objects.filter(object_model=Session._meta.label_lower, object_id=session.pk)
                 .exclude(source=context.source).values_list("source", flat=True).first())
        if other is not None:
            return f"its session key is already the session of source {other} (pass --source {other} to update it)"
        return session

    def export_columns(self, obj: models.Model, exporter: Any) -> dict[str, Any]:
        return {self.key_column: obj.key or obj.pk}


def _has_field(model: type[models.Model], name: str) -> bool:
    return any(f.name == name for f in model._meta.concrete_fields)


ProgressFactory = Callable[[str, int], Callable[[int], None]]


@contextmanager
def _timestamps_as_given(model: type[models.Model], objects: list[models.Model]) -> Iterator[None]:
    """Let bulk_create keep the imported created_at/updated_at instead of stamping now (auto_now*);
    a row the seed gives no time gets now, as a new row would."""
    switched = [(f, f.auto_now, f.auto_now_add) for f in model._meta.concrete_fields
                if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)]
    now = timezone.now()
    for f, *_ in switched:
        f.auto_now = f.auto_now_add = False
        for instance in objects:
            if getattr(instance, f.attname) is None:
                setattr(instance, f.attname, now)
    try:
        yield
    finally:
        for f, auto_now, auto_now_add in switched:
            f.auto_now, f.auto_now_add = auto_now, auto_now_add


class SeedImporter:
    """One KIND of seed database. Subclasses set `kind`, `tables` and optionally `check_tables`."""

    kind: ClassVar[str]
    tables: ClassVar[list[TableImport]]
    # Tables the tool needs back that hold nothing of ours (Ralph V2's EF Core migration history): table → its key
    # column. Their rows are kept as SeedRows without an object (`tables_keep`), and export_seed writes them back.
    kept_tables: ClassVar[dict[str, str]] = {}

    @classmethod
    def table_model(cls, table: str) -> str:
        """The model label seed table `table`'s rows become."""
        return next(t.model._meta.label_lower for t in cls.tables if t.table == table)

    def __init__(self, path: Path, *, source: str | None = None, chunk_rows: int = CHUNK_ROWS) -> None:
        self.path, self.chunk_rows = path, chunk_rows
        self.source = source or source_default(path)
        self.context = ImportContext(kind=self.kind, source=self.source)
        # Per table, (key, SeedRow id, object id) of the source's rows the file no longer has.
        self._missing: dict[str, list[tuple[str, int, str]]] = {}

    # -- the file ---------------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise SeedImportError(f"{self.path}: no such file")
        with open(self.path, "rb") as file:
            if file.read(16) != b"SQLite format 3\x00":
                raise SeedImportError(f"{self.path} is not a SQLite database, so not a {self.kind} database")
        db = sqlite3.connect(f"file:{quote(str(self.path))}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        return db

    def present_tables(self, db: sqlite3.Connection) -> dict[str, list[str]]:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: [c[1] for c in db.execute(f'PRAGMA table_info("{name}")')] for name in names}

    def check(self, db: sqlite3.Connection) -> list[TableImport]:
        """The tables to import; SeedImportError when the file is not this tool's database."""
        try:
            problem = db.execute("PRAGMA quick_check").fetchone()[0]
            present = self.present_tables(db)
        except sqlite3.DatabaseError as error:
            if "locked" in str(error):  # the tool is writing it
                raise SeedImportError(f"{self.path} is locked by another program: stop the tool, or import a "
                                      f"copy; nothing was imported") from None
            raise SeedImportError(f"{self.path} is not a readable SQLite database: {error}") from None
        if problem != "ok":
            raise SeedImportError(f"{self.path} is corrupt: {problem}")
        selected = self.select_tables(present)
        for table in selected:
            spelled = {*present[table.table], *self.renames(table, present[table.table]).values()}
            missing = [c for c in (*table.key_columns, *sorted(table.mapped)) if c not in spelled]
            if missing:
                raise SeedImportError(f"{self.path}: table {table.table} has no column {', '.join(missing)}; "
                                      f"not a {self.kind} database of a known schema")
        return selected

    @staticmethod
    def renames(table: TableImport, columns: list[str]) -> dict[str, str]:
        """The file's spelling → ours, for the columns of `table` the file spells another way."""
        return {alias: ours for ours, aliases in table.aliases.items() if ours not in columns
                for alias in aliases if alias in columns}

    def select_tables(self, present: dict[str, list[str]]) -> list[TableImport]:
        missing = [t.table for t in self.tables if t.required and t.table not in present]
        if missing:
            raise SeedImportError(f"{self.path} is not a {self.kind} database: no table {', '.join(missing)}")
        return [t for t in self.tables if t.table in present]

    # -- the import -------------------------------------------------------------------------------
    def run(self, *, progress: ProgressFactory | None = None, delete_missing: bool = False) -> list[TableResult]:
        """Import the file as one unit: its good rows all land, or (an error, a crash, Ctrl-C) none do.
        `delete_missing`: the source's rows the file no longer has are deleted (else only reported)."""
        with closing(self._open()) as db:
            tables = self.check(db)
            columns = self.present_tables(db)
            with transaction.atomic():
                results = [self._table(db, table, columns[table.table], progress) for table in tables]
                if delete_missing:  # children before their parents
                    for table, result in reversed(list(zip(tables, results, strict=True))):
                        self._missing_delete(table, result)
                return results + self._tables_keep(db, columns)

    def _tables_keep(self, db: sqlite3.Connection, present: dict[str, list[str]]) -> list[TableResult]:
        """The `kept_tables` rows as the file has them now, each a SeedRow of no object (the row in `extra`)."""
        results = []
        for table, key_column in self.kept_tables.items():
            if key_column not in present.get(table, ()):
                continue
            before = {key: (digest, kept) for key, digest, kept in self.context.seed_rows(table).values_list(
                "source_key", "digest", "extra")}
            rows = {str(row[key_column]): {column: jsonable(value) for column, value in dict(row).items()}
                    for row in db.execute(f'SELECT * FROM "{table}" ORDER BY 1')}
            self.context.seed_rows(table).delete()
            SeedRow.objects.bulk_create(SeedRow(source=self.source, kind=self.kind, source_table=table, source_key=key,
                                                object_model="", object_id="", extra=row, digest=row_digest(row))
                                        for key, row in rows.items())
            unchanged = sum(before.get(key) in ((row_digest(row), row), ("", row)) for key, row in rows.items())
            results.append(TableResult(table, read=len(rows), created=len(rows.keys() - before.keys()),
                                       updated=len(rows) - unchanged - len(rows.keys() - before.keys()),
                                       unchanged=unchanged))
        return results

    def _table(self, db: sqlite3.Connection, table: TableImport, columns: list[str],
               progress: ProgressFactory | None) -> TableResult:
        result = TableResult(table.table)
        imported_before = self.context.seed_rows(table.table).count()
        total = db.execute(f'SELECT count(*) FROM "{table.table}"').fetchone()[0]
        update = progress(table.table, total) if progress else None
        renames = self.renames(table, columns)
        columns = [renames.get(c, c) for c in columns]
        unmapped = [c for c in columns if c not in table.mapped and c not in table.key_columns]
        for rows in self._rows(db, table, columns):
            self._chunk(table, rows, unmapped, result)
            if update:
                update(result.read)
        if update and total == 0:
            update(0)
        table.after_table(self.context, result)
        if imported_before > result.known:  # some rows of the source are gone from the file
            self._missing_find(db, table, columns, result)
        return result

    def _rows(self, db: sqlite3.Connection, table: TableImport, columns: list[str]) -> Iterator[list[Row]]:
        """The table's rows a chunk at a time, as dicts by our spelling of the columns."""
        order = table.order_by if table.order_by != "rowid" or self._has_rowid(db, table.table) else "1"
        cursor = db.execute(f'SELECT * FROM "{table.table}" ORDER BY {order}')
        while rows := [dict(zip(columns, r, strict=True)) for r in cursor.fetchmany(self.chunk_rows)]:
            yield rows

    @staticmethod
    def _has_rowid(db: sqlite3.Connection, name: str) -> bool:
        try:
            db.execute(f'SELECT rowid FROM "{name}" LIMIT 0')
        except sqlite3.OperationalError:
            return False
        return True

    def _prepared(self, table: TableImport, key: str, row: Row, unmapped: list[str], result: TableResult, *,
                  updating: bool = False) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """A row's field values and what its SeedRow keeps (`extra`), or None when it is skipped (listed).
        `updating`: without the fields a NULL filled with now (`FILLED_NOW`)."""
        try:
            values = table.fields(row, self.context)
        except BadValue as bad:
            result.skip(bad.reason, key=key, column=bad.column, value=bad.value)
            return None
        except CONVERSION_ERRORS as error:
            result.skip(f"bad value: {error}", key=key)
            return None
        if isinstance(values, str):
            result.skip(values, key=key)
            return None
        key_field = key_in_paths_of(table.model) or ""
        shaped = key_shaped_like_id(table.model, values.get(key_field))
        if shaped is not None:  # the database refuses it too: the row is listed, and the import goes on
            result.skip(shaped.message, key=key, column=getattr(table, "key_column", key_field),
                        value=values[key_field])
            return None
        if missing := required_missing(table, values):
            column, message = missing
            result.skip(f"{column}: {message}", key=key, column=column, value=row.get(column))
            return None
        extra = {c: jsonable(row[c]) for c in unmapped if row[c] is not None}
        extra.update(values.pop(EXTRA, {}))
        filled_now = values.pop(FILLED_NOW, set())
        for reason in [*texts_fit(table, row, values, extra), *shapes_fit(table, row, values, extra),
                       *numbers_fit(table, row, values, extra), *choices_fit(table, row, values, extra),
                       *costs_fit(table, row, values, extra)]:
            result.set_aside_one(reason)
        for column in costs_rounded(table, row, values, extra):
            result.rounded[column] = result.rounded.get(column, 0) + 1
        if updating:
            values = {name: value for name, value in values.items() if name not in filled_now}
        return values, extra

    def _chunk(self, table: TableImport, rows: list[Row], unmapped: list[str], result: TableResult) -> None:
        result.read += len(rows)
        model_label = table.model._meta.label_lower
        keyed = {table.key(row): row for row in rows}
        digests = {key: row_digest(row) for key, row in keyed.items()}
        known = known_rows(self.context.seed_rows(table.table), list(keyed))
        result.known += len(known)
        changed = {key: imported for key, imported in known.items() if imported.digest != digests[key]}
        result.unchanged += len(known) - len(changed)
        new_objects: list[tuple[str, models.Model | None, Row, dict[str, Any]]] = []
        for key, row in keyed.items():
            if key in known:
                continue
            prepared = self._prepared(table, key, row, unmapped, result)
            if prepared is None:
                continue
            values, extra = prepared
            linked = table.existing(row, values, self.context)
            if isinstance(linked, str):
                result.skip(linked, key=key)
                continue
            new_objects.append((key, linked, extra, values))
        new_objects = self._linked_by_id(table, new_objects)
        creating = [table.build(values) for _key, linked, _extra, values in new_objects if linked is None]
        if creating:
            with _timestamps_as_given(table.model, creating):
                table.model._default_manager.bulk_create(creating)
            table.after_insert(creating)
        created = iter(creating)
        keys = {key: str((linked if linked is not None else next(created)).pk)
                for key, linked, _extra, _values in new_objects}
        _seed_rows_insert(self.source, self.kind, table.table, model_label,
                          [(key, keys[key], extra, digests[key]) for key, _linked, extra, _values in new_objects])
        result.created += len(creating)
        result.unchanged += len(new_objects) - len(creating)
        if table.tracks_touched:
            result.touched += [key for key, linked, _extra, _values in new_objects if linked is None]
        self.context.remember(table.table, keys)
        if changed:
            self._update(table, {key: (keyed[key], imported, digests[key]) for key, imported in changed.items()},
                         unmapped, result)

    def _update(self, table: TableImport, changed: dict[str, tuple[Row, Known, str]], unmapped: list[str],
                result: TableResult) -> None:
        """Rows imported before whose digest changed: each field that differs from the object's goes through the
        model's update service (`refresh`); a refusal skips the row, listed, and keeps its old digest."""
        objects = objects_by_id(table.model, [imported.object_id for _row, imported, _digest in changed.values()])
        kept_before = seed_row_extras([imported.seed_row_id for _row, imported, _digest in changed.values()])
        refreshed: list[tuple[int, str, dict[str, Any]]] = []
        for key, (row, imported, digest) in changed.items():
            prepared = self._prepared(table, key, row, unmapped, result, updating=True)
            if prepared is None:
                continue
            values, extra = prepared
            obj = objects.get(imported.object_id)
            if obj is None:
                result.skip("deleted here since it was imported: not made again", key=key)
                continue
            data = table.changes(obj, values)
            refused = (f"changed in the file, but {table.model._meta.verbose_name_plural} are append-only"
                       if data and table.append_only else object_update(obj, data) if data else None)
            if refused:
                result.skip(refused, key=key)
                continue
            # Updated: a field changed, or a column we keep on the SeedRow (and export) did.
            before = kept_before.get(imported.seed_row_id, {})
            if before != extra:
                self.context.replaced.setdefault(table.table, {})[key] = before
            result.updated += bool(data) or before != extra
            result.unchanged += not data and before == extra
            refreshed.append((imported.seed_row_id, digest, extra))
            if table.tracks_touched:
                result.touched.append(key)
        seed_rows_refresh(refreshed)

    def _missing_find(self, db: sqlite3.Connection, table: TableImport, columns: list[str],
                      result: TableResult) -> None:
        """The keys of the source's rows of `table` the file no longer has (a second read of the file,
        only when some are gone)."""
        file_keys = {table.key(row) for rows in self._rows(db, table, columns) for row in rows}
        self._missing[table.table] = list(missing_keys(self.context.seed_rows(table.table), file_keys))
        result.missing = [key for key, _pk, _object_id in self._missing[table.table]]

    def _missing_delete(self, table: TableImport, result: TableResult) -> None:
        """Delete the rows gone from the file through the model's delete service; a refusal keeps the row
        (listed). A row already deleted here only loses its SeedRow."""
        gone = self._missing.get(table.table, [])
        objects = objects_by_id(table.model, [object_id for _key, _pk, object_id in gone])
        deleted, kept = [], []
        for key, seed_row_id, object_id in gone:
            obj = objects.get(object_id)
            refused = None if obj is None else (
                f"not deleted: {table.model._meta.verbose_name_plural} are append-only" if table.append_only
                else object_delete(obj))
            if refused:
                result.skip(refused, key=key)
                kept.append(key)
            else:
                deleted.append(seed_row_id)
        SeedRow.objects.filter(pk__in=deleted).delete()
        result.deleted, result.missing = len(deleted), kept

    @staticmethod
    def _linked_by_id(table: TableImport, new_objects: list[tuple[str, models.Model | None, Row, dict[str, Any]]]
                      ) -> list[tuple[str, models.Model | None, Row, dict[str, Any]]]:
        """A row whose id already is one of our objects' (a ULID the tool kept, e.g. a file `export_seed`
        wrote) is that object, whichever source it came from: linked, not inserted twice."""
        ids = [values["id"] for _key, linked, _extra, values in new_objects if linked is None and "id" in values]
        if not ids:
            return new_objects
        ours = table.model._default_manager.in_bulk(ids)
        return [(key, linked if linked is not None else ours.get(values.get("id")), extra, values)
                for key, linked, extra, values in new_objects]


def _seed_rows_insert(source: str, kind: str, table: str, model_label: str,
                      rows: list[tuple[str, str, dict[str, Any], str]]) -> None:
    """The SeedRows of a chunk, (key, object id, extra, digest) each, in one executemany: as many rows as the import
    creates, where bulk_create's model instances and per-field preparation cost as much as the rows' own."""
    if not rows:
        return
    connection = connections[router.db_for_write(SeedRow)]
    meta, quote = SeedRow._meta, connection.ops.quote_name
    extra, imported_at = meta.get_field("extra"), meta.get_field("imported_at")
    columns = ("source", "kind", "source_table", "source_key", "object_model", "object_id", "extra", "digest",
               "imported_at")
    now = imported_at.get_db_prep_save(timezone.now(), connection)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(meta.get_field(c).column) for c in columns)}) "
            f"VALUES ({', '.join(['%s'] * len(columns))})",
            [(source, kind, table, key, model_label, object_id, extra.get_db_prep_save(kept, connection), digest, now)
             for key, object_id, kept, digest in rows])


def source_default(path: Path) -> str:
    """A file's source when the user names none: its absolute path (the same file imported again is the
    same source; a copy elsewhere is another unless `--source` names it)."""
    return str(path.resolve())


def ulid_for(context: ImportContext, table: str, key: str, when: datetime | None) -> str:
    """Our id for a seed row: its own id when that already is a ULID, else a ULID made of the row's
    time and a digest of its source and key, so the same row gets the same id on every import of its
    source (and ids sort by time), and another project's row numbered alike gets another."""
    import hashlib

    from ulid import ULID

    from ralphsite.core.ulid import ulid_normalize

    try:
        return ulid_normalize(key)
    except ValueError:
        pass
    millis = max(0, int((when or datetime(1970, 1, 1, tzinfo=UTC)).timestamp() * 1000))
    # Rows imported before sources existed keep the ids they were given then (no source in the digest).
    prefix = "" if context.source == LEGACY_SOURCE else f"{context.source}\x00"
    digest = hashlib.sha256(f"{prefix}{context.kind}\x00{table}\x00{key}".encode()).digest()[:10]
    return str(ULID.from_bytes(millis.to_bytes(6, "big") + digest))
