"""The search index's DDL, per backend. Migrations call `install` / `uninstall`.

SQLite: `conv_search_doc` gives every searchable row a stable integer id (tables with ULID keys
have no stable rowid), `conv_search_words` (FTS5, porter stemming: English inflection, any case)
and `conv_search_grams` (FTS5 trigram: CJK substrings of 3+ characters) index the same text,
kept in sync by triggers. SQLite rebuilds a table for many AlterField migrations and drops its
triggers: a later migration that alters the message or observation table must call `install`
again (it is idempotent and re-indexes existing rows); tests check the triggers exist.

Deferred indexing (`deferred=True`, migration 0003): writing a new row's FTS5 segments cost every
message insert 0.2 ms at the median and ~1 ms at the p99, so the insert trigger only queues the
row in `conv_search_pending`; `indexing.search_index_pending` indexes the queue in one statement
per table, run by the search itself before it queries (a search sees every committed row) and by
the server's background thread between requests. Updates and deletes stay synchronous: an update
of a queued row changes no index row yet, and the queued row is indexed with its current text.

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
PENDING_TABLE = "conv_search_pending"
TRIGGER_SUFFIXES = ("ai", "au", "ad")


def trigger_names() -> list[str]:
    return [f"conv_search_{source.kind}_{suffix}" for source in SOURCES for suffix in TRIGGER_SUFFIXES]


def _doc_id(source: SearchSource, row: str) -> str:
    return f"(SELECT id FROM conv_search_doc WHERE kind = '{source.kind}' AND ref_id = {row}.id)"


def _sqlite_triggers(source: SearchSource, *, deferred: bool) -> list[str]:
    new_doc, old_doc = _doc_id(source, "new"), _doc_id(source, "old")
    body = source.body("new")
    name = f"conv_search_{source.kind}"
    index_new = f"INSERT INTO {PENDING_TABLE}(doc_id) VALUES ({new_doc});" if deferred else (
        f"INSERT INTO conv_search_words(rowid, body) VALUES ({new_doc}, {body});\n"
        f"            INSERT INTO conv_search_grams(rowid, body) VALUES ({new_doc}, {body});")
    unqueue_old = f"DELETE FROM {PENDING_TABLE} WHERE doc_id = {old_doc};" if deferred else ""
    return [
        f"""CREATE TRIGGER {name}_ai AFTER INSERT ON {source.table} BEGIN
            INSERT INTO conv_search_doc(kind, ref_id) VALUES ('{source.kind}', new.id);
            {index_new}
        END""",
        f"""CREATE TRIGGER {name}_au AFTER UPDATE OF {", ".join(source.columns)} ON {source.table} BEGIN
            UPDATE conv_search_words SET body = {body} WHERE rowid = {new_doc};
            UPDATE conv_search_grams SET body = {body} WHERE rowid = {new_doc};
        END""",
        f"""CREATE TRIGGER {name}_ad AFTER DELETE ON {source.table} BEGIN
            DELETE FROM conv_search_words WHERE rowid = {old_doc};
            DELETE FROM conv_search_grams WHERE rowid = {old_doc};
            {unqueue_old}
            DELETE FROM conv_search_doc WHERE kind = '{source.kind}' AND ref_id = old.id;
        END""",
    ]


def index_pending_statements() -> list[str]:
    """Index every queued row, then empty the queue (run them in one transaction)."""
    return [
        *(f"INSERT INTO {table}(rowid, body) SELECT d.id, {source.body('t')} FROM {PENDING_TABLE} p "
          f"JOIN conv_search_doc d ON d.id = p.doc_id AND d.kind = '{source.kind}' "
          f"JOIN {source.table} t ON t.id = d.ref_id"
          for source in SOURCES for table in FTS_TABLES),
        f"DELETE FROM {PENDING_TABLE}",
    ]


def _sqlite_install(*, deferred: bool) -> list[str]:
    statements = [
        "CREATE TABLE IF NOT EXISTS conv_search_doc (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, "
        "ref_id TEXT NOT NULL, UNIQUE (kind, ref_id))",
        "CREATE VIRTUAL TABLE IF NOT EXISTS conv_search_words USING fts5(body, "
        "tokenize = 'porter unicode61 remove_diacritics 2')",
        "CREATE VIRTUAL TABLE IF NOT EXISTS conv_search_grams USING fts5(body, tokenize = 'trigram')",
        *(f"DELETE FROM {table}" for table in FTS_TABLES),
        f"DROP TABLE IF EXISTS {PENDING_TABLE}",
        "DELETE FROM conv_search_doc",
    ]
    if deferred:
        statements.append(f"CREATE TABLE {PENDING_TABLE} (doc_id INTEGER PRIMARY KEY)")
    for source in SOURCES:
        statements += [f"DROP TRIGGER IF EXISTS conv_search_{source.kind}_{s}" for s in TRIGGER_SUFFIXES]
        statements += _sqlite_triggers(source, deferred=deferred)
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
        *(f"DROP TABLE IF EXISTS {table}" for table in (*FTS_TABLES, PENDING_TABLE)),
        "DROP TABLE IF EXISTS conv_search_doc",
    ]


def _postgresql_install(*, deferred: bool) -> list[str]:  # GIN indexes: nothing to defer
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


def install(schema_editor: BaseDatabaseSchemaEditor, *, deferred: bool = True) -> None:
    """Create (or re-create) the index and its triggers and index every existing row.

    `deferred=False` is the index of migration 0002, whose insert triggers indexed each row at once.
    """
    _run(schema_editor, _DDL[schema_editor.connection.vendor][0](deferred=deferred))


def uninstall(schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, _DDL[schema_editor.connection.vendor][1]())
