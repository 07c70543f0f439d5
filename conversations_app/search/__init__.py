"""Full-text search over message content and observation content + tool names.

`terms` reads any user text as a query (phrases, OR, prefixes; the rest literal) and makes snippets
safe HTML, `schema` installs the per-backend index (migrations),
`backends` runs one ranked, filtered, paginated query per backend.
"""
