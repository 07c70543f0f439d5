"""The ledger's searchable rows (ralphsite/core/search): an event's type, task key and message, what an
operator looks a failure up by (`TypeError` in a task_failed's message). Its JSON data and meta are not
indexed: their shapes are the emitters' own. Registered by the app's ready(); migration 0015 installs it."""

from ralphsite.core.search.sources import SearchSource

EVENTS = SearchSource(
    "event", "ledger_app_ledgerevent", ("type", "task_key", "message"), model="ledger_app.LedgerEvent", alias="e",
    session="e.session_id", subtype="e.type", created="timestamp", integer_id=True)
SEARCH_SOURCES = (EVENTS,)
