"""Project-level views: health check and JSON error pages for API paths."""

from django.conf import settings
from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from django.views.defaults import bad_request as django_bad_request
from django.views.defaults import page_not_found, server_error

from ralphsite.core.api.errors import payload_too_large_response, plain_error_response
from ralphsite.core.db.availability import UNAVAILABLE_CODE, UNAVAILABLE_MESSAGE


def database_unavailable_response() -> JsonResponse:
    return JsonResponse({"code": UNAVAILABLE_CODE, "message": UNAVAILABLE_MESSAGE, "details": {}}, status=503,
                        headers={"Retry-After": str(settings.RALPH_DB_RETRY_AFTER)})


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database answers; 503 `database_unavailable` with Retry-After, within
    RALPH_DB_CONNECT_TIMEOUT, when it does not."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return database_unavailable_response()
    return JsonResponse({"status": "ok", "database": connection.vendor})


def answers_json(request: HttpRequest) -> bool:
    """Whether the path is one agents call (the API, the health check): errors there are JSON."""
    return request.path.startswith("/api/") or request.path == "/healthz"


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's answer to a request it refuses before any view (a Host not in ALLOWED_HOSTS, a body
    past the limit read as a form: the JSON 413 on every path, as `RequestBodyLimitMiddleware` answers)."""
    if isinstance(exception, RequestDataTooBig):
        return payload_too_large_response()
    if not answers_json(request):
        return django_bad_request(request, exception)
    if isinstance(exception, DisallowedHost):
        return plain_error_response(status_code=400, code="invalid_host",
                                    message="The Host header names a host this server does not answer for.")
    return plain_error_response(status_code=400, code="bad_request", message="The request is malformed.")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if answers_json(request):
        return plain_error_response(status_code=404, code="not_found", message="Not found.")
    return page_not_found(request, exception)


def internal_error(request: HttpRequest) -> HttpResponse:
    if answers_json(request):
        return plain_error_response(status_code=500, code="server_error", message="Internal server error.")
    return server_error(request)
