"""The conversations' searchable rows (ralphsite/core/search): message content, and observation content with
its tool name (memory). Registered by the app's ready(); its migrations install them."""

from ralphsite.core.search.sources import SearchSource

MESSAGES = SearchSource(
    "message", "conversations_app_message", ("content",), model="conversations_app.Message", alias="m",
    parents=" JOIN conversations_app_run r ON r.id = m.run_id JOIN conversations_app_chat c ON c.id = r.chat_id",
    chat="c.id", run="m.run_id", session="c.session_id", subtype="m.role",
    visible="c.is_deleted = FALSE",  # a tombstoned chat hides its messages
    filters={"chat": "c.id", "role": "m.role"},
    page="admin:conversations_app_chat_change", page_key="chat")  # a hit opens its conversation
OBSERVATIONS = SearchSource(
    "observation", "conversations_app_observation", ("content", "tool_name"), model="conversations_app.Observation",
    alias="o", session="o.session_id", subtype="o.type", filters={"type": "o.type"})
SEARCH_SOURCES = (MESSAGES, OBSERVATIONS)
