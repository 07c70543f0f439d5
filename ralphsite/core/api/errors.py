"""One JSON error shape for every API failure: {"code", "message", "details"}."""

import logging
import re
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError, DataError, IntegrityError, OperationalError
from django.db.models import ProtectedError, RestrictedError
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from ralphsite.core.db.availability import (
    UNAVAILABLE_CODE,
    UNAVAILABLE_MESSAGE,
    database_deadlock,
    database_unavailable,
)
from ralphsite.core.errors import DomainError

logger = logging.getLogger("ralphsite.core.api")

_DRF_CODES: list[tuple[type[Exception], str]] = [
    (exceptions.NotAuthenticated, "not_authenticated"),
    (exceptions.AuthenticationFailed, "not_authenticated"),
    (exceptions.PermissionDenied, "permission_denied"),
    (exceptions.NotFound, "not_found"),
    (exceptions.ValidationError, "validation_error"),
    (exceptions.MethodNotAllowed, "method_not_allowed"),
    (exceptions.Throttled, "throttled"),
    (exceptions.ParseError, "parse_error"),
    (exceptions.UnsupportedMediaType, "unsupported_media_type"),
    (exceptions.NotAcceptable, "not_acceptable"),
]

_SQLITE_UNIQUE = re.compile(r"UNIQUE constraint failed: (?P<columns>.+)")
_SQLITE_CHECK = re.compile(r"CHECK constraint failed: (?P<name>\S+)")


def error_body(*, code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details if details is not None else {}}


def error_response(*, status_code: int, code: str, message: str, details: Any = None,
                   headers: dict[str, str] | None = None) -> Response:
    return Response(error_body(code=code, message=message, details=details), status=status_code, headers=headers)


def plain_error_response(*, status_code: int, code: str, message: str, details: Any = None) -> JsonResponse:
    """The error shape where DRF does not answer: middleware and Django's error handlers."""
    return JsonResponse(error_body(code=code, message=message, details=details), status=status_code)


def payload_too_large_response() -> JsonResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return plain_error_response(status_code=413, code="payload_too_large",
                                message=f"The request body is larger than the limit of {limit} bytes.",
                                details={"limit_bytes": limit})


def integrity_error_details(exc: IntegrityError) -> dict[str, Any]:
    """Name the violated constraint, from psycopg's diagnostics or SQLite's message."""
    cause = exc.__cause__
    diag = getattr(cause, "diag", None)
    if diag is not None and getattr(diag, "constraint_name", None):
        return {"constraint": diag.constraint_name}
    text = str(exc)
    if match := _SQLITE_UNIQUE.search(text):
        return {"constraint": "unique", "columns": [c.strip() for c in match["columns"].split(",")]}
    if match := _SQLITE_CHECK.search(text):
        return {"constraint": match["name"]}
    if "FOREIGN KEY" in text.upper():
        return {"constraint": "foreign_key"}
    return {"constraint": "unknown"}


def _message_of(detail: Any) -> str:
    """One human line: the first error, prefixed with its field."""
    if isinstance(detail, list) and detail:
        return _message_of(detail[0])
    if isinstance(detail, dict) and detail:
        name, inner = next(iter(detail.items()))
        text = _message_of(inner)
        return text if name == "non_field_errors" else f"{name}: {text}"
    return str(detail) if detail else "Invalid input."


def _items_by_index(detail: Any) -> Any:
    """A nested list's errors keyed by item index, only the failing items, on every DRF version: before
    3.18 a ListSerializer listed one entry per item ({} for a valid one); ListField already keys by index."""
    if isinstance(detail, dict):
        return {name: _items_by_index(inner) for name, inner in detail.items()}
    if isinstance(detail, list) and detail and all(isinstance(item, dict) for item in detail):
        return {index: _items_by_index(item) for index, item in enumerate(detail) if item}
    return detail


def _only_unique_codes(codes: Any) -> bool:
    if isinstance(codes, dict):
        return bool(codes) and all(_only_unique_codes(c) for c in codes.values())
    if isinstance(codes, list):
        return bool(codes) and all(_only_unique_codes(c) for c in codes)
    return codes == "unique"


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    set_rollback()
    if isinstance(exc, DomainError):
        return error_response(status_code=exc.status_code, code=exc.code, message=exc.message,
                              details=exc.details)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
    if isinstance(exc, exceptions.APIException):
        code = next((c for cls, c in _DRF_CODES if isinstance(exc, cls)), None)
        code = code or (exc.default_code if isinstance(exc.default_code, str) else "error")
        headers: dict[str, str] = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(int(exc.wait))
        if isinstance(exc, exceptions.ValidationError):
            detail = _items_by_index(exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail})
            if _only_unique_codes(exc.get_codes()):
                # A duplicate key is a conflict with existing data, whether the serializer's unique
                # validator or the database constraint noticed it first.
                return error_response(status_code=status.HTTP_409_CONFLICT, code="conflict",
                                      message=_message_of(detail), details=detail)
            return error_response(status_code=exc.status_code, code=code, message=_message_of(detail),
                                  details=detail, headers=headers)
        return error_response(status_code=exc.status_code, code=code, message=_message_of(exc.detail),
                              headers=headers)
    if isinstance(exc, (ProtectedError, RestrictedError)):
        # Django's own message names the protecting relations ('LedgerEvent.session').
        protected = exc.protected_objects if isinstance(exc, ProtectedError) else exc.restricted_objects
        return error_response(status_code=status.HTTP_409_CONFLICT, code="conflict", message=str(exc.args[0]),
                              details={"constraint": "protected_foreign_key",
                                       "referenced_by": sorted({obj._meta.label for obj in protected})})
    if isinstance(exc, IntegrityError):
        details = integrity_error_details(exc)
        return error_response(status_code=status.HTTP_409_CONFLICT, code="conflict",
                              message="The change conflicts with existing data.", details=details)
    if isinstance(exc, DatabaseError) and database_unavailable(exc):
        return error_response(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code=UNAVAILABLE_CODE,
                              message=UNAVAILABLE_MESSAGE,
                              headers={"Retry-After": str(settings.RALPH_DB_RETRY_AFTER)})
    if isinstance(exc, DatabaseError) and database_deadlock(exc):
        return error_response(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code="database_deadlock",
                              message="A deadlock with a concurrent request rolled this one back; retry the request.",
                              headers={"Retry-After": "1"})
    if isinstance(exc, OperationalError) and "locked" in str(exc).lower():
        return error_response(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code="database_busy",
                              message="The database is busy; retry the request.",
                              headers={"Retry-After": "1"})
    if isinstance(exc, (DataError, OverflowError)):
        # A value the column cannot hold (a number out of range, text the database refuses) that no
        # serializer bound caught: the request's fault, so a 400, never a 5xx.
        logger.warning("value refused by the database: %s", exc)
        return error_response(status_code=status.HTTP_400_BAD_REQUEST, code="validation_error",
                              message="A value is out of range or not storable in its column.",
                              details={"database": [str(exc).splitlines()[0] if str(exc) else type(exc).__name__]})
    if isinstance(exc, DatabaseError):
        logger.exception("database error", exc_info=exc)
        return error_response(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code="database_error",
                              message="The database could not complete the request; retry later.")
    logger.exception("unhandled API error", exc_info=exc)
    return error_response(status_code=status.HTTP_500_INTERNAL_SERVER_ERROR, code="server_error",
                          message="Internal server error.")
