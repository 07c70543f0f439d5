"""The one switch over the fast paths: `RALPH_FAST_PATHS` (on by default).

A fast path re-implements an ORM or DRF internal for speed (a query compiled once, a field copied
shallowly, an UPDATE written by hand). Each has a plain Django/DRF reference it must agree with;
with the switch off the reference runs instead, and the answers are the same: CI runs the whole
suite that way. Each piece decides once, when its module is imported or its class is built:

* `fast_path(reference)`: a function decorator, the fast function or its reference;
* `fast_path_bases(*mixins)`: the mixins a class puts first in its bases, or none.

The pieces: `ralphsite.db.precompiled` (lookups and INSERTs), `ralphsite.api.serializers` (field
templates, representation and row plans), `ralphsite.api.filters` (FilterSet copies and form
class), `ralphsite.api.authentication` (the token lookup), `ralphsite.api.routers` (URL
resolution) and the hand-written SQL of the hot writes (`ralphsite.activity.sessions_touch`,
`sessions_app.services` usage totals, `ledger_app.services` session check, `conversations_app.services`
chat tags and run message counts).
"""

from collections.abc import Callable
from typing import TypeVar

from django.conf import settings

F = TypeVar("F", bound=Callable)


def fast_paths_on() -> bool:
    return settings.RALPH_FAST_PATHS


def fast_path(reference: F) -> Callable[[F], F]:
    """The decorated function when the switch is on, else `reference` (the plain ORM version)."""

    def choose(fast: F) -> F:
        return fast if fast_paths_on() else reference

    return choose


def fast_path_bases(*mixins: type) -> tuple[type, ...]:
    """`mixins` when the switch is on, else nothing: `class X(*fast_path_bases(Fast), Plain)`."""
    return mixins if fast_paths_on() else ()
