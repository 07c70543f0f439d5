"""Seed 003's fourteen views as ORM queries (same columns, same rounding), served at
`GET /api/v1/stats/<name>/` and filtered by `session`, `since` (inclusive) and `until` (exclusive).
See `framework` for the conventions; importing the view modules registers every view in `STATS`."""

from ledger_app.stats import ledger_views, session_views
from ledger_app.stats.framework import STATS, AllSources, Stat, StatFilters, cents, usd_units

__all__ = ["STATS", "AllSources", "Stat", "StatFilters", "cents", "ledger_views", "session_views", "usd_units"]
