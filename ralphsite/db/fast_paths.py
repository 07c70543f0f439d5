"""The one switch over the fast paths: `RALPH_FAST_PATHS` (on by default).

A fast path re-implements an ORM or DRF internal for speed (a query compiled once, a field copied
shallowly, an UPDATE written by hand). Each has a plain Django/DRF reference it must agree with;
with the switch off the reference runs instead, and the answers are the same: CI runs the whole
suite that way. Each piece decides once, when its module is imported or its class is built:

* `fast_path(piece, reference)`: a function decorator, the fast function or its reference;
* `fast_path_bases(piece, *mixins)`: the mixins a class puts first in its bases, or none;
* `fast_paths_on(piece)`: the decision itself.

The pieces (`PIECES`): `lookups` (`ralphsite.db.precompiled.precompiled_lookup`: detail lookups and the
message append's run), `inserts` (`ralphsite.db.precompiled.instances_insert`), `serializers` (field
templates, representation and row plans, `ralphsite.api.serializers`), `filtersets` (FilterSet copies
and form class, `ralphsite.api.filters`), `token` (`ralphsite.api.authentication`), `resolver` (URL
resolution, `ralphsite.api.routers`) and `hot_sql` (the hand-written SQL of the hot writes:
`ralphsite.activity` session touch, `sessions_app.services` usage totals, `ledger_app.services` session
check, `conversations_app.services` chat tags and run message counts). `RALPH_FAST_PATHS_OFF` (a
comma-separated list of pieces) turns single pieces off, for `make bench BENCH_ARGS=--fast-paths`.

`hot_sql` is measured here (the other pieces in their modules): GAINS_HOT_SQL. It touches no private
name beyond `_meta` (`db_table`, field columns) and the backend's `ops.quote_name` and
`adapt_datetimefield_value`.
"""

from collections.abc import Callable
from typing import TypeVar

from django.conf import settings

F = TypeVar("F", bound=Callable)

PIECES = ("lookups", "inserts", "serializers", "filtersets", "token", "resolver", "hot_sql")


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
