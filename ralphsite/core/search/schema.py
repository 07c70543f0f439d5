"""The search index's DDL, per backend and per source. Each app's migrations install its own sources'
index (`search_index_operation`, or `install` / `uninstall`), given their tables (`sources.SearchTable`)
frozen as that migration knew them.

SQLite: `conv_search_doc` gives every searchable row a stable integer id (tables with ULID keys
have no stable rowid), `conv_search_words` (FTS5, porter stemming: English inflection, any case)
and `conv_search_grams` (FTS5 trigram: CJK substrings of 3+ characters) index the same text,
kept in sync by triggers. The tables (named when messages were all there was to search) are
shared by every source: the first source installed creates them, the last one uninstalled drops
them. SQLite rebuilds a table for many AlterField migrations and drops its triggers: a later
migration that alters a searched table must call `install` again for its sources (it is idempotent
and re-indexes that source's rows); tests check the triggers exist.

Deferred indexing (`deferred=True`, conversations_app's migration 0003 on): writing a new row's
FTS5 segments cost every message insert 0.2 ms at the median and ~1 ms at the p99, so the insert
trigger only queues the row in `conv_search_pending`; `indexing.search_index_pending` indexes the
queue in one statement per table, run by the search itself before it queries (a search sees every
committed row) and by the server's background thread between requests. Every source is deferred
(the ledger's appends above all: an append holds the chain head). Updates and deletes stay
synchronous: an update of a queued row changes no index row yet, and the queued row is indexed with
its current text. A ledger event is never updated; a purge deletes its index rows with it.

PostgreSQL: GIN indexes on the `to_tsvector('english', …)` expression and on the text with
pg_trgm's `gin_trgm_ops` (CJK substrings through ILIKE), one pair per source.
"""

from collections.abc import Iterable, Sequence

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from ralphsite.core.search.sources import SearchTable, search_sources

DOC_TABLE = "conv_search_doc"
FTS_TABLES = ("conv_search_words", "conv_search_grams")
PENDING_TABLE = "conv_search_pending"
TRIGGER_PREFIX = "conv_search_"
TRIGGER_SUFFIXES = ("ai", "au", "ad")


def trigger_names(sources: Iterable[SearchTable] | None = None) -> list[str]:
    """The SQLite triggers of these sources (default: every registered one)."""
    return [f"{TRIGGER_PREFIX}{source.kind}_{suffix}" for source in (search_sources() if sources is None else sources)
            for suffix in TRIGGER_SUFFIXES]


def _doc_id(source: SearchTable, row: str) -> str:
    return f"(SELECT id FROM {DOC_TABLE} WHERE kind = '{source.kind}' AND ref_id = {source.ref(row)})"


def _sqlite_triggers(source: SearchTable, *, deferred: bool) -> list[str]:
    new_doc, old_doc = _doc_id(source, "new"), _doc_id(source, "old")
    body = source.body("new")
    name = f"{TRIGGER_PREFIX}{source.kind}"
    index_new = f"INSERT INTO {PENDING_TABLE}(doc_id) VALUES ({new_doc});" if deferred else (
        f"INSERT INTO conv_search_words(rowid, body) VALUES ({new_doc}, {body});\n"
        f"            INSERT INTO conv_search_grams(rowid, body) VALUES ({new_doc}, {body});")
    return [
        f"""CREATE TRIGGER {name}_ai AFTER INSERT ON {source.table} BEGIN
            INSERT INTO {DOC_TABLE}(kind, ref_id) VALUES ('{source.kind}', {source.ref("new")});
            {index_new}
        END""",
        f"""CREATE TRIGGER {name}_au AFTER UPDATE OF {", ".join(source.columns)} ON {source.table} BEGIN
            UPDATE conv_search_words SET body = {body} WHERE rowid = {new_doc};
            UPDATE conv_search_grams SET body = {body} WHERE rowid = {new_doc};
        END""",
        f"""CREATE TRIGGER {name}_ad AFTER DELETE ON {source.table} BEGIN
            DELETE FROM conv_search_words WHERE rowid = {old_doc};
            DELETE FROM conv_search_grams WHERE rowid = {old_doc};
            DELETE FROM {PENDING_TABLE} WHERE doc_id = {old_doc};
            DELETE FROM {DOC_TABLE} WHERE kind = '{source.kind}' AND ref_id = {source.ref("old")};
        END""",
    ]


def _index_rows(source: SearchTable, docs: str) -> list[str]:
    """Write the FTS rows of the source's documents that `docs` (a FROM clause aliased d) selects."""
    return [f"INSERT INTO {table}(rowid, body) SELECT d.id, {source.body('t')} FROM {docs} "
            f"JOIN {source.table} t ON t.id = d.ref_id AND d.kind = '{source.kind}'"
            for table in FTS_TABLES]


def index_pending_statements(sources: Iterable[SearchTable] | None = None) -> list[str]:
    """Index every queued row, then empty the queue (run them in one transaction)."""
    docs = f"{PENDING_TABLE} p JOIN {DOC_TABLE} d ON d.id = p.doc_id"
    return [*(statement for source in (search_sources() if sources is None else sources)
              for statement in _index_rows(source, docs)),
            f"DELETE FROM {PENDING_TABLE}"]


_SQLITE_SHARED = [
    f"CREATE TABLE IF NOT EXISTS {DOC_TABLE} (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, "
    "ref_id TEXT NOT NULL, UNIQUE (kind, ref_id))",
    "CREATE VIRTUAL TABLE IF NOT EXISTS conv_search_words USING fts5(body, "
    "tokenize = 'porter unicode61 remove_diacritics 2')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS conv_search_grams USING fts5(body, tokenize = 'trigram')",
    f"CREATE TABLE IF NOT EXISTS {PENDING_TABLE} (doc_id INTEGER PRIMARY KEY)",
]


def _sqlite_forget(source: SearchTable) -> list[str]:
    """Drop the source's triggers and its rows from the index."""
    docs = f"(SELECT id FROM {DOC_TABLE} WHERE kind = '{source.kind}')"
    return [
        *(f"DROP TRIGGER IF EXISTS {name}" for name in trigger_names([source])),
        *(f"DELETE FROM {table} WHERE rowid IN {docs}" for table in FTS_TABLES),
        f"DELETE FROM {PENDING_TABLE} WHERE doc_id IN {docs}",
        f"DELETE FROM {DOC_TABLE} WHERE kind = '{source.kind}'",
    ]


def _sqlite_install(sources: Iterable[SearchTable], *, deferred: bool) -> list[str]:
    statements = list(_SQLITE_SHARED)
    for source in sources:
        statements += _sqlite_forget(source)
        statements += _sqlite_triggers(source, deferred=deferred)
        # Index the rows that exist already (a re-install after a table rebuild).
        statements.append(f"INSERT INTO {DOC_TABLE}(kind, ref_id) SELECT '{source.kind}', {source.ref('t')} "
                          f"FROM {source.table} t")
        statements += _index_rows(source, f"{DOC_TABLE} d")
    return statements


def _sqlite_uninstall(schema_editor: BaseDatabaseSchemaEditor, sources: Iterable[SearchTable]) -> None:
    _run(schema_editor, [*_SQLITE_SHARED, *(s for source in sources for s in _sqlite_forget(source))])
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE %s",
                       [f"{TRIGGER_PREFIX}%"])
        others = cursor.fetchone()[0]
    if not others:  # the last source gone: the shared tables go too
        _run(schema_editor, [f"DROP TABLE IF EXISTS {table}" for table in (*FTS_TABLES, PENDING_TABLE, DOC_TABLE)])


def _postgresql_install(sources: Iterable[SearchTable], *, deferred: bool) -> list[str]:  # GIN: nothing to defer
    statements = ["CREATE EXTENSION IF NOT EXISTS pg_trgm"]
    for source in sources:
        body = source.body()
        statements += [
            f"CREATE INDEX IF NOT EXISTS {TRIGGER_PREFIX}{source.kind}_fts ON {source.table} "
            f"USING GIN (to_tsvector('english', {body}))",
            f"CREATE INDEX IF NOT EXISTS {TRIGGER_PREFIX}{source.kind}_trgm ON {source.table} "
            f"USING GIN (({body}) gin_trgm_ops)",
        ]
    return statements


def _postgresql_uninstall(schema_editor: BaseDatabaseSchemaEditor, sources: Iterable[SearchTable]) -> None:
    # pg_trgm stays: other schemas may use the extension.
    _run(schema_editor, [f"DROP INDEX IF EXISTS {TRIGGER_PREFIX}{source.kind}_{suffix}" for source in sources
                         for suffix in ("fts", "trgm")])


_DDL = {
    "sqlite": (_sqlite_install, _sqlite_uninstall),
    "postgresql": (_postgresql_install, _postgresql_uninstall),
}


def _run(schema_editor: BaseDatabaseSchemaEditor, statements: list[str]) -> None:
    for statement in statements:
        schema_editor.execute(statement, params=None)


def install(schema_editor: BaseDatabaseSchemaEditor, sources: Iterable[SearchTable], *,
            deferred: bool = True) -> None:
    """Create (or re-create) the sources' index and triggers and index every existing row of theirs.

    `deferred=False` is the index of conversations_app's migration 0002, whose insert triggers
    indexed each row at once.
    """
    _run(schema_editor, _DDL[schema_editor.connection.vendor][0](list(sources), deferred=deferred))


def uninstall(schema_editor: BaseDatabaseSchemaEditor, sources: Iterable[SearchTable]) -> None:
    _DDL[schema_editor.connection.vendor][1](schema_editor, list(sources))


def search_index_operation(sources: Sequence[SearchTable], *, deferred: bool = True) -> migrations.RunPython:
    """A migration's operation: install the index of `sources` (the migration's frozen copy), and
    uninstall it when the migration is unapplied."""
    def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        install(schema_editor, sources, deferred=deferred)

    def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        uninstall(schema_editor, sources)

    return migrations.RunPython(forwards, backwards, elidable=False)
