"""Request body parsing."""

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from ralphsite.api.fields import JSON_MAX_DEPTH, json_nesting_exceeds

_TOO_DEEP = f"JSON parse error - the body is nested more than {JSON_MAX_DEPTH} levels deep."


class RalphJSONParser(JSONParser):
    """DRF's JSON parser; a body nested more than `JSON_MAX_DEPTH` levels is a 400, not a 500.

    Python's parser follows about 1,000 levels, but storing or writing such a value recursed past the
    interpreter's limit later in the request (a 500); nothing an agent stores nests that deep.
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(_TOO_DEEP) from None
        if json_nesting_exceeds(data, JSON_MAX_DEPTH):
            raise ParseError(_TOO_DEEP)
        return data
