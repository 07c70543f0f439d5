"""The one switch over the fast paths: `RALPH_FAST_PATHS` (on by default).

A fast path re-implements an ORM or DRF internal for speed (a query compiled once, a field copied
shallowly, a token read by hand-written SQL). Each lives in one class or function next to the plain
Django/DRF reference it must agree with, and asks `fast_paths_on(piece)` each time it runs (the
settings are read at call time, so a test flips a piece with pytest-django's `settings` fixture);
with the switch off the reference runs instead, and the answers are the same:
`tests/ralphsite/test_fast_paths.py` compares the two on every routed serializer, detail and list.

The pieces (`PIECES`): `lookups` (`ralphsite.core.db.precompiled.PrecompiledLookup`: detail lookups and
the message append's run), `serializers` (field templates, representation and row plans,
`ralphsite.core.api.serializers.RalphModelSerializer`) and `token` (`ralphsite.core.api.authentication`);
each module states its measured gain. `RALPH_FAST_PATHS_OFF` (a comma-separated list of pieces) turns
single pieces off, for `make bench BENCH_ARGS=--fast-paths`.

Kept only a piece that wins more than 20 % at p50 on the operations it serves (issue #25), measured on
2026-11-28 on a quiet machine (interleaved A/B on SQLite, `tests/benchmarks/README.md`): `serializers`
1.37-1.67 and `token` 1.43 off/on; `lookups` 1.20-1.23, at the threshold, kept because deleting it would
cost get chat about 17 %. Deleted then: `inserts` (an INSERT built once per model and run with
`executemany`), 0.90-1.02 off/on on insert chat, insert message, append event and a 1,000-event bulk
append; the callers use `save()` and `bulk_create`.

Measured and deleted on 2026-11-25 (their off/on p50 ratio within the run-to-run noise, interleaved A/B
on SQLite, three runs at load 9-11 on the 2-vCPU AMD VM): the API resolver's dict lookup over Django's
includes (0.36, 0.98, 1.09 on get chat), the FilterSet's shallow filter copies and cached form class
(1.16, 1.02, 0.83 on list 100) and the hand-written SQL of the hot writes (session touch, usage totals,
the ledger's session check, chat tags, run message counts: 0.53 to 1.55 across insert chat, insert
message and append event, in both directions).
"""

from django.conf import settings

PIECES = ("lookups", "serializers", "token")


def fast_paths_on(piece: str) -> bool:
    """Whether `piece` runs its fast path now: read from the settings on every call."""
    if piece not in PIECES:
        raise ValueError(f"no fast path {piece!r}")
    return settings.RALPH_FAST_PATHS and piece not in settings.RALPH_FAST_PATHS_OFF
