"""Export (`manage.py export_seed KIND PATH [--session S …]`): our rows back into a seed tool's schema.

A new SQLite file gets the tool's own DDL (ralphsite/moving/seed_io/schemas/), then each of the importer's
`MappedTable`s is written back through its column map, each converter inverted (USD → cents, JSON →
text, booleans → 0/1, our enum values → the tool's, dates in the tool's own format). A row that came
from the tool gets its key back from its SeedRow, and whatever the SeedRow kept (columns we have no
field for, NULLs we store as '' or 0) overrides the mapped values, so an import followed by an export
gives the tool's rows back. Rows that never came from the tool get their keys from ours.

Rows another tool's import brought are left out (each kind receives its own), as is a row the tool's schema
cannot hold (NULL in a NOT NULL column); a per-session export is made foreign-key complete
(`foreign_keys_complete`), and a whole export but for the references the tool's own file left dangling (a row
naming a session deleted here since its import is cut loose). What was left out or cut loose is counted in
`left_out`.
"""

import base64
import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db import models

from ralphsite.core.models import SeedRow
from ralphsite.moving.seed_io.base import (
    KEY_SEPARATOR,
    MappedTable,
    SeedImporter,
    cents,
    flag,
    moment,
    usd,
)
from sessions_app.models import Session

SCHEMAS = Path(__file__).resolve().parent / "schemas"
DateWriter = Callable[[datetime], Any]


def sqlite_date(value: datetime) -> str:
    """SQLite's CURRENT_TIMESTAMP format (DevTeam), microseconds only when there are some."""
    text = value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"{text}.{value.microsecond:06d}" if value.microsecond else text


def iso_date(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def epoch_date(value: datetime) -> int:
    """Epoch milliseconds (ralphy is TypeScript: Date.now()); the import reads seconds and milliseconds."""
    return round(value.timestamp() * 1000)


def _from_json(value: Any) -> Any:
    """A SeedRow.extra value back to the column's value (BLOBs were kept as {"base64": …})."""
    if isinstance(value, dict) and list(value) == ["base64"]:
        return base64.b64decode(value["base64"])
    return value


class SeedExporter:
    """Writes the tables of `importer`'s kind (its MappedTables) for all sessions or the given keys."""

    def __init__(self, importer: type[SeedImporter], path: Path, *, dates: DateWriter,
                 sessions: list[str] | None = None) -> None:
        self.importer, self.path, self.dates, self.sessions = importer, path, dates, sessions
        self.kind = importer.kind
        self._keys: dict[str, dict[str, str]] = {}
        self._extras: dict[str, dict[str, dict[str, Any]]] = {}
        self._not_exported: dict[str, set[str]] = {}
        # Per table, rows left out or cut loose (reason → count): what the tool's schema cannot hold.
        self.left_out: dict[str, dict[str, int]] = {}

    def seed_key(self, table: str, object_id: Any) -> str | None:
        """The tool's key of our object `object_id` that came from `table` (our id when it did not)."""
        if object_id is None:
            return None
        if table not in self._keys:
            self._keys[table] = dict(SeedRow.objects.filter(kind=self.kind, source_table=table)
                                     .values_list("object_id", "source_key"))
        return self._keys[table].get(str(object_id), str(object_id))

    def seed_extra(self, table: str, object_id: Any) -> dict[str, Any]:
        """What the SeedRow of our object `object_id` from `table` kept ({} when it did not come from there)."""
        if table not in self._extras:
            self._extras[table] = {object_id: extra for object_id, extra in SeedRow.objects.filter(
                kind=self.kind, source_table=table).values_list("object_id", "extra")}
        return self._extras[table].get(str(object_id), {})

    def not_exported(self, label: str) -> set[str]:
        """Ids of our `label` objects this export leaves out: another tool's import brought them (each kind receives
        its own), or their row was left out (so are the rows that hang off them)."""
        if label not in self._not_exported:
            self._not_exported[label] = other_kinds_rows(self.kind, label)
        return self._not_exported[label]

    def session_ref(self, table: str, session_id: str | None) -> str | None:
        """What the tool's rows name session `session_id` by: its key in sessions table `table` when it came
        from the tool (Ralph V2's GUID, DevTeam's id), else our key (our id when it has none)."""
        if session_id is None:
            return None
        imported = self.seed_key(table, session_id)
        return imported if imported != str(session_id) else self.session_keys.get(session_id, session_id)

    def back(self, convert: Callable[[Any], Any], value: Any) -> Any:
        if value is None:
            return None
        inverse = getattr(convert, "inverse", None)  # EnumMap, or a converter that names its inverse
        if inverse is not None:
            return inverse(value)
        if convert is cents:
            return int((Decimal(value) * 100).to_integral_value())
        if convert is usd:
            return float(value)
        if convert is moment or isinstance(value, datetime):
            return self.dates(value)
        if convert is flag or isinstance(value, bool):
            return int(value)
        if getattr(convert, "is_json", False) or isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, memoryview):
            return bytes(value)
        return value

    def run(self) -> dict[str, int]:
        self.session_keys = {pk: key or pk for pk, key in Session.objects.values_list("id", "key")}
        if self.path.exists():
            raise FileExistsError(f"{self.path} exists: export_seed writes a new file")
        written: dict[str, int] = {}
        with closing(sqlite3.connect(self.path)) as db:
            db.executescript((SCHEMAS / f"{self.kind}.sql").read_text())
            for table in self.importer.tables:
                if isinstance(table, MappedTable):
                    written[table.table] = self._table(db, table)
            for table in self.importer.kept_tables:
                written[table] = self._kept_table(db, table)
            # A part of the history names rows outside it; the whole of it names only the rows deleted here (a
            # session deleted or purged since its import), not the references the tool's own file left dangling.
            kept = never_cut if self.sessions is not None else self._dangling_in_the_file
            for table, cut in foreign_keys_complete(db, kept=kept).items():
                written[table] -= cut.get(NAMES_NO_ROW, 0)
                self._left_out(table, cut)
            db.commit()
        return written

    def _dangling_in_the_file(self, db: sqlite3.Connection, table: str, rowid: int, parent: str, fk_id: int) -> bool:
        """Whether a row's reference names a row the tool's file never held here (its own dangling reference,
        written as it came), rather than one imported and deleted since."""
        columns = [column for key_id, _seq, _parent, column, *_rest in db.execute(f'PRAGMA foreign_key_list("{table}")')
                   if key_id == fk_id]
        selected = ", ".join(f'"{column}"' for column in columns)
        values = db.execute(f'SELECT {selected} FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()
        key = KEY_SEPARATOR.join("" if value is None else str(value) for value in values)
        return not SeedRow.objects.filter(kind=self.kind, source_table=parent, source_key=key).exists()

    def _kept_table(self, db: sqlite3.Connection, table: str) -> int:
        """A kept table's rows, as the files of this kind had them (a row several had, once)."""
        rows = dict(SeedRow.objects.filter(kind=self.kind, source_table=table, object_id="")
                    .order_by("source_key", "imported_at").values_list("source_key", "extra"))  # the newest wins
        for row in rows.values():
            columns = ", ".join(f'"{column}"' for column in row)
            db.execute(f'INSERT INTO "{table}" ({columns}) VALUES ({", ".join("?" * len(row))})',
                       [_from_json(value) for value in row.values()])
        if not rows:
            self._left_out(table, {f"none: no {self.kind} file imported here had one": 1})
        return len(rows)

    def _left_out(self, table: str, counts: dict[str, int]) -> None:
        for reason, n in counts.items():
            if n:
                self.left_out.setdefault(table, {})[reason] = self.left_out.get(table, {}).get(reason, 0) + n

    def _objects(self, table: MappedTable) -> models.QuerySet:
        objects = table.model._default_manager.order_by("pk")
        if self.sessions is None:
            return objects
        if table.model is Session:
            return objects.filter(key__in=self.sessions)
        if table.sessions:
            return objects.filter(session__key__in=self.sessions)
        if table.parents and table.model.scope_path:  # the parent's session (an iteration's, a batch's)
            return objects.filter(**{f"{table.model.scope_path}__key__in": self.sessions})
        return objects.none() if table.export_needs_session else objects

    def _table(self, db: sqlite3.Connection, table: MappedTable) -> int:
        label = table.model._meta.label_lower
        seed_rows = {row.object_id: row for row in SeedRow.objects.filter(kind=self.kind, source_table=table.table,
                                                                         object_model=label)}
        left_out = self.not_exported(label)
        # A row of a parent or a session left out is left out too: another tool's (a Ralph V2 task's file rows, the
        # calls ralphy's ledger reported), or one the file could not hold.
        parents_left_out = {parent.field: self.not_exported(self.importer.table_model(parent.table))
                            for parent in table.parents.values()}
        if table.sessions:
            parents_left_out["session_id"] = self.not_exported(Session._meta.label_lower)
        required = required_columns(db, table.table)
        count = 0
        for obj in self._objects(table).iterator(chunk_size=2000):
            seed_row = seed_rows.get(str(obj.pk))
            if (str(obj.pk) in left_out or not table.exported(obj, seed_row is not None, self)
                    or any(str(getattr(obj, name)) in ids for name, ids in parents_left_out.items())):
                continue  # another tool's row (each kind receives only its own), or one this table does not hold
            row = {column: self.back(convert, getattr(obj, name)) for column, (name, convert) in table.columns.items()}
            if table.sessions:
                row[table.sessions] = self.session_ref(table.session_table, getattr(obj, "session_id", None))
            for column, parent in table.parents.items():
                row[column] = self.seed_key(parent.table, getattr(obj, parent.field))
            row.update(table.export_columns(obj, self))
            if seed_row is not None:
                row.update(zip(table.key_columns, seed_row.source_key.split(KEY_SEPARATOR), strict=False))
                row.update({column: _from_json(value) for column, value in seed_row.extra.items()})
            empty = sorted(column for column in required if row.get(column) is None)
            if empty:  # e.g. a ledger event a purge or a deleted session left without one
                self._left_out(table.table, {f"no {', '.join(empty)}": 1})
                left_out.add(str(obj.pk))
                continue
            columns = ", ".join(f'"{column}"' for column in row)
            try:
                db.execute(f'INSERT INTO "{table.table}" ({columns}) VALUES ({", ".join("?" * len(row))})',
                           list(row.values()))
            except sqlite3.IntegrityError as error:  # a key two imported files gave (a copied project's GUIDs)
                self._left_out(table.table, {f"left out: {error}": 1})
                left_out.add(str(obj.pk))
                continue
            count += 1
        return count


def other_kinds_rows(kind: str, label: str) -> set[str]:
    """Ids of our `label` objects imported from another tool only (not also from `kind`)."""
    imported = SeedRow.objects.filter(object_model=label)
    return (set(imported.exclude(kind=kind).values_list("object_id", flat=True))
            - set(imported.filter(kind=kind).values_list("object_id", flat=True)))


def required_columns(db: sqlite3.Connection, table: str) -> set[str]:
    """The table's NOT NULL columns without a DEFAULT (an INTEGER PRIMARY KEY numbers itself)."""
    return {name for _cid, name, kind, notnull, default, pk in db.execute(f'PRAGMA table_info("{table}")')
            if notnull and default is None and not (pk and kind.upper() == "INTEGER")}


REFERENCE_CLEARED = "written without its reference to a row not exported"
NAMES_NO_ROW = "left out: it names a row not exported"


KeptReference = Callable[[sqlite3.Connection, str, int, str, int], bool]


def never_cut(*_violation: Any) -> bool:
    return False


def foreign_keys_complete(db: sqlite3.Connection, *, kept: KeptReference = never_cut) -> dict[str, dict[str, int]]:
    """`PRAGMA foreign_key_check` clean but for the references `kept` (db, table, rowid, parent, key id) keeps: a
    row naming a row the file does not hold (a plan left out of a per-session export) loses that reference when its
    column may be NULL, else the row is left out (and what names it, in turn). Returns per table how many were cut
    loose and deleted."""
    counts: dict[str, dict[str, int]] = {}
    while violations := [v for v in db.execute("PRAGMA foreign_key_check").fetchall() if not kept(db, *v)]:
        for table, rowid, _parent, fk_id in violations:
            columns = [(name, _nullable(db, table, name)) for _id, _seq, _to, name, *_rest
                       in db.execute(f'PRAGMA foreign_key_list("{table}")') if _id == fk_id]
            tally = counts.setdefault(table, {})
            if all(nullable for _name, nullable in columns):
                assignments = ", ".join(f'"{name}" = NULL' for name, _nullable in columns)
                db.execute(f'UPDATE "{table}" SET {assignments} WHERE rowid = ?', (rowid,))
                tally[REFERENCE_CLEARED] = tally.get(REFERENCE_CLEARED, 0) + 1
            else:
                db.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rowid,))
                tally[NAMES_NO_ROW] = tally.get(NAMES_NO_ROW, 0) + 1
    return counts


def _nullable(db: sqlite3.Connection, table: str, column: str) -> bool:
    return not any(name == column and notnull for _cid, name, _kind, notnull, *_rest
                   in db.execute(f'PRAGMA table_info("{table}")'))
