"""Model fields shared by every app."""

from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from ralphsite.core.ulid import ulid_new, ulid_normalize

# The largest values integer columns hold on every backend (PostgreSQL's integer and bigint). Inputs
# are bounded by these, so an overflow is a 400, never a database error.
INTEGER_MIN, INTEGER_MAX = -(2**31), 2**31 - 1
BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1
# PostgreSQL's integer column ranges by field type, held on every backend (SQLite would store 2**40 in an
# "integer" column PostgreSQL refuses): the API's fields and the services' model validation both read them.
_INTEGER_RANGES = {
    "SmallIntegerField": (-(2**15), 2**15 - 1),
    "PositiveSmallIntegerField": (0, 2**15 - 1),
    "IntegerField": (INTEGER_MIN, INTEGER_MAX),
    "PositiveIntegerField": (0, INTEGER_MAX),
    "BigIntegerField": (BIGINT_MIN, BIGINT_MAX),
    "PositiveBigIntegerField": (0, BIGINT_MAX),
}


def integer_range(model_field: models.Field) -> tuple[int, int] | None:
    """The (lowest, highest) value an integer column holds on every backend; None for any other field."""
    return _INTEGER_RANGES.get(model_field.get_internal_type())


def validate_ulid(value: str) -> None:
    try:
        ulid_normalize(value)
    except ValueError as exc:
        raise ValidationError(f"{value!r} is not a valid ULID: {exc}", code="invalid_ulid") from None


class ULIDField(models.CharField):
    """A ULID stored as its 26-character string (sortable as text on every backend)."""

    default_validators = [validate_ulid]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["max_length"] = 26
        super().__init__(*args, **kwargs)

    def to_python(self, value: Any) -> Any:
        # Crockford base32 is case-insensitive: lookups (URLs, filters, foreign keys) and writes all
        # use the canonical upper case, so an agent that lower-cases an id still finds its row.
        value = super().to_python(value)
        return value.upper() if isinstance(value, str) else value

    def deconstruct(self) -> tuple[Any, ...]:
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("max_length", None)
        return name, path, args, kwargs


class ULIDPrimaryKeyField(ULIDField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("primary_key", True)
        kwargs.setdefault("default", ulid_new)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)


def history_session_field(*, related_name: str) -> models.ForeignKey:
    """The session of a history row that seed 003 keeps without a foreign key (token usage, error log,
    dead letters, checkpoints, rollbacks): deleting the session leaves the row, its session null."""
    return models.ForeignKey("sessions_app.Session", on_delete=models.SET_NULL, null=True, blank=True,
                             related_name=related_name, db_index=False)


def token_count_field(*, unknown_is_null: bool = False) -> models.BigIntegerField:
    """A count of tokens a client reports (never negative: the ledger's usage book sums them). `unknown_is_null`:
    null where the seed's column is (a count nobody reported, which the seed's SUMs leave out); 0 by default."""
    return models.BigIntegerField(default=0, validators=[MinValueValidator(0)], null=unknown_is_null,
                                  blank=unknown_is_null)


def request_id_field() -> models.CharField:
    """The provider's request id of the call a usage-bearing row reports (`ledger_app` counts it once)."""
    return models.CharField(max_length=200, blank=True, default="",
                            help_text="The provider's request id: the same id within a session is one call, "
                                      "counted once however many rows report it.")
