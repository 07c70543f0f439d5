"""One ranked, filtered, paginated search query per backend (user text only ever as parameters).

Each backend function returns the SQL of a UNION ALL over the searchable kinds with the columns
of `SearchHit` (rank ascending = best first) and its parameters; `search_page` counts and pages it
in two queries whatever the page size. Tombstoned chats hide their messages.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.utils.dateparse import parse_datetime

from conversations_app.search.indexing import search_index_pending
from conversations_app.search.schema import SOURCES, SearchSource
from conversations_app.search.terms import MARK_END, MARK_START, SearchTerms, fts5_phrase, like_pattern, mark_terms

SNIPPET_WORDS = 16
SNIPPET_CHARS = 160


@dataclass(frozen=True)
class SearchFilters:
    kinds: tuple[str, ...] = ("message", "observation")
    session: str | None = None
    chat: str | None = None
    roles: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None


@dataclass(frozen=True)
class SearchHit:
    kind: str
    id: str
    chat: str | None
    run: str | None
    session: str | None
    subtype: str
    created_at: datetime
    rank: float
    snippet: str


@dataclass(frozen=True)
class KindSQL:
    row: str  # the searchable table with its alias
    alias: str
    parents: str  # joins to the parents that links and filters need
    chat: str
    run: str
    session: str
    subtype: str


_KIND_SQL = {
    "message": KindSQL("conversations_app_message m", "m",
                       " JOIN conversations_app_run r ON r.id = m.run_id"
                       " JOIN conversations_app_chat c ON c.id = r.chat_id",
                       "c.id", "m.run_id", "c.session_id", "m.role"),
    "observation": KindSQL("conversations_app_observation o", "o", "", "NULL", "NULL", "o.session_id", "o.type"),
}


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(['%s'] * len(values))})"


def _filters(kind: str, filters: SearchFilters) -> tuple[list[str], list[Any]]:
    alias = _KIND_SQL[kind].alias
    where: list[str] = []
    params: list[Any] = []
    if kind == "message":
        where.append("c.is_deleted = %s")
        params.append(False)
        conditions = [("c.id = %s", filters.chat), ("c.session_id = %s", filters.session)]
        if filters.roles:
            where.append(_in("m.role", filters.roles))
            params += filters.roles
    else:
        conditions = [("o.session_id = %s", filters.session)]
        if filters.types:
            where.append(_in("o.type", filters.types))
            params += filters.types
    conditions += [(f"{alias}.created_at >= %s", filters.created_after),
                   (f"{alias}.created_at < %s", filters.created_before)]
    for condition, value in conditions:
        if value:
            where.append(condition)
            params.append(connection.ops.adapt_datetimefield_value(value) if isinstance(value, datetime)
                          else value)
    return where, params


def _kinds(filters: SearchFilters) -> list[SearchSource]:
    kinds = set(filters.kinds)
    if filters.chat or filters.roles:
        kinds &= {"message"}  # observations have neither a chat nor a role
    if filters.types:
        kinds &= {"observation"}
    return [source for source in SOURCES if source.kind in kinds]


@dataclass
class Match:
    """How one backend matches the terms: extra FROM, WHERE conditions, rank and snippet SQL."""

    from_sql: str
    where: list[str]
    params: list[Any]
    rank: str
    snippet: str
    select_params: list[Any]  # parameters of rank and snippet, in that order


def _select(source: SearchSource, match: Match, filters: SearchFilters) -> tuple[str, list[Any]]:
    k = _KIND_SQL[source.kind]
    where, params = _filters(source.kind, filters)
    sql = (f"SELECT '{source.kind}' AS kind, {k.alias}.id AS id, {k.chat} AS chat, {k.run} AS run, "
           f"{k.session} AS session, {k.subtype} AS subtype, {k.alias}.created_at AS created_at, "
           f"{match.rank} AS rank, {match.snippet} AS snippet FROM {match.from_sql}{k.parents} "
           f"WHERE {' AND '.join([*match.where, *where])}")
    return sql, [*match.select_params, *match.params, *params]


def _sqlite_select(source: SearchSource, terms: SearchTerms, filters: SearchFilters) -> tuple[str, list[Any]]:
    """FTS5: porter words drive (bm25 + snippet); CJK terms of 3+ characters match the trigram table,
    shorter ones (below the trigram tokenizer's reach) by instr() on the row itself (a scan)."""
    k = _KIND_SQL[source.kind]
    body = source.body(k.alias)
    long_cjk = [t for t in terms.substrings if len(t) >= 3]
    short_cjk = [t for t in terms.substrings if len(t) < 3]
    driver = "conv_search_words" if terms.words else "conv_search_grams" if long_cjk else None
    if driver:
        driver_terms = terms.words or long_cjk
        match = Match(
            from_sql=(f"{driver} JOIN conv_search_doc d ON d.id = {driver}.rowid AND d.kind = '{source.kind}' "
                      f"JOIN {k.row} ON {k.alias}.id = d.ref_id"),
            where=[f"{driver} MATCH %s"], params=[" ".join(fts5_phrase(t) for t in driver_terms)],
            rank=f"bm25({driver})", snippet=f"snippet({driver}, 0, %s, %s, '…', {SNIPPET_WORDS})",
            select_params=[MARK_START, MARK_END])
        if terms.words and long_cjk:
            match.where.append("d.id IN (SELECT rowid FROM conv_search_grams WHERE conv_search_grams MATCH %s)")
            match.params.append(" ".join(fts5_phrase(t) for t in long_cjk))
    else:
        match = Match(from_sql=k.row, where=[], params=[], rank="0.0",
                      snippet=f"substr({body}, max(instr({body}, %s) - 60, 1), {SNIPPET_CHARS})",
                      select_params=[short_cjk[0]])
    for term in short_cjk:
        match.where.append(f"instr({body}, %s) > 0")
        match.params.append(term)
    return _select(source, match, filters)


def _postgresql_select(source: SearchSource, terms: SearchTerms, filters: SearchFilters) -> tuple[str, list[Any]]:
    """tsvector with the 'english' configuration (GIN expression index) for words; pg_trgm-indexed
    ILIKE for CJK substrings."""
    k = _KIND_SQL[source.kind]
    body = source.body(k.alias)
    vector = f"to_tsvector('english', {body})"
    if terms.words:
        query_text = " ".join(terms.words)
        match = Match(
            from_sql=k.row, where=[f"{vector} @@ plainto_tsquery('english', %s)"], params=[query_text],
            rank=f"-ts_rank_cd({vector}, plainto_tsquery('english', %s))",
            snippet=(f"ts_headline('english', {body}, plainto_tsquery('english', %s), "
                     f"'StartSel=<mark>, StopSel=</mark>, MaxWords={SNIPPET_WORDS + 8}, MinWords=6')"),
            select_params=[query_text, query_text])
    else:
        match = Match(from_sql=k.row, where=[], params=[], rank="0.0",
                      snippet=f"substr({body}, greatest(strpos({body}, %s) - 60, 1), {SNIPPET_CHARS})",
                      select_params=[terms.substrings[0]])
    for term in terms.substrings:
        match.where.append(f"{body} ILIKE %s")
        match.params.append(like_pattern(term))
    return _select(source, match, filters)


_BACKENDS = {"sqlite": _sqlite_select, "postgresql": _postgresql_select}


def search_page(*, terms: SearchTerms, filters: SearchFilters, limit: int, offset: int) -> tuple[int, list[SearchHit]]:
    """(total hits, one page of hits best first). Two queries; no terms → no query at all."""
    sources = _kinds(filters)
    if not terms or not sources:
        return 0, []
    search_index_pending()  # rows inserted since the last indexing (SQLite's deferred index)
    select = _BACKENDS[connection.vendor]
    parts = [select(source, terms, filters) for source in sources]
    union = " UNION ALL ".join(f"SELECT * FROM ({sql}) AS hits_{i}" for i, (sql, _) in enumerate(parts))
    params = [p for _, part_params in parts for p in part_params]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM ({union}) AS hits", params)
        total = cursor.fetchone()[0]
        if not total or offset >= total:
            return total, []
        cursor.execute(f"SELECT * FROM ({union}) AS hits ORDER BY rank, created_at DESC, id LIMIT %s OFFSET %s",
                       [*params, limit, offset])
        rows = cursor.fetchall()
    hits = []
    for kind, ref_id, chat, run, session, subtype, created_at, rank, snippet in rows:
        if isinstance(created_at, str):  # SQLite returns the stored text
            created_at = parse_datetime(created_at).replace(tzinfo=UTC)
        hits.append(SearchHit(kind=kind, id=ref_id, chat=chat, run=run, session=session, subtype=subtype,
                              created_at=created_at, rank=float(rank),
                              snippet=mark_terms(snippet or "", terms.substrings)))
    return total, hits
