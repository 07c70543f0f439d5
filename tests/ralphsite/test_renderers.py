"""RalphJSONRenderer writes the bytes DRF's JSONRenderer writes (orjson underneath)."""

import json
import uuid
from collections import OrderedDict
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.utils.translation import gettext_lazy
from rest_framework.exceptions import ErrorDetail
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from ralphsite.core.api.renderers import RalphJSONRenderer
from sessions_app.models import SessionStatus

_SAMPLE = {
    "text": "naïve — 日本語 \u2028 line \u2029 para \"quoted\" \\ back\nslash",
    "numbers": [0, -1, 2**63 - 1, 1.5, -0.0, 0.1, 123456.789, True, False, None],
    "nested": OrderedDict(b=[{"deep": [[]]}], a={}),
    "error": [ErrorDetail("This field is required.", code="required")],
    "lazy": gettext_lazy("Not found."),
    "decimal": Decimal("1.250000"),
    "when": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
    "day": date(2026, 1, 2),
    "clock": time(3, 4, 5),
    "span": timedelta(seconds=90),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "choice": SessionStatus.RUNNING,
    1: "an integer key",
    "drf": ReturnDict({"results": ReturnList([1, 2], serializer=None)}, serializer=None),
}


def test_it_writes_the_bytes_drf_writes() -> None:
    assert RalphJSONRenderer().render(_SAMPLE, "application/json") == JSONRenderer().render(_SAMPLE, "application/json")


def test_it_writes_the_same_numbers_in_exponent_notation() -> None:
    # orjson spells 1e-7 where Python spells 1e-07: the same number to every JSON reader.
    data = {"small": 1e-7, "large": 1.5e300}
    assert json.loads(RalphJSONRenderer().render(data)) == json.loads(JSONRenderer().render(data)) == data


def test_it_renders_nothing_for_no_data() -> None:
    assert RalphJSONRenderer().render(None) == b""


def test_it_leaves_what_orjson_cannot_write_to_drf() -> None:
    data = {"huge": 2**64 + 1, "list": [-(2**70)]}
    expected = b'{"huge":18446744073709551617,"list":[-1180591620717411303424]}'
    assert RalphJSONRenderer().render(data) == JSONRenderer().render(data) == expected


def test_it_indents_as_drf_when_asked() -> None:
    media_type = "application/json; indent=2"
    assert RalphJSONRenderer().render(_SAMPLE, media_type) == JSONRenderer().render(_SAMPLE, media_type)
    assert b"\n  " in RalphJSONRenderer().render(_SAMPLE, media_type)


def test_it_writes_null_for_a_float_that_is_not_finite() -> None:
    # DRF's strict encoder failed the response (a 500); a null is the answer a client can use.
    assert RalphJSONRenderer().render({"x": float("nan"), "y": float("inf")}) == b'{"x":null,"y":null}'
