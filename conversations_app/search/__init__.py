"""Full-text search over message content and observation content + tool names.

`terms` turns any user text into safe terms, `schema` installs the per-backend index (migrations),
`backends` runs one ranked, filtered, paginated query per backend.
"""
