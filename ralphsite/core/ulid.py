"""ULID identifiers: 26-character Crockford base32 strings, sortable by creation time."""

from ulid import ULID


def ulid_new() -> str:
    return str(ULID())


def ulid_normalize(value: str) -> str:
    """Return the canonical (upper-case) form of `value`, or raise ValueError if it is no ULID."""
    if not isinstance(value, str) or len(value) != 26:
        raise ValueError("a ULID is a 26-character Crockford base32 string")
    return str(ULID.from_str(value.upper()))


def ulid_derived(namespace: str, key: str) -> str:
    """The same ULID for the same (namespace, key), always: the id of a row recorded from an outside record that
    may be reported twice (a Claude Code transcript entry's uuid), so the second report finds the first row."""
    import hashlib

    return str(ULID.from_bytes(hashlib.sha256(f"{namespace}\x00{key}".encode()).digest()[:16]))
