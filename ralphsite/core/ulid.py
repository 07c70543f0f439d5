"""ULID identifiers: 26-character Crockford base32 strings, sortable by creation time."""

from ulid import ULID

# What `ulid_normalize` reads as a ULID, spelled for a database (`ralphsite.core.db.lookups.ULIDShaped`):
# 26 characters of Crockford base32 in either case (no I, L, O, U), the first at most 7 (128 bits).
_FIRST, _REST = "[0-7]", "[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]"
ULID_GLOB = _FIRST + _REST * 25  # SQLite's GLOB: case-sensitive, one character per bracket, no anchors needed
ULID_REGEX = f"^{_FIRST}{_REST}{{25}}$"  # PostgreSQL's ~ (its `$` is the end of the string)


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
