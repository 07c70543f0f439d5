"""Project-level views: health check and JSON error pages for API paths."""

from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from django.views.defaults import page_not_found, server_error


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        return JsonResponse({"status": "error", "database": "unavailable", "detail": type(exc).__name__},
                            status=503)
    return JsonResponse({"status": "ok", "database": connection.vendor})


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"code": "not_found", "message": "Not found.", "details": {}}, status=404)
    return page_not_found(request, exception)


def internal_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"code": "server_error", "message": "Internal server error.", "details": {}},
                            status=500)
    return server_error(request)
