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


def database_config(*, url: str, data_dir: Path, pool_size: int, connect_timeout: int = 3) -> dict[str, Any]:
    """`connect_timeout` (seconds, PostgreSQL) bounds how long a request waits for an unreachable
    database: the TCP connect, a pooled connection, unacknowledged sends on a dead one."""
    config: dict[str, Any] = dj_database_url.parse(url)
    engine = config["ENGINE"]
    if engine == "django.db.backends.sqlite3":
        # Django's backend with writers queued on a file lock (ralphsite/core/db/sqlite_backend/base.py).
        config["ENGINE"] = "ralphsite.core.db.sqlite_backend"
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
        # libpq: give up connecting after connect_timeout, and drop a connection whose sends stay
        # unacknowledged that long (a database host that vanished), instead of TCP's minutes.
        config["OPTIONS"] = {"connect_timeout": connect_timeout, "tcp_user_timeout": connect_timeout * 1000,
                             "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
        # Health checks: with a pool, Django has psycopg_pool check each connection (one round trip) as
        # it leaves the pool; without, before reuse. Connections that died while the database was away
        # are replaced, not used.
        config["CONN_HEALTH_CHECKS"] = True
        if pool_size > 0:
            # psycopg_pool per process; Django requires CONN_MAX_AGE=0 with a pool. A request waits at
            # most connect_timeout for a connection. The pool gives up reconnecting after as long (its
            # retries back off exponentially: 1, 2, 4 s…), so once the database is back the next request
            # starts a fresh attempt instead of waiting out a long backoff.
            config["OPTIONS"]["pool"] = {"min_size": 1, "max_size": pool_size, "timeout": connect_timeout,
                                         "reconnect_timeout": connect_timeout}
            config["CONN_MAX_AGE"] = 0
        else:
            config["CONN_MAX_AGE"] = None
    else:
        raise ImproperlyConfigured(f"DATABASE_URL engine {engine!r} is not supported (use sqlite or postgres)")
    return config
