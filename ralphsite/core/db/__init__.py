"""Database machinery: tuning and guards below the ORM, none of it a convention an app must follow.

* `config`: DATABASE_URL → Django settings, SQLite pragmas (WAL, busy timeout), PostgreSQL pool.
* `sqlite_backend`: Django's SQLite backend with writers queued on a file lock (4 concurrent
  appenders: 630-669 → 855-884 requests/s, p99 56-58 → 14-15 ms).
* `fast_paths`: the one switch (`RALPH_FAST_PATHS`) every piece that re-implements Django/DRF asks at run time.
* `precompiled`: detail lookups compiled once per query instead of per request (fast path `lookups`).
* `migration_operations`: index-only field changes that keep SQLite's triggers (AlterField rebuilds
  the table and drops them).
* `money_storage`: the migration steps keeping SQLite's USD columns in whole units (micro-dollars, then 1e-10 USD).
"""
