"""Pagination: page numbers for ordinary resources, cursors for append-mostly tables.

A page size, page number or cursor that means nothing (`page_size=0`, `page_size=x`, `page=0`, an
empty cursor or one the server did not write) is a 400 naming the parameter: DRF answers them with the default
page size or a 404. A page size over the maximum is served at the maximum (the README's rule).
"""

from typing import Any

from django.core.paginator import Paginator
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.request import Request


def positive_query_integer(request: Request, name: str) -> int | None:
    """`?<name>=` as an integer ≥ 1, None when absent; anything else is a 400 naming it."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise ValidationError({name: [f"{raw!r} is not a positive integer."]})
    return int(raw)


class StrictPageSizeMixin:
    page_size: int
    page_size_query_param: str
    max_page_size: int

    def get_page_size(self, request: Request) -> int:
        size = positive_query_integer(request, self.page_size_query_param)
        return self.page_size if size is None else min(size, self.max_page_size)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """DRF's parameters, saying what `positive_query_integer` enforces: a page and a size are ≥ 1."""
        parameters = super().get_schema_operation_parameters(view)  # type: ignore[misc]
        for parameter in parameters:
            if parameter["schema"].get("type") == "integer":
                parameter["schema"]["minimum"] = 1
        return parameters


class StandardPagination(StrictPageSizeMixin, PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_number(self, request: Request, paginator: Paginator) -> Any:
        raw = request.query_params.get(self.page_query_param)
        if raw in self.last_page_strings:
            return paginator.num_pages
        number = positive_query_integer(request, self.page_query_param)
        return 1 if number is None else number


class StrictCursorPagination(StrictPageSizeMixin, CursorPagination):
    page_size_query_param = "page_size"
    max_page_size = 1000

    def decode_cursor(self, request: Request) -> Any:
        try:
            if request.query_params.get(self.cursor_query_param) == "":
                raise NotFound  # DRF reads an empty cursor as the first page
            return super().decode_cursor(request)
        except NotFound:
            raise ValidationError({self.cursor_query_param: [
                "Not a cursor this server wrote; follow the `next` or `previous` link."]}) from None


class IdCursorPagination(StrictCursorPagination):
    """Keyset pagination on the integer id: no COUNT(*) and no OFFSET scans on large tables."""

    page_size = 100
    ordering = "id"
