"""The one switch over the fast paths: `RALPH_FAST_PATHS` (on by default).

A fast path re-implements an ORM or DRF internal for speed (a query compiled once, a field copied
shallowly, a token read by hand-written SQL). Each has a plain Django/DRF reference it must agree with;
with the switch off the reference runs instead, and the answers are the same: CI runs the whole
suite that way. Each piece decides once, when its module is imported or its class is built:

* `fast_path(piece, reference)`: a function decorator, the fast function or its reference;
* `fast_path_bases(piece, *mixins)`: the mixins a class puts first in its bases, or none;
* `fast_paths_on(piece)`: the decision itself.

The pieces (`PIECES`): `lookups` (`ralphsite.core.db.precompiled.precompiled_lookup`: detail lookups and the
message append's run), `inserts` (`ralphsite.core.db.precompiled.instances_insert`), `serializers` (field
templates, representation and row plans, `ralphsite.core.api.serializers`) and `token`
(`ralphsite.core.api.authentication`); each module states its measured gain. `RALPH_FAST_PATHS_OFF` (a
comma-separated list of pieces) turns single pieces off, for `make bench BENCH_ARGS=--fast-paths`.

Measured and deleted on 2026-11-25 (their off/on p50 ratio within the run-to-run noise, interleaved A/B
on SQLite, three runs at load 9-11 on the 2-vCPU AMD VM; `tests/benchmarks/README.md`): the API
resolver's dict lookup over Django's includes (0.36, 0.98, 1.09 on get chat), the FilterSet's shallow
filter copies and cached form class (1.16, 1.02, 0.83 on list 100) and the hand-written SQL of the hot
writes (session touch, usage totals, the ledger's session check, chat tags, run message counts: 0.53 to
1.55 across insert chat, insert message and append event, in both directions).
"""

from collections.abc import Callable
from typing import TypeVar

from django.conf import settings

F = TypeVar("F", bound=Callable)

PIECES = ("lookups", "inserts", "serializers", "token")


def fast_paths_on(piece: str) -> bool:
    if piece not in PIECES:
        raise ValueError(f"no fast path {piece!r}")
    return settings.RALPH_FAST_PATHS and piece not in settings.RALPH_FAST_PATHS_OFF


def fast_path(piece: str, reference: F) -> Callable[[F], F]:
    """The decorated function when the piece is on, else `reference` (the plain ORM version)."""

    def choose(fast: F) -> F:
        return fast if fast_paths_on(piece) else reference

    return choose


def fast_path_bases(piece: str, *mixins: type) -> tuple[type, ...]:
    """`mixins` when the piece is on, else nothing: `class X(*fast_path_bases("piece", Fast), Plain)`."""
    return mixins if fast_paths_on(piece) else ()
