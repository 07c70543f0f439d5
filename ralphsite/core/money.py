"""Money: Decimal USD with 6 places everywhere; cents only where a seed reports them.

`MoneyField` is the one column type for USD. PostgreSQL keeps numeric(18, 6). SQLite has no exact
decimal: Django's DecimalField lands in a NUMERIC column as a float (0.076 plus nothing was stored as
0.0760000000000001, and a value from 1e12 on crashed Django's converter), so there the same column
holds whole micro-dollars as an INTEGER. Code sees a Decimal on both; SQL that computes on the column
itself uses `micro_usd(...)`, which is the column on SQLite and the column times 10^6 on PostgreSQL.
"""

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BigIntegerField, Func

USD_PLACES = 6
MICRO_USD = Decimal(1).scaleb(-USD_PLACES)
MICROS_PER_USD = 10**USD_PLACES
USD_MAX_DIGITS = 18
USD_MAX = Decimal("999999999999.999999")


# A usage-bearing write's `cost_usd` in the API (token usage, events, attempts, invocations): a cost
# sent, 0 included, is the call's; omitted or null, the call is priced (ledger_app.services.PriceList).
COST_SENT_OR_PRICED: dict[str, Any] = {
    "min_value": 0, "required": False, "allow_null": True,
    "help_text": "USD. Omit (or null) to have the call priced from its model's price in force at its time "
                 "(is_estimated); 0 is a cost of 0."}


def usd_to_cents(usd: Decimal | int) -> int:
    """One USD amount as whole cents, half away from zero like SQL's ROUND (Python's `round` would
    round halves to even)."""
    # Decimal(): a fresh model instance still holds its field default, the int 0.
    return int((Decimal(usd) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def usd_to_micros(usd: Decimal | int | str) -> int:
    return int((Decimal(usd) * MICROS_PER_USD).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def micros_to_usd(micros: int) -> Decimal:
    return Decimal(int(micros)).scaleb(-USD_PLACES).quantize(MICRO_USD)


def stores_micros(connection: BaseDatabaseWrapper) -> bool:
    """Whether this backend keeps USD columns as whole micro-dollars (SQLite) rather than numeric."""
    return connection.vendor == "sqlite"


class MoneyField(models.DecimalField):
    """USD, Decimal with 6 places, exact on every backend (see the module docstring).

    Deconstructed as a plain DecimalField: the column's declared type is the same on both backends
    (only what SQLite puts in it changes), so migrations see no schema change; the data moved to
    micro-dollars in `ralphsite.core.db.money_storage`. The internal type is not "DecimalField" so that
    SQLite's float converter and its CAST(... AS NUMERIC) wrapping never touch the integers.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max_digits", USD_MAX_DIGITS)
        kwargs.setdefault("decimal_places", USD_PLACES)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.DecimalField", args, kwargs

    def get_internal_type(self) -> str:
        return "MoneyField"

    def db_type(self, connection: BaseDatabaseWrapper) -> str:
        return connection.data_types["DecimalField"] % self.db_type_parameters(connection)

    def get_db_prep_value(self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False) -> Any:
        if not prepared:
            value = self.get_prep_value(value)
        if value is None or hasattr(value, "as_sql"):
            return value
        if stores_micros(connection):
            return usd_to_micros(value)
        return connection.ops.adapt_decimalfield_value(value, self.max_digits, self.decimal_places)

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Decimal | None:
        if value is None:
            return None
        if stores_micros(connection):
            # An integer column; an average (a float) is still micro-dollars.
            micros = value if isinstance(value, int) else Decimal(str(value))
            return (Decimal(micros) / MICROS_PER_USD).quantize(MICRO_USD, rounding=ROUND_HALF_UP)
        return Decimal(value)


class MicroUSD(Func):
    """A money column or sum as whole micro-dollars in SQL, exact on both backends: the stored integer
    on SQLite, ROUND(value * 10^6) as bigint on PostgreSQL."""

    template = f"CAST(ROUND(%(expressions)s * {MICROS_PER_USD}) AS bigint)"
    output_field = BigIntegerField()

    def as_sqlite(self, compiler: Any, connection: BaseDatabaseWrapper, **extra: Any) -> tuple[str, list[Any]]:
        return super().as_sql(compiler, connection, template="%(expressions)s", **extra)
