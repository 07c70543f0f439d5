"""Full-text search over what the apps declare searchable (`sources`): messages and memory
(conversations_app), ledger events (ledger_app) and task reports (sessions_app).

`terms` reads any user text as a query (phrases, OR, prefixes; the rest literal) and makes snippets
safe HTML, `schema` installs the per-backend index of each source (the apps' migrations),
`indexing` indexes SQLite's queue of new rows, `backends` runs one ranked, filtered, paginated query
per backend.
"""
