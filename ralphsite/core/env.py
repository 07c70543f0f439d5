"""Strict readers for settings that come from the environment.

Each helper fails loudly (ImproperlyConfigured) on a value it cannot parse instead of
silently falling back to a default: a typo in production must stop the server, not change it.
"""

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_choices(name: str, allowed: tuple[str, ...]) -> frozenset[str]:
    """A comma-separated subset of `allowed` (empty by default); any other name stops the server."""
    chosen = frozenset(env_list(name, []))
    unknown = sorted(chosen - set(allowed))
    if unknown:
        raise ImproperlyConfigured(f"{name}: unknown {', '.join(unknown)} (allowed: {', '.join(allowed)})")
    return chosen


_PERIOD_SECONDS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600,
                   "d": 86400, "day": 86400}


def env_rate(name: str, default: str) -> tuple[int, int] | None:
    """`600/min` → (600 requests, 60 seconds); `off` → None."""
    raw = os.environ.get(name, default).strip()
    if raw.lower() == "off":
        return None
    count, _, period = raw.partition("/")
    if not count.isdigit() or int(count) < 1 or period.lower() not in _PERIOD_SECONDS:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a rate like 600/min (per s, min, hour or day) or off")
    return int(count), _PERIOD_SECONDS[period.lower()]


def env_duration(name: str, default: str) -> int | None:
    """`24h`, `30min`, `7d`, `90s` → seconds; `off` (or empty) → None."""
    raw = os.environ.get(name, default).strip()
    if raw.lower() in ("off", ""):
        return None
    number = raw.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = raw[len(number):].strip().lower() or "s"
    if not number.strip().isdigit() or int(number) < 1 or unit not in _PERIOD_SECONDS:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a duration like 24h, 30min, 7d or 90s, or off")
    return int(number) * _PERIOD_SECONDS[unit]
