"""Telling "the database cannot be reached" from "a query failed".

A request that finds the database down (refused, timed out, the pool empty after its timeout, a
connection that died) is answered 503 `database_unavailable` with Retry-After, quickly
(`RALPH_DB_CONNECT_TIMEOUT`); one whose query failed keeps its own answer (409, 400, 503 `database_busy`).
"""

from django.db import InterfaceError, OperationalError

UNAVAILABLE_CODE = "database_unavailable"
UNAVAILABLE_MESSAGE = "The database cannot be reached; retry later."
# PostgreSQL: the server is shutting down, crashed, or not accepting connections yet.
_PG_GOING_AWAY = {"57P01", "57P02", "57P03"}


# PostgreSQL: a deadlock, or a serialization failure, rolled the transaction back; retrying it succeeds.
_PG_ROLLED_BACK_BY_A_RACE = {"40P01", "40001"}


def database_deadlock(exc: BaseException) -> bool:
    """Whether a concurrent transaction's deadlock (or serialization conflict) rolled this one back. Its
    message says "blocked by process …", which must not be read as SQLite's "database is locked"."""
    return getattr(exc.__cause__, "sqlstate", None) in _PG_ROLLED_BACK_BY_A_RACE


def database_unavailable(exc: BaseException) -> bool:
    if isinstance(exc, InterfaceError):  # "connection already closed"
        return True
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    if type(cause).__module__.startswith("psycopg"):  # psycopg and psycopg_pool (PoolTimeout)
        sqlstate = getattr(cause, "sqlstate", None)
        return sqlstate is None or sqlstate.startswith("08") or sqlstate in _PG_GOING_AWAY
    return "unable to open database file" in str(exc)  # SQLite: the file or its directory is gone
