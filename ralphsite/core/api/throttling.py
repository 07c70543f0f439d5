"""Requests per API token per time window, counted in the database (`ThrottleWindow`).

The count is shared by every worker process and app host (they share the database), so a token's
limit holds across all of them: a process serves a request only out of requests it has reserved in
the shared row, and a reservation is one conditional UPSERT that never takes the count past the limit.
A process reserves a share of what is left (an eighth) at once, so a generous limit costs one statement
per token per process every few dozen requests, and near the limit one per request. Requests a
process reserved and did not serve are lost to the others until the window ends: the limit is never
exceeded, and may be reached a little early when many processes share one token. Over the limit the
answer is 429 `throttled` with `Retry-After` (the seconds until the window ends).

The rate is `RALPH_API_THROTTLE_RATE` (settings: `(requests, seconds)` or None for off). Requests whose token
is refused are counted the same way by client address (`refused_credentials_count`), so guessing tokens is
throttled too.
"""

import hashlib
import math
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection, transaction
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from ralphsite.core.models import ThrottleWindow

if TYPE_CHECKING:  # DRF imports this module while rest_framework.views is being imported
    from rest_framework.views import APIView

RESERVE_SHARE = 8  # a reservation takes 1/8 of what the window has left (at least one request)


@dataclass
class _Caller:
    """This process's view of one caller's current window."""

    window_start: int
    known: int = 0  # the shared count at the last reservation (every process's reservations)
    reserved: int = 0  # requests this process reserved and has not served yet


_callers: dict[str, _Caller] = {}
_callers_lock = threading.Lock()


def _reserve(key: str, window_start: int, requests: int, limit: int, *, new_window: bool) -> int | None:
    """Add `requests` to the window's shared count unless that takes it past `limit`: the new count,
    or None when it would (then nothing is added)."""
    quote = connection.ops.quote_name
    table = quote(ThrottleWindow._meta.db_table)
    key_column, window_column, count_column = (quote(ThrottleWindow._meta.get_field(name).column)
                                               for name in ("key", "window_start", "count"))
    with transaction.atomic(), connection.cursor() as cursor:
        if new_window:  # past windows are of no use to anyone
            cursor.execute(f"DELETE FROM {table} WHERE {window_column} < %s", [window_start])
        cursor.execute(f"INSERT INTO {table} ({key_column}, {window_column}, {count_column}) VALUES (%s, %s, %s) "
                       f"ON CONFLICT ({key_column}, {window_column}) DO UPDATE "
                       f"SET {count_column} = {table}.{count_column} + EXCLUDED.{count_column} "
                       f"WHERE {table}.{count_column} + EXCLUDED.{count_column} <= %s "
                       f"RETURNING {count_column}", [key, window_start, requests, limit])
        row = cursor.fetchone()
    return None if row is None else row[0]


def _admitted(key: str) -> int | None:
    """Count one request of the caller `key` in its window: None when the rate admits it, else the seconds until
    the window ends (`Retry-After`)."""
    rate = settings.RALPH_API_THROTTLE_RATE
    if rate is None:
        return None
    limit, period = rate
    now = time.time()
    window_start = int(now // period) * period
    with _callers_lock:
        caller = _callers.get(key)
        new_window = caller is None or caller.window_start != window_start
        if new_window:
            caller = _callers[key] = _Caller(window_start=window_start)
        if caller.reserved:
            caller.reserved -= 1
            return None
        full = caller.known >= limit  # reservations never pass the limit: nothing is left this window
        block = max(1, (limit - caller.known) // RESERVE_SHARE)
    total = None if full else _reserve(key, window_start, block, limit, new_window=new_window)
    if total is None and block > 1 and not full:  # less is left than this process asked for
        block, total = 1, _reserve(key, window_start, 1, limit, new_window=False)
    with _callers_lock:
        if total is None:
            caller.known = limit
        else:
            caller.known = max(caller.known, total)
            caller.reserved += block - 1  # this request takes one of them
    if total is not None:
        return None
    return max(1, math.ceil(window_start + period - now))


class TokenRateThrottle(BaseThrottle):
    """Throttle by the request's token (or, for the admin's session, its user)."""

    def __init__(self) -> None:
        self.retry_after = 0

    def allow_request(self, request: Request, view: "APIView") -> bool:
        key = self._key(request)
        retry_after = None if key is None else _admitted(key)
        if retry_after is None:
            return True
        self.retry_after = retry_after
        return False

    def wait(self) -> float:
        return self.retry_after

    @staticmethod
    def _key(request: Request) -> str | None:
        # request.auth is the token's Scope (ralphsite.core.access), None for the admin's session login.
        token = getattr(request.auth, "token_id", None)
        if token is not None:
            return hashlib.sha256(f"token:{token}".encode()).hexdigest()
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return hashlib.sha256(f"user:{user.pk}".encode()).hexdigest()
        return None


def refused_credentials_count(request: Request) -> None:
    """Count a request whose token was refused (unknown, malformed, expired) against its client address, at the
    same rate: token guessing is throttled like any caller. Past the rate it is 429 `throttled` (raised here),
    before that the 401 it was. Only refused requests count, so callers behind one address with good tokens
    are not throttled by it."""
    address = request.META.get("REMOTE_ADDR") or "unknown"
    retry_after = _admitted(hashlib.sha256(f"refused-token-from:{address}".encode()).hexdigest())
    if retry_after is not None:
        raise exceptions.Throttled(wait=retry_after)
