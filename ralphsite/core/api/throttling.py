"""Requests per API token per time window, counted in the database (`ThrottleWindow`).

The count is shared by every worker process and app host (they share the database), so a token's
limit holds across all of them. Each process adds its own requests to the shared row with one
UPSERT, at most every `SYNC_SECONDS` per caller while the window's count is far from the limit, and
on every request once it is within a tenth of it: a generous limit costs one statement per token per
process per half second, and near the limit the count is exact. Over the limit the answer is 429
`throttled` with `Retry-After` (the seconds until the window ends).

The rate is `RALPH_API_THROTTLE_RATE` (settings: `(requests, seconds)` or None for off).
"""

import hashlib
import math
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection, transaction
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from ralphsite.core.models import ThrottleWindow

if TYPE_CHECKING:  # DRF imports this module while rest_framework.views is being imported
    from rest_framework.views import APIView

SYNC_SECONDS = 0.5


@dataclass
class _Caller:
    """This process's view of one caller's current window."""

    window_start: int
    known: int = 0  # the shared count at the last sync (every process's requests)
    pending: int = 0  # this process's requests since
    synced_at: float = 0.0


_callers: dict[str, _Caller] = {}
_callers_lock = threading.Lock()


def _shared_add(key: str, window_start: int, requests: int, *, new_window: bool) -> int:
    """Add this process's requests to the shared count; the window's total is returned."""
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
                       f"RETURNING {count_column}", [key, window_start, requests])
        return cursor.fetchone()[0]


class TokenRateThrottle(BaseThrottle):
    """Throttle by the request's token (or, for the admin's session, its user)."""

    def __init__(self) -> None:
        self.retry_after = 0

    def allow_request(self, request: Request, view: "APIView") -> bool:
        rate = settings.RALPH_API_THROTTLE_RATE
        key = self._key(request)
        if rate is None or key is None:
            return True
        limit, period = rate
        now = time.time()
        window_start = int(now // period) * period
        with _callers_lock:
            caller = _callers.get(key)
            new_window = caller is None or caller.window_start != window_start
            if new_window:
                caller = _callers[key] = _Caller(window_start=window_start)
            caller.pending += 1
            must_sync = new_window or caller.known + caller.pending >= limit * 0.9 \
                or now - caller.synced_at >= SYNC_SECONDS
            requests = caller.pending if must_sync else 0
            if must_sync:
                caller.pending, caller.synced_at = 0, now
        if must_sync:
            total = _shared_add(key, window_start, requests, new_window=new_window)
            with _callers_lock:
                caller.known = max(caller.known, total)
        if caller.known + caller.pending <= limit:
            return True
        self.retry_after = max(1, math.ceil(window_start + period - now))
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
