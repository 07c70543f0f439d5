"""The search index's DDL, per backend. Migrations call `install` / `uninstall`.

SQLite: `conv_search_doc` gives every searchable row a stable integer id (tables with ULID keys
have no stable rowid), `conv_search_words` (FTS5, porter stemming: English inflection, any case)
and `conv_search_grams` (FTS5 trigram: CJK substrings of 3+ characters) index the same text,
kept in sync by triggers. SQLite rebuilds a table for many AlterField migrations and drops its
triggers: a later migration that alters the message or observation table must call `install`
again (it is idempotent and re-indexes existing rows); tests check the triggers exist.

PostgreSQL: GIN indexes on the `to_tsvector('english', …)` expression and on the text with
pg_trgm's `gin_trgm_ops` (CJK substrings through ILIKE).
"""

from dataclasses import dataclass

from django.db.backends.base.schema import BaseDatabaseSchemaEditor


@dataclass(frozen=True)
class SearchSource:
    kind: str
    table: str
    columns: tuple[str, ...]  # the columns whose change re-indexes the row

    def body(self, alias: str = "") -> str:
        """The indexed text of one row: its columns joined by spaces (the same SQL on both backends)."""
        prefix = f"{alias}." if alias else ""
        return " || ' ' || ".join(f"{prefix}{c}" for c in self.columns)


SOURCES = (
    SearchSource("message", "conversations_app_message", ("content",)),
    SearchSource("observation", "conversations_app_observation", ("content", "tool_name")),
)
FTS_TABLES = ("conv_search_words", "conv_search_grams")
TRIGGER_SUFFIXES = ("ai", "au", "ad")


def trigger_names() -> list[str]:
    return [f"conv_search_{source.kind}_{suffix}" for source in SOURCES for suffix in TRIGGER_SUFFIXES]


def _doc_id(source: SearchSource, row: str) -> str:
    return f"(SELECT id FROM conv_search_doc WHERE kind = '{source.kind}' AND ref_id = {row}.id)"


def _sqlite_triggers(source: SearchSource) -> list[str]:
    new_doc, old_doc = _doc_id(source, "new"), _doc_id(source, "old")
    body = source.body("new")
    name = f"conv_search_{source.kind}"
    return [
        f"""CREATE TRIGGER {name}_ai AFTER INSERT ON {source.table} BEGIN
            INSERT INTO conv_search_doc(kind, ref_id) VALUES ('{source.kind}', new.id);
            INSERT INTO conv_search_words(rowid, body) VALUES ({new_doc}, {body});
            INSERT INTO conv_search_grams(rowid, body) VALUES ({new_doc}, {body});
        END""",
        f"""CREATE TRIGGER {name}_au AFTER UPDATE OF {", ".join(source.columns)} ON {source.table} BEGIN
            UPDATE conv_search_words SET body = {body} WHERE rowid = {new_doc};
            UPDATE conv_search_grams SET body = {body} WHERE rowid = {new_doc};
        END""",
        f"""CREATE TRIGGER {name}_ad AFTER DELETE ON {source.table} BEGIN
            DELETE FROM conv_search_words WHERE rowid = {old_doc};
            DELETE FROM conv_search_grams WHERE rowid = {old_doc};
            DELETE FROM conv_search_doc WHERE kind = '{source.kind}' AND ref_id = old.id;
        END""",
    ]


def _sqlite_install() -> list[str]:
    statements = [
        "CREATE TABLE IF NOT EXISTS conv_search_doc (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, "
        "ref_id TEXT NOT NULL, UNIQUE (kind, ref_id))",
        "CREATE VIRTUAL TABLE IF NOT EXISTS conv_search_words USING fts5(body, "
        "tokenize = 'porter unicode61 remove_diacritics 2')",
        "CREATE VIRTUAL TABLE IF NOT EXISTS conv_search_grams USING fts5(body, tokenize = 'trigram')",
        *(f"DELETE FROM {table}" for table in FTS_TABLES),
        "DELETE FROM conv_search_doc",
    ]
    for source in SOURCES:
        statements += [f"DROP TRIGGER IF EXISTS conv_search_{source.kind}_{s}" for s in TRIGGER_SUFFIXES]
        statements += _sqlite_triggers(source)
        # Index the rows that exist already (a re-install after a table rebuild).
        statements.append(f"INSERT INTO conv_search_doc(kind, ref_id) SELECT '{source.kind}', id FROM {source.table}")
        statements += [
            f"INSERT INTO {table}(rowid, body) SELECT d.id, {source.body('t')} FROM conv_search_doc d "
            f"JOIN {source.table} t ON d.kind = '{source.kind}' AND t.id = d.ref_id"
            for table in FTS_TABLES
        ]
    return statements


def _sqlite_uninstall() -> list[str]:
    return [
        *(f"DROP TRIGGER IF EXISTS {name}" for name in trigger_names()),
        *(f"DROP TABLE IF EXISTS {table}" for table in FTS_TABLES),
        "DROP TABLE IF EXISTS conv_search_doc",
    ]


def _postgresql_install() -> list[str]:
    statements = ["CREATE EXTENSION IF NOT EXISTS pg_trgm"]
    for source in SOURCES:
        body = source.body()
        statements += [
            f"CREATE INDEX IF NOT EXISTS conv_search_{source.kind}_fts ON {source.table} "
            f"USING GIN (to_tsvector('english', {body}))",
            f"CREATE INDEX IF NOT EXISTS conv_search_{source.kind}_trgm ON {source.table} "
            f"USING GIN (({body}) gin_trgm_ops)",
        ]
    return statements


def _postgresql_uninstall() -> list[str]:
    # pg_trgm stays: other schemas may use the extension.
    return [f"DROP INDEX IF EXISTS conv_search_{source.kind}_{suffix}" for source in SOURCES
            for suffix in ("fts", "trgm")]


_DDL = {
    "sqlite": (_sqlite_install, _sqlite_uninstall),
    "postgresql": (_postgresql_install, _postgresql_uninstall),
}


def _run(schema_editor: BaseDatabaseSchemaEditor, statements: list[str]) -> None:
    for statement in statements:
        schema_editor.execute(statement, params=None)


def install(schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, _DDL[schema_editor.connection.vendor][0]())


def uninstall(schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, _DDL[schema_editor.connection.vendor][1]())
