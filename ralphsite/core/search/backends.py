"""One ranked, filtered, paginated search query per backend (user text only ever as parameters).

Each backend function returns the SQL of a UNION ALL over the searchable kinds with the columns
of `SearchHit` (rank ascending = best first) and its parameters; `search_page` counts and pages it
in two queries whatever the page size. Tombstoned chats hide their messages. What is searched is
each registered `SearchSource` (sources.py).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.apps import apps
from django.db import connection, models
from django.utils.dateparse import parse_datetime

from ralphsite.core.access import current_scope
from ralphsite.core.search.indexing import search_index_pending
from ralphsite.core.search.sources import SearchSource, search_source, search_sources
from ralphsite.core.search.terms import (
    MATCH_END,
    MATCH_START,
    NO_QUERY,
    STOP_WORDS,
    TAG_STAND_INS,
    Group,
    SearchQuery,
    Term,
    fts5_string,
    like_pattern,
    snippet_html,
)

SNIPPET_WORDS = 16
SNIPPET_CHARS = 160


@dataclass(frozen=True)
class SearchFilters:
    kinds: tuple[str, ...] | None = None  # None: every registered kind
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


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(['%s'] * len(values))})"


def _adapted(value: Any) -> Any:
    return connection.ops.adapt_datetimefield_value(value) if isinstance(value, datetime) else value


def _filters(source: SearchSource, filters: SearchFilters) -> tuple[list[str], list[Any]]:
    a = source.alias
    where: list[str] = [source.visible] if source.visible else []
    params: list[Any] = []
    for name, values in (("role", filters.roles), ("type", filters.types)):
        if values:
            where.append(_in(source.filters[name], values))
            params += values
    if filters.chat:  # only a source that has a chat is searched with this filter (_kinds)
        where.append(f"{source.filters['chat']} = %s")
        params.append(filters.chat)
    conditions = [(f"{source.session} = %s", filters.session),
                  (f"{a}.{source.created} >= %s", filters.created_after),
                  (f"{a}.{source.created} < %s", filters.created_before)]
    for condition, value in conditions:
        if value:
            where.append(condition)
            params.append(_adapted(value))
    # A scoped token finds only the rows of its sessions (a chat of no session is in no scope).
    in_scope = current_scope().session_sql(source.session)
    if in_scope is not None:
        where.append(in_scope[0])
        params += in_scope[1]
    return where, params


def _kinds(filters: SearchFilters) -> list[SearchSource]:
    """The sources searched: those asked for that have every filter given (an observation has no chat
    nor role, a message no type, an event or report none of them)."""
    needed = {name for name, value in (("chat", filters.chat), ("role", filters.roles), ("type", filters.types))
              if value}
    return [source for source in search_sources()
            if (filters.kinds is None or source.kind in filters.kinds) and needed <= source.filters.keys()]


@dataclass
class Match:
    """How one backend matches the query: FROM, WHERE conditions, rank and snippet SQL, and the
    parameters of each (in the order they appear: select, from, where)."""

    from_sql: str
    where: list[str]
    rank: str
    snippet: str
    select_params: list[Any] = field(default_factory=list)
    from_params: list[Any] = field(default_factory=list)
    where_params: list[Any] = field(default_factory=list)


def _select(source: SearchSource, match: Match, filters: SearchFilters) -> tuple[str, list[Any]]:
    where, params = _filters(source, filters)
    a = source.alias
    sql = (f"SELECT '{source.kind}' AS kind, {source.ref(a)} AS id, {source.chat} AS chat, {source.run} AS run, "
           f"{source.session} AS session, {source.subtype} AS subtype, {a}.{source.created} AS created_at, "
           f"{match.rank} AS rank, {match.snippet} AS snippet FROM {match.from_sql}{source.parents} "
           f"WHERE {' AND '.join([*match.where, *where])}")
    return sql, [*match.select_params, *match.from_params, *match.where_params, *params]


def _any_of(conditions: list[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
    """OR over the groups' conditions (each an AND of its terms); TRUE when nothing is left to check."""
    parts = [sql for sql, _ in conditions]
    if not parts or any(part == "" for part in parts):
        return "1 = 1", []
    sql = parts[0] if len(parts) == 1 else " OR ".join(f"({part})" for part in parts)
    return f"({sql})", [p for _, params in conditions for p in params]


def _fts5_words(group: Group) -> str:
    """The group's word terms as one FTS5 expression (implicit AND), each term quoted."""
    return " ".join(fts5_string(t.text) + ("*" if t.kind == "prefix" else "") for t in group if t.kind != "substring")


def _long(term: Term) -> bool:
    return term.kind == "substring" and len(term.text) >= 3  # the trigram tokenizer's reach


def _sqlite_select(source: SearchSource, query: SearchQuery, filters: SearchFilters) -> tuple[str, list[Any]]:
    """FTS5. Words, phrases and prefixes match the porter table, substrings of 3+ characters the
    trigram table, shorter ones (below the trigram tokenizer's reach) instr() on the row itself.

    One table drives the query when every group has terms in it (bm25 ranks and `snippet` cuts
    with it); each group's other terms are checked per row. Without a driver the rows are scanned."""
    a = source.alias
    body = f"lower({source.body(a)})"
    words = [_fts5_words(group) for group in query.groups]
    grams = [" ".join(fts5_string(t.text) for t in group if _long(t)) for group in query.groups]
    driver = "conv_search_words" if all(words) else "conv_search_grams" if all(grams) else None
    driven = words if driver == "conv_search_words" else grams if driver else None
    single = len(query.groups) == 1

    conditions = []
    for index, group in enumerate(query.groups):
        sql: list[str] = []
        params: list[Any] = []
        for table, expression in (("conv_search_words", words[index]), ("conv_search_grams", grams[index])):
            if expression and not (single and table == driver):  # the driver's MATCH checks it already
                sql.append(f"d.id IN (SELECT rowid FROM {table} WHERE {table} MATCH %s)")
                params.append(expression)
        for term in group:
            if term.kind == "substring" and not _long(term):
                sql.append(f"instr({body}, lower(%s)) > 0")
                params.append(term.text)
        conditions.append((" AND ".join(sql), params))
    condition, condition_params = _any_of(conditions)

    doc = f"conv_search_doc d ON d.kind = '{source.kind}'"
    if driver and driven:
        return _select(source, Match(
            from_sql=f"{driver} JOIN {doc} AND d.id = {driver}.rowid JOIN {source.table} {a} ON {a}.id = d.ref_id",
            where=[f"{driver} MATCH %s", condition],
            where_params=[" OR ".join(f"({expression})" for expression in driven), *condition_params],
            rank=f"bm25({driver})", snippet=f"snippet({driver}, 0, %s, %s, '…', {SNIPPET_WORDS})",
            select_params=[MATCH_START, MATCH_END]), filters)
    first = next(t.text for group in query.groups for t in group)
    return _select(source, Match(
        from_sql=f"{source.table} {a} JOIN {doc} AND d.ref_id = {source.ref(a)}", where=[condition],
        where_params=condition_params, rank="0.0",
        snippet=f"substr({source.body(a)}, max(instr({body}, lower(%s)) - 60, 1), {SNIPPET_CHARS})",
        select_params=[first]), filters)


def _tsquery(term: Term) -> tuple[str, str]:
    """One term as a tsquery (SQL, parameter), stemmed by the 'english' configuration. A prefix is
    stemmed too, as FTS5's porter tokenizer stems it (`running*` is `run*`), but for a stop word,
    which 'english' would drop and FTS5 keeps."""
    if term.kind == "prefix":
        config = "simple" if term.text in STOP_WORDS else "english"
        return f"to_tsquery('{config}', %s)", f"'{term.text}':*"  # letters and digits only (terms.py)
    if term.kind == "phrase":
        return "phraseto_tsquery('english', %s)", term.text
    return "plainto_tsquery('english', %s)", term.text


def _postgresql_select(source: SearchSource, query: SearchQuery, filters: SearchFilters) -> tuple[str, list[Any]]:
    """tsvector with the 'english' configuration (GIN expression index) for words, phrases and
    prefixes; pg_trgm-indexed ILIKE for substrings."""
    text = source.body(source.alias)
    vector = f"to_tsvector('english', {text})"
    conditions = []
    tsqueries: list[tuple[str, list[Any]]] = []  # each group's words, for rank and headline
    for group in query.groups:
        parts = [_tsquery(term) for term in group if term.kind != "substring"]
        sql: list[str] = []
        params: list[Any] = []
        if parts:
            tsquery = " && ".join(sql_part for sql_part, _ in parts)
            tsqueries.append((f"({tsquery})", [param for _, param in parts]))
            sql.append(f"{vector} @@ ({tsquery})")
            params += [param for _, param in parts]
        for term in group:
            if term.kind == "substring":
                sql.append(f"{text} ILIKE %s")
                params.append(like_pattern(term.text))
        conditions.append((" AND ".join(sql), params))
    condition, condition_params = _any_of(conditions)
    match = Match(from_sql=f"{source.table} {source.alias}", where=[condition], where_params=condition_params,
                  rank="0.0",
                  snippet=f"substr({text}, greatest(strpos(lower({text}), lower(%s)) - 60, 1), {SNIPPET_CHARS})",
                  select_params=[next(t.text for group in query.groups for t in group)])
    if tsqueries:
        any_words = " || ".join(sql for sql, _ in tsqueries)
        any_params = [p for _, params in tsqueries for p in params]
        match.rank = f"-ts_rank_cd({vector}, {any_words})"
        # ts_headline drops what its parser reads as HTML tags: it is given the text with < and >
        # stood in for (snippet_html puts them back, escaped).
        match.snippet = (f"ts_headline('english', replace(replace({text}, '<', %s), '>', %s), {any_words}, "
                         f"'StartSel={MATCH_START}, StopSel={MATCH_END}, MaxWords={SNIPPET_WORDS + 8}, MinWords=6')")
        match.select_params = [*any_params, *TAG_STAND_INS, *any_params]
    return _select(source, match, filters)


_BACKENDS = {"sqlite": _sqlite_select, "postgresql": _postgresql_select}


def search_kinds_viewable(permits: Callable[[type[models.Model]], bool]) -> tuple[str, ...]:
    """The kinds whose model `permits` says may be viewed (a scope's or a person's model permissions)."""
    return tuple(source.kind for source in search_sources() if permits(search_source_model(source.kind)))


def search_source_model(kind: str) -> type[models.Model]:
    return apps.get_model(search_source(kind).model)


def search_validated(params: dict[str, Any], *, kinds: tuple[str, ...] | None = None) -> tuple[int, list[SearchHit]]:
    """`search_page` for parameters validated by the API's SearchParamsSerializer (q, kind, session, chat,
    role, type, created_after, created_before, page, page_size): the API's search and MCP's alike.
    Without a `kind`, the `kinds` given (None: every kind)."""
    filters = SearchFilters(
        kinds=(params["kind"],) if "kind" in params else kinds,
        session=params.get("session"), chat=params.get("chat"),
        roles=(params["role"],) if "role" in params else (), types=(params["type"],) if "type" in params else (),
        created_after=params.get("created_after"), created_before=params.get("created_before"))
    size = params["page_size"]
    return search_page(query=params.get("q", NO_QUERY), filters=filters, limit=size,
                       offset=(params["page"] - 1) * size)


def search_page(*, query: SearchQuery, filters: SearchFilters, limit: int, offset: int) -> tuple[int, list[SearchHit]]:
    """(total hits, one page of hits best first). Two queries; an empty query → no query at all."""
    sources = _kinds(filters)
    if not query or not sources:
        return 0, []
    search_index_pending()  # rows inserted since the last indexing (SQLite's deferred index)
    select = _BACKENDS[connection.vendor]
    parts = [select(source, query, filters) for source in sources]
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
        if isinstance(created_at, str):  # SQLite returns the stored text (UTC)
            created_at = parse_datetime(created_at)
        if created_at.tzinfo is None:  # … or, where it reads a column's declared type, a naive datetime
            created_at = created_at.replace(tzinfo=UTC)
        hits.append(SearchHit(kind=kind, id=ref_id, chat=chat, run=run, session=session, subtype=subtype,
                              created_at=created_at, rank=float(rank),
                              snippet=snippet_html(snippet or "", query.substrings)))
    return total, hits
