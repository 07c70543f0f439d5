"""The one book of usage, as the apps that do not import the ledger read it: the tokens and cost of the
calls booked against a record of theirs (a conversation's run: `source` "run" and the run's id).

ledger_app keeps the book (TokenUsage) and installs the reader when it loads (`usage_book_install` in its
AppConfig.ready); conversations_app reads it (a run's tokens and cost) without importing the ledger.
"""

from collections.abc import Callable, Collection
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class BookedUsage:
    """The sums of the calls booked against one record."""

    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal


UsageReader = Callable[[str, Collection[str]], dict[str, BookedUsage]]
_reader: UsageReader | None = None


def usage_book_install(reader: UsageReader) -> None:
    global _reader
    _reader = reader


def usage_booked(*, source: str, source_ids: Collection[str]) -> dict[str, BookedUsage]:
    """The usage booked against each of these records of `source` (one query); a record with none is absent."""
    if _reader is None:
        raise ImproperlyConfigured("No usage book is installed: ledger_app must be in INSTALLED_APPS.")
    return _reader(source, source_ids) if source_ids else {}
