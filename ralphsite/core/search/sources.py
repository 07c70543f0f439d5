"""What the search finds: each app declares its searchable tables (`SearchSource`) and registers them
when it loads (`search_source_register` in its AppConfig.ready), so the one engine here searches
messages and memory (conversations_app), ledger events (ledger_app) and task reports (sessions_app)
without an app importing another. Each app's migrations install its own sources' index
(`schema.search_index_operation`), given their `SearchTable`s frozen as that migration knew them.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SearchTable:
    """What the index of one searchable table is made of (`schema`): its `kind`, its table and the text
    `columns` indexed, joined by spaces (a change to any of them re-indexes the row). A migration installs
    the index of the tables as it knew them, a frozen copy of its own: an app's live `SearchSource`
    may change later, and an old migration must not change with it."""

    kind: str
    table: str
    columns: tuple[str, ...]
    integer_id: bool = False  # the ledger's events have integer ids; the index keeps every id as text

    def body(self, alias: str = "") -> str:
        """The indexed text of one row: its columns joined by spaces (the same SQL on both backends)."""
        prefix = f"{alias}." if alias else ""
        return " || ' ' || ".join(f"{prefix}{c}" for c in self.columns)

    def ref(self, alias: str) -> str:
        """The row's id as text: how the index names it (compared as text, so the index's own
        (kind, ref_id) key is used)."""
        return f"CAST({alias}.id AS TEXT)" if self.integer_id else f"{alias}.id"


@dataclass(frozen=True, kw_only=True)
class SearchSource(SearchTable):
    """One searchable table, as the search queries it: the SQL fragments name the row by `alias` and
    the parents that `parents` joins: `session` (its session, for the scope and the filter), `chat` and
    `run` (NULL where the kind has none), `subtype` (what kind of message, observation, event or report it
    is) and `created` (its time). `filters` maps the optional search filters it supports (chat, role,
    type) to their column; `visible` is a condition every search applies (a tombstoned chat hides its
    messages). `model` is the app label and model whose view permission a search of this kind needs; a
    hit links to the admin page `page` names, of the hit's `page_key` (its id, or the chat a message is
    in)."""

    model: str
    alias: str
    session: str
    subtype: str
    parents: str = ""
    chat: str = "NULL"
    run: str = "NULL"
    created: str = "created_at"
    visible: str = ""
    filters: dict[str, str] = field(default_factory=dict, hash=False)
    page: str = ""  # default: the record's own admin page
    page_key: str = "id"

    @property
    def admin_page(self) -> str:
        app_label, model = self.model.split(".")
        return self.page or f"admin:{app_label}_{model.lower()}_change"


_SOURCES: dict[str, SearchSource] = {}


def search_source_register(*sources: SearchSource) -> None:
    for source in sources:
        _SOURCES[source.kind] = source  # by kind: registering twice adds nothing twice


def search_sources() -> tuple[SearchSource, ...]:
    """Every registered source, in the order the apps registered them."""
    return tuple(_SOURCES.values())


def search_kinds() -> tuple[str, ...]:
    return tuple(_SOURCES)


def search_source(kind: str) -> SearchSource:
    return _SOURCES[kind]
