"""Money: Decimal USD with 10 places everywhere; cents only where a seed reports them.

`MoneyField` is the one column type for USD: 10 decimal places, 1e-10 USD (a price of $0.0001 per
million tokens, one token of it; ralphy's REAL per-call costs such as 1.5e-07 are kept as they are).
PostgreSQL keeps numeric(22, 10), up to 999,999,999,999.9999999999 USD. SQLite has no exact decimal:
Django's DecimalField lands in a NUMERIC column as a float (0.076 plus nothing was stored as
0.0760000000000001, and a value from 1e12 on crashed Django's converter), so there the same column
holds whole units of 1e-10 USD as a 64-bit INTEGER, which tops a value (and a session's total) out at
922,337,203.6854775807 USD (`usd_max`); a larger amount is a 400 (`max_value`), never an overflow.
Code sees a Decimal on both; SQL that sums the column uses `UsdUnits(Sum(...))`: whole 1e-10 USD on
both backends. A sum across sessions may pass 2^63 units on SQLite: there it is the exact aggregate
`usd_units_sum` (`UsdUnitsSum`, registered on each connection), never SQLite's overflowing SUM.

Text (`usd_text`, the API's and the ledger chain's form): six decimals at least, as before the places
grew, more only when the amount has them (`"0.250000"`, `"0.00000015"`). The ledger's hash chain
hashes this text, so it never changes for an amount of six places or fewer.
"""

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.core.validators import MaxValueValidator
from django.db import connection as default_connection
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BigIntegerField, Func
from django.utils.functional import cached_property

USD_PLACES = 10
USD_UNIT = Decimal(1).scaleb(-USD_PLACES)
UNITS_PER_USD = 10**USD_PLACES
USD_MAX_DIGITS = 22
USD_MAX = Decimal(10**(USD_MAX_DIGITS - USD_PLACES)) - USD_UNIT  # what numeric(22, 10) holds
SQLITE_USD_MAX = Decimal(2**63 - 1).scaleb(-USD_PLACES)  # whole units in SQLite's 64-bit INTEGER
USD_MAX_ANY_BACKEND = min(USD_MAX, SQLITE_USD_MAX)  # an amount every backend's money columns hold
USD_TEXT_MIN_PLACES = 6
_TEXT_MIN_UNIT = Decimal(1).scaleb(-USD_TEXT_MIN_PLACES)


# A usage-bearing write's `cost_usd` in the API (token usage, events, attempts, invocations): a cost
# sent, 0 included, is the call's; omitted or null, the call is priced (ledger_app.services.PriceList).
COST_SENT_OR_PRICED: dict[str, Any] = {
    "min_value": 0, "required": False, "allow_null": True,
    "help_text": "USD. Omit (or null) to have the call priced from its model's price in force at its time "
                 "(is_estimated); 0 is a cost of 0."}


def usd(value: Decimal | int | float | str) -> Decimal:
    """An amount with the places the columns keep (half away from zero, as numeric rounds); a float
    through its shortest decimal text, not its binary expansion; -0 is 0, as the columns hand it back."""
    amount = Decimal(repr(value) if isinstance(value, float) else value).quantize(USD_UNIT, rounding=ROUND_HALF_UP)
    return amount if amount else amount.copy_abs()


def usd_shown(value: Decimal | int | float | str) -> Decimal:
    """The amount with six places, or more only when it has them (at most `USD_PLACES`): what the
    columns hand back, so a 6-place amount reads (and prints) as it did before the places grew."""
    amount = usd(value)
    six = amount.quantize(_TEXT_MIN_UNIT)
    return six if six == amount else amount.normalize()


def usd_text(value: Decimal | int | float | str) -> str:
    """The amount as text, never in exponent form (`"0.000000"`, `"0.250000"`, `"0.00000015"`): the
    API's form and the ledger chain's, which hashes it, so it never changes for 6 places or fewer."""
    return f"{usd_shown(value):f}"


def usd_max(connection: BaseDatabaseWrapper | None = None) -> Decimal:
    """The largest amount (and session total) the backend's money columns hold."""
    return SQLITE_USD_MAX if stores_units(connection or default_connection) else USD_MAX


def usd_to_cents(usd: Decimal | int) -> int:
    """One USD amount as whole cents, half away from zero like SQL's ROUND (Python's `round` would
    round halves to even)."""
    # Decimal(): a fresh model instance still holds its field default, the int 0.
    return int((Decimal(usd) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def usd_to_units(usd: Decimal | int | str) -> int:
    """An amount as whole 1e-10 USD (what SQLite's money columns hold)."""
    return int((Decimal(usd) * UNITS_PER_USD).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def units_to_usd(units: int | Decimal) -> Decimal:
    return Decimal(int(units)).scaleb(-USD_PLACES).quantize(USD_UNIT)


def stores_units(connection: BaseDatabaseWrapper) -> bool:
    """Whether this backend keeps USD columns as whole 1e-10 USD (SQLite) rather than numeric."""
    return connection.vendor == "sqlite"


class MoneyField(models.DecimalField):
    """USD, Decimal with `USD_PLACES` places, exact on every backend (see the module docstring).

    Deconstructed as a plain DecimalField: the column's declared type is the same on both backends
    (only what SQLite puts in it changes), so migrations see only the places; SQLite's data moves to
    whole units in `ralphsite.core.db.money_storage`. The internal type is not "DecimalField" so that
    SQLite's float converter and its CAST(... AS NUMERIC) wrapping never touch the integers.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max_digits", USD_MAX_DIGITS)
        kwargs.setdefault("decimal_places", USD_PLACES)
        super().__init__(*args, **kwargs)

    @cached_property
    def validators(self) -> list[Any]:
        """The field's own, and at most what the backend's columns hold (`usd_max`): model validation (the
        admin's forms) and the API's serializers (DRF reads it as `max_value`) refuse a larger amount with
        a 400, never an overflow."""
        return [*super().validators, MaxValueValidator(usd_max())]

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
        if stores_units(connection):
            return usd_to_units(value)
        return connection.ops.adapt_decimalfield_value(value, self.max_digits, self.decimal_places)

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Decimal | None:
        if value is None:
            return None
        if stores_units(connection):
            # An integer column; an average (a float) is still in units.
            units = value if isinstance(value, int) else Decimal(str(value))
            return usd_shown(Decimal(units) / UNITS_PER_USD)
        return usd_shown(value)


EXACT_SUM = "usd_units_sum"  # SQLite's name for `UsdUnitsSum`


class UsdUnitsSum:
    """SQLite aggregate `usd_units_sum(units, unit)`: the exact sum of whole 1e-10 USD (Python's integers, which
    never overflow, where SQLite's SUM fails past 2^63) in whole `unit`s, half away from zero (unit 1: as is);
    NULL over no value. An integer when it fits SQLite's, else its decimal text (read back as an int: the
    expressions' output field is an integer)."""

    def __init__(self) -> None:
        self.total: int | None = None
        self.unit = 1

    def step(self, units: int | None, unit: int) -> None:
        if units is not None:
            self.total, self.unit = (self.total or 0) + int(units), unit

    def finalize(self) -> int | str | None:
        if self.total is None:
            return None
        half_up = abs(self.total) + self.unit // 2
        rounded = half_up // self.unit if self.total >= 0 else -(half_up // self.unit)
        return rounded if -2**63 <= rounded < 2**63 else str(rounded)


def _exact_sum_sql(summed: Func, compiler: Any, unit: int) -> tuple[str, list[Any]]:
    """`usd_units_sum(<the Sum's argument>, unit)`: the Sum a money expression wraps, exact on SQLite."""
    if summed.filter is not None or summed.distinct:
        raise ValueError("a money sum is a plain Sum(...)")
    argument, params = compiler.compile(summed.source_expressions[0])
    return f"{EXACT_SUM}({argument}, {unit})", list(params)


class UsdUnits(Func):
    """A money sum (`UsdUnits(Sum("cost_usd"))`) as whole 1e-10 USD in SQL, exact on both backends: the
    exact aggregate on SQLite's integers (`UsdUnitsSum`), ROUND(SUM * 10^10) in numeric on PostgreSQL (no
    bigint cast: a sum may pass 9.2e8 USD there). Python reads an int."""

    template = f"ROUND(%(expressions)s * {UNITS_PER_USD})"
    output_field = BigIntegerField()

    def as_sqlite(self, compiler: Any, connection: BaseDatabaseWrapper, **extra: Any) -> tuple[str, list[Any]]:
        return _exact_sum_sql(self.source_expressions[0], compiler, unit=1)


class UsdRounded(Func):
    """A money sum rounded to `places` decimals, half away from zero, as an integer count of
    10^-places USD (`ROUND(SUM(cost_usd) * 100)`, the seeds' cents): the exact aggregate on SQLite's
    units (`UsdUnitsSum`), numeric ROUND on PostgreSQL; both give the same integer."""

    output_field = BigIntegerField()

    def __init__(self, expression: Any, *, places: int, **extra: Any) -> None:
        self.places = places
        super().__init__(expression, **extra)

    def as_sql(self, compiler: Any, connection: BaseDatabaseWrapper, **extra: Any) -> tuple[str, list[Any]]:
        template = f"CAST(ROUND(%(expressions)s, {self.places}) * {10**self.places} AS bigint)"
        return super().as_sql(compiler, connection, template=template, **extra)

    def as_sqlite(self, compiler: Any, connection: BaseDatabaseWrapper, **extra: Any) -> tuple[str, list[Any]]:
        return _exact_sum_sql(self.source_expressions[0], compiler, unit=10 ** (USD_PLACES - self.places))
