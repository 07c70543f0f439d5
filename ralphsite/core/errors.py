"""Domain errors raised by services.

Services are called by the API, the admin and management commands, so they raise these
(never DRF exceptions); the API's exception handler turns them into the one error shape.
"""

from datetime import UTC, datetime
from typing import Any


def detail_time(value: datetime | None) -> str | None:
    """A time for an error's details, written as the API writes times (ISO 8601 UTC, `Z`)."""
    return None if value is None else value.astimezone(UTC).isoformat().replace("+00:00", "Z")


class DomainError(Exception):
    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, code: str | None = None, details: Any = None,
                 status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status_code is not None:
            self.status_code = status_code
        self.details = details if details is not None else {}


class InvalidInput(DomainError):
    status_code = 400
    code = "validation_error"


class PermissionDenied(DomainError):
    status_code = 403
    code = "permission_denied"


class NotFound(DomainError):
    status_code = 404
    code = "not_found"


class Conflict(DomainError):
    status_code = 409
    code = "conflict"


class PreconditionFailed(DomainError):
    status_code = 412
    code = "precondition_failed"
