"""Serializer fields shared by every app."""

import base64
import binascii
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ralphsite.ulid import ulid_normalize


class ULIDSerializerField(serializers.CharField):
    default_error_messages = {"invalid_ulid": "{value!r} is not a valid ULID (26 Crockford base32 characters)."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", None)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        try:
            return ulid_normalize(value)
        except ValueError:
            self.fail("invalid_ulid", value=value)
            raise  # pragma: no cover - fail() raises


def json_has_nul(value: Any) -> bool:
    """Whether a JSON value holds U+0000 in any string or key (iterative: the parser allows nesting
    deeper than a recursive walk could follow)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


class StorableJSONField(serializers.JSONField):
    """JSON both databases can store: PostgreSQL's jsonb refuses the NUL character (U+0000), which
    would otherwise surface as a database error instead of a 400 naming the field."""

    default_error_messages = {"nul": "JSON text may not contain the NUL character (U+0000)."}

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if json_has_nul(value):
            self.fail("nul")
        return value


class ChoiceFieldNamingAllowed(serializers.ChoiceField):
    """A choice field whose error names every allowed value (agents fix their call from it)."""

    default_error_messages = {"invalid_choice": "{input!r} is not a valid choice; allowed: {allowed}."}

    def to_internal_value(self, data: Any) -> Any:
        if data == "" and self.allow_blank:
            return ""
        try:
            return self.choice_strings_to_values[str(data)]
        except KeyError:
            self.fail("invalid_choice", input=data, allowed=", ".join(self.choice_strings_to_values))


@extend_schema_field(OpenApiTypes.BYTE)
class Base64BinaryField(serializers.Field):
    """Binary content (attachments, embeddings) carried as base64 text in JSON."""

    default_error_messages = {
        "invalid_base64": "Binary content must be base64-encoded.",
        "too_large": "Binary content is {size} bytes; the limit is {limit} bytes.",
    }

    def __init__(self, *, max_bytes: int | None = None, **kwargs: Any) -> None:
        self.max_bytes = max_bytes
        super().__init__(**kwargs)

    def to_representation(self, value: bytes | memoryview | None) -> str | None:
        if value is None:
            return None
        return base64.b64encode(bytes(value)).decode("ascii")

    def to_internal_value(self, data: Any) -> bytes:
        if not isinstance(data, str):
            self.fail("invalid_base64")
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            self.fail("invalid_base64")
        if self.max_bytes is not None and len(raw) > self.max_bytes:
            self.fail("too_large", size=len(raw), limit=self.max_bytes)
        return raw
