"""Money: Decimal USD with 6 places everywhere; cents only where a seed reports them."""

from decimal import ROUND_HALF_UP, Decimal


def usd_to_cents(usd: Decimal | int) -> int:
    """One USD amount as whole cents, half away from zero like SQL's ROUND (Python's `round` would
    round halves to even)."""
    # Decimal(): a fresh model instance still holds its field default, the int 0.
    return int((Decimal(usd) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))
