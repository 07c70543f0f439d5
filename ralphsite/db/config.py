"""Database configuration: SQLite by default, PostgreSQL through DATABASE_URL."""

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

# Pragmas applied to every SQLite connection. WAL lets readers run beside the writer;
# synchronous=NORMAL is crash-safe in WAL mode; busy_timeout makes writers queue instead of
# failing with "database is locked"; journal_size_limit truncates the write-ahead log back to 64 MiB
# once a checkpoint has emptied it (see ralphsite/server/upkeep.py).
SQLITE_INIT_COMMAND = (
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "PRAGMA busy_timeout=30000;"
    "PRAGMA foreign_keys=ON;"
    "PRAGMA temp_store=MEMORY;"
    "PRAGMA cache_size=-20000;"
    "PRAGMA journal_size_limit=67108864;"
)


def database_config(*, url: str, data_dir: Path, pool_size: int) -> dict[str, Any]:
    config: dict[str, Any] = dj_database_url.parse(url)
    engine = config["ENGINE"]
    if engine == "django.db.backends.sqlite3":
        # Django's backend with writers queued on a file lock (ralphsite/db/sqlite_backend/base.py).
        config["ENGINE"] = "ralphsite.db.sqlite_backend"
        config["OPTIONS"] = {
            # IMMEDIATE takes the write lock at BEGIN, so concurrent writers wait on busy_timeout
            # instead of failing when a deferred read transaction tries to upgrade to a write.
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": SQLITE_INIT_COMMAND,
        }
        config["CONN_MAX_AGE"] = None
        # Tests use a real file (never shared-cache memory) so threads get WAL semantics too; one
        # per process, so two test runs on one data dir never delete each other's database.
        config["TEST"] = {"NAME": str(data_dir / f"test_ralph_{os.getpid()}.db")}
    elif engine in ("django.db.backends.postgresql", "django.db.backends.postgresql_psycopg2"):
        config["ENGINE"] = "django.db.backends.postgresql"
        if pool_size > 0:
            # psycopg_pool per process; Django requires CONN_MAX_AGE=0 with a pool.
            config["OPTIONS"] = {"pool": {"min_size": 1, "max_size": pool_size, "timeout": 30}}
            config["CONN_MAX_AGE"] = 0
        else:
            config["CONN_MAX_AGE"] = None
            config["CONN_HEALTH_CHECKS"] = True
    else:
        raise ImproperlyConfigured(f"DATABASE_URL engine {engine!r} is not supported (use sqlite or postgres)")
    return config
