"""Model fields shared by every app."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from ralphsite.ulid import ulid_new, ulid_normalize


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
