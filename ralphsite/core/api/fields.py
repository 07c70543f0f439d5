"""Serializer fields shared by every app."""

import base64
import binascii
import json
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from django.apps import apps
from django.db import models
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty

from ralphsite.core.access import current_scope, scope_path_of
from ralphsite.core.addressing import (
    address_key_of,
    as_ulid,
    by_reference,
    filter_reference,
    pk_by_key,
    unknown_reference,
)
from ralphsite.core.choices import choice_canonical
from ralphsite.core.errors import Conflict, InvalidInput
from ralphsite.core.money import usd_text
from ralphsite.core.ulid import ulid_normalize

# Size limits of what a request may store (README, "API conventions"); a longer value is a 400 naming
# its field. Without them one request could store megabytes in a field no one can ever delete
# (ledger events are append-only).
TEXT_MAX_CHARS = 1_000_000  # any text field that declares no max_length of its own
JSON_MAX_BYTES = 1_000_000  # any JSON field, measured as compact UTF-8 JSON
JSON_MAX_DEPTH = 64  # nesting of a whole request body (ralphsite.core.api.parsers)


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


ID_CHOSEN_BY_SERVER = "id_chosen_by_server"


def client_id_check() -> None:
    """Refuse a create's own id unless the caller sees every scope (a global token, a staff login): 400
    `id_chosen_by_server`, whatever the id. Ids are unique across every scope, so a scoped caller choosing one
    would learn whether a row it cannot see holds it (issue #28 §4); it retries by its scope's keys instead
    (`key`, `idempotency_key`, `request_id`). Server-side doors that derive ids per session (Claude Code's
    hooks) call the services, not this."""
    scope = current_scope()
    if not scope.is_global:
        raise InvalidInput(f"A {scope.kind} token sends no id: the server chooses it (only a global token chooses "
                           "ids, which are unique across every scope).",
                           code=ID_CHOSEN_BY_SERVER, details={"id": ["Chosen by the server for this token."]})


class ClientIdField(ULIDSerializerField):
    """The id a create may choose (`client_id_check`): a global caller's only."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", "Global tokens only: the new row's id, chosen by the client (offline-first). "
                                       "A session or project token sends none (400 `id_chosen_by_server`).")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        client_id_check()
        return super().to_internal_value(data)


class ScopedPrimaryKeyRelatedField(serializers.PrimaryKeyRelatedField):
    """A related row named by id (or by key, for a keyed model: `ralphsite.core.addressing`), found within
    the request's scope only: a row out of scope is answered exactly as one that does not exist (no
    existence leak)."""

    def get_queryset(self) -> models.QuerySet:
        return current_scope().filter(super().get_queryset())

    def to_internal_value(self, data: Any) -> Any:
        queryset = self.get_queryset()
        if address_key_of(queryset.model) is None or not isinstance(data, str):
            return super().to_internal_value(data)
        row = by_reference(queryset, data)
        if row is None:
            self.fail("does_not_exist", pk_value=data)
        return row


class ReferenceIdField(ULIDSerializerField):
    """The id of a row of `model`, written to a foreign key column without loading the row (e.g.
    `source="session_id"`; the model is then the foreign key's target). A keyed model's row may be
    named by its key (`ralphsite.core.addressing`), looked up in one query.

    Under a scoped token the row must be within the scope: one out of scope is refused exactly as one
    that does not exist. The reference that places the new row in its session (the first step of the
    model's `scope_path`) is required then: a row of no session would be outside every scope.
    """

    default_error_messages = {"does_not_exist": "{model} {pk_value} does not exist.",
                              "scope_required": "Required: this token's rows belong to a session of its scope."}

    def __init__(self, *, model: str | type[models.Model] | None = None, **kwargs: Any) -> None:
        self.referenced_model = model
        super().__init__(**kwargs)

    def bind(self, field_name: str, parent: serializers.BaseSerializer) -> None:
        super().bind(field_name, parent)
        written = getattr(getattr(parent, "Meta", None), "model", None)
        if self.referenced_model is None:
            self.referenced_model = written._meta.get_field(self.source).related_model
        elif isinstance(self.referenced_model, str):
            self.referenced_model = apps.get_model(self.referenced_model)
        foreign_key = written._meta.get_field(self.source).name if written is not None else None
        self.places_row = foreign_key is not None and scope_path_of(written).split("__")[0] == foreign_key

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        if self.places_row and (data is None or (data is empty and not getattr(self.root, "partial", False))) \
                and not current_scope().is_global:
            self.fail("scope_required")
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> str:
        if isinstance(data, str) and address_key_of(self.referenced_model) and as_ulid(data) is None:
            value = pk_by_key(self.referenced_model, data)  # a key (ralphsite.core.addressing)
        else:
            value = super().to_internal_value(data)
            if not current_scope().sees(self.referenced_model, value):
                value = None
        if value is None:
            self.fail("does_not_exist", model=self.referenced_model._meta.verbose_name.capitalize(), pk_value=data)
        return value


class ReferenceFilterField(ULIDSerializerField):
    """A parameter that narrows what an action reads to the rows of one row of a keyed model (search's
    and the statistics' `session`), read exactly as a FilterSet reads its filters (`RalphFilterSet`,
    `ralphsite.core.addressing.filter_reference`): a ULID-shaped value is the id, any other a key, and a key
    no row in the request's scope has is a 400 naming the parameter."""

    default_error_messages = {"unknown_reference": "{message}"}

    def __init__(self, *, model: str, **kwargs: Any) -> None:
        self.model_label = model
        super().__init__(**kwargs)

    @property
    def referenced_model(self) -> type[models.Model]:
        return apps.get_model(self.model_label)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or as_ulid(data) is not None:
            return super().to_internal_value(data)
        pk = filter_reference(self.referenced_model, data)
        if pk is None:
            self.fail("unknown_reference", message=unknown_reference(self.referenced_model, data))
        return pk


class ActingAgentField(serializers.CharField):
    """The agent a write is made as. A token bound to an agent fills it in when absent and refuses any
    other name with 409 `agent_mismatch`: an agent cannot act as another."""

    def validate_empty_values(self, data: Any) -> tuple[bool, Any]:
        agent = current_scope().agent
        if agent and (data is None or data == "" or (data is empty and not getattr(self.root, "partial", False))):
            return True, agent
        return super().validate_empty_values(data)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        agent = current_scope().agent
        if agent and value != agent:
            raise Conflict(f"This token acts as agent {agent!r}, not {value!r}.", code="agent_mismatch",
                           details={"agent": [f"This token acts as {agent!r}."]})
        return value


class FiniteFloatField(serializers.FloatField):
    """A float that is a number: `NaN` and `Infinity` are a 400 on every DRF version (DRF accepts them
    before 3.18, and JSON cannot carry them back)."""

    def to_internal_value(self, data: Any) -> float:
        value = super().to_internal_value(data)
        if not math.isfinite(value):
            self.fail("invalid")
        return value


class USDField(serializers.DecimalField):
    """USD (a `MoneyField`): up to `USD_PLACES` decimals in (more is a 400, `max_decimal_places`), at most
    what the backend's columns hold (the model field's validator, `max_value`). Out as `usd_text`: six
    decimals at least, as before the places grew, more only when the amount has them."""

    def to_representation(self, value: Any) -> str:
        return usd_text(value)


# What no database stores in JSON text: NUL (PostgreSQL's jsonb refuses it) and a lone surrogate, which
# is no character of UTF-8 text at all (jsonb refuses its escape; no UTF-8 encoder writes it).
_UNSTORABLE_CHARACTER = re.compile(r"[\x00\ud800-\udfff]")


def json_unstorable_character(value: Any) -> str | None:
    """The first NUL or lone surrogate in any string or key of a JSON value, or None (iterative: the
    parser allows nesting deeper than a recursive walk could follow)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if found := _UNSTORABLE_CHARACTER.search(item):
                return found.group()
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None


def json_nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether a JSON value nests arrays and objects more than `limit` deep (level by level, no recursion)."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        inner: list[Any] = []
        for item in level:
            inner.extend(item.values() if isinstance(item, dict) else item)
        level = [item for item in inner if isinstance(item, (dict, list))]
    return False


def json_size(value: Any) -> int:
    """The value's length as compact UTF-8 JSON."""
    try:
        return len(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
    except orjson.JSONEncodeError:  # an integer past 64 bits: the standard library writes any
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


class StorableJSONField(serializers.JSONField):
    """JSON both databases can store, and of bounded size (`JSON_MAX_BYTES`): the NUL character (U+0000)
    and lone surrogates (`"\\ud800"`, which a JSON parser lets through) would otherwise surface as a
    database or encoding error, a 500 instead of a 400 naming the field."""

    default_error_messages = {
        "nul": "JSON text may not contain the NUL character (U+0000).",
        "surrogate": "JSON text may not contain a lone surrogate: U+{code:04X}.",
        "too_large": "This JSON value is {size} bytes long as JSON; the limit is {limit} bytes.",
    }

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        character = json_unstorable_character(value)
        if character == "\x00":
            self.fail("nul")
        if character is not None:
            self.fail("surrogate", code=ord(character))
        if (size := json_size(value)) > JSON_MAX_BYTES:
            self.fail("too_large", size=size, limit=JSON_MAX_BYTES)
        return value


def text_bounded(field: serializers.Field) -> serializers.Field:
    """The field, or a copy of it bounded by `TEXT_MAX_CHARS` when it is a writable text field without
    a max_length of its own (a list's text items too). A ULID field is bounded by its format.

    A copy, built from the field's own arguments: a serializer deep-copies its declared fields from
    those arguments for each instance, so a change made to the field object would be lost.
    """
    if field.read_only:
        return field
    if isinstance(field, serializers.ListField):
        child = text_bounded(field.child)
        return field if child is field.child else type(field)(*field._args, **{**field._kwargs, "child": child})
    if not isinstance(field, serializers.CharField) or field.max_length is not None \
            or isinstance(field, ULIDSerializerField):
        return field
    return type(field)(*field._args, **{**field._kwargs, "max_length": TEXT_MAX_CHARS})


class ChoiceFieldNamingAllowed(serializers.ChoiceField):
    """A choice field whose error names every allowed value (agents fix their call from it), and that
    accepts the enum's aliases (`ralphsite.core.choices`), answering with the canonical value."""

    default_error_messages = {"invalid_choice": "{input!r} is not a valid choice; allowed: {allowed}."}

    def to_internal_value(self, data: Any) -> Any:
        if data == "" and self.allow_blank:
            return ""
        try:
            return self.choice_strings_to_values[str(data)]
        except KeyError:
            canonical = choice_canonical(self.choice_strings_to_values, data)
            if canonical is None:
                self.fail("invalid_choice", input=data, allowed=", ".join(self.choice_strings_to_values))
            return self.choice_strings_to_values[canonical]


_EPOCH_MILLISECONDS_FROM = 10**11  # as seconds, the year 5138: a larger number counts milliseconds
_EPOCH_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")  # as Python writes a float too (1e-05)


# 9999-12-31T23:59:59.999Z, the last moment a datetime holds, in epoch milliseconds.
EPOCH_LAST_MILLISECOND = 253_402_300_799_999
_EPOCH_START = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_moment(value: Any) -> datetime | None:
    """The UTC time an epoch number (int, float or a string of digits) names, counted in seconds, or
    in milliseconds from 10**11 on (ralphy stores epoch integers); None when `value` is no number.
    Raises ValueError when the number is out of range: before 1970 or past EPOCH_LAST_MILLISECOND."""
    sent = value
    if isinstance(value, str) and _EPOCH_NUMBER.fullmatch(value.strip()):
        value = float(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if not 0 <= value <= EPOCH_LAST_MILLISECOND:  # no loop's record predates 1970; a negative is a bug
        raise ValueError(f"{sent!r} is out of range as epoch seconds or milliseconds (0 to {EPOCH_LAST_MILLISECOND})")
    # timedelta counts exactly where value / 1000 would round (…799.999 ms as …799.998993).
    since = timedelta(milliseconds=value) if value >= _EPOCH_MILLISECONDS_FROM else timedelta(seconds=value)
    return _EPOCH_START + since


class EpochOrISODateTimeField(serializers.DateTimeField):
    """A time in ISO 8601, or as epoch seconds or milliseconds (`epoch_moment`). Answered in ISO 8601 UTC."""

    def to_internal_value(self, value: Any) -> datetime:
        try:
            moment = epoch_moment(value)
        except ValueError:
            self.fail("invalid", format="ISO 8601, epoch seconds or epoch milliseconds")
        return super().to_internal_value(value) if moment is None else self.enforce_timezone(moment)


def epoch_times_accepted(field: serializers.Field) -> serializers.Field:
    """The field, or an `EpochOrISODateTimeField` built from its arguments when it is a writable plain
    DateTimeField (a declared one: the base serializer maps model datetimes to it already)."""
    if field.read_only or type(field) is not serializers.DateTimeField:
        return field
    return EpochOrISODateTimeField(*field._args, **field._kwargs)


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


class StoredShapeListSerializer(serializers.ListSerializer):
    """A list of nested objects over a JSON column with a declared shape (`ralphsite.core.shapes`):
    a stored value that does not fit it (written before the shape was enforced) is shown as stored,
    so the read path never fails on a row the database holds."""

    def __init__(self, *args: Any, shape: Any, **kwargs: Any) -> None:
        self.shape = shape
        super().__init__(*args, **kwargs)

    def to_representation(self, data: Any) -> Any:
        if self.shape.problem(data) is not None:
            return data
        return super().to_representation(data)
