"""Pagination: page numbers for ordinary resources, cursors for append-mostly tables."""

from rest_framework.pagination import CursorPagination, PageNumberPagination


class StandardPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class IdCursorPagination(CursorPagination):
    """Keyset pagination on the integer id: no COUNT(*) and no OFFSET scans on large tables."""

    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
    ordering = "id"
