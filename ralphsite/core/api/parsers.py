"""Request body parsing."""

import codecs
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.utils import json

from ralphsite.core.api.fields import JSON_MAX_DEPTH, json_nesting_exceeds

_TOO_DEEP = f"JSON parse error - the body is nested more than {JSON_MAX_DEPTH} levels deep."


def _object_without_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        repeated = sorted({key for key, _value in pairs if sum(other == key for other, _ in pairs) > 1})
        raise ValueError(f"a key appears twice in one object: {', '.join(map(repr, repeated))}")
    return found


class RalphJSONParser(JSONParser):
    """DRF's JSON parser, refusing what it would read silently or fail on: a key repeated in one object
    is a 400 (the parser kept the last value and dropped the others without a word), and so is a body
    nested more than `JSON_MAX_DEPTH` levels (Python's parser follows about 1,000 levels, but storing or
    writing such a value recursed past the interpreter's limit later in the request: a 500).
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        encoding = (parser_context or {}).get("encoding", "utf-8")
        try:
            data = json.load(codecs.getreader(encoding)(stream), object_pairs_hook=_object_without_repeated_keys,
                             parse_constant=json.strict_constant if self.strict else None)
        except RecursionError:
            raise ParseError(_TOO_DEEP) from None
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
        if json_nesting_exceeds(data, JSON_MAX_DEPTH):
            raise ParseError(_TOO_DEEP)
        return data
