"""`?ordering=`: an unknown field, or none at all (`?ordering=`), is a 400 naming the allowed ones (DRF
silently ignores both)."""

from typing import Any

from django.db.models import QuerySet
from rest_framework import filters
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request


class StrictOrderingFilter(filters.OrderingFilter):
    def get_ordering(self, request: Request, queryset: QuerySet, view: Any) -> Any:
        raw = request.query_params.get(self.ordering_param)
        if raw is not None and not raw.strip():
            self.remove_invalid_fields(queryset, [raw], view, request)  # refuses it, naming the allowed fields
        return super().get_ordering(request, queryset, view)

    def remove_invalid_fields(self, queryset: QuerySet, fields: list[str], view: Any, request: Request) -> list[str]:
        valid = super().remove_invalid_fields(queryset, fields, view, request)
        if len(valid) != len(fields):
            allowed = sorted(name for name, _label in self.get_valid_fields(queryset, view, {"request": request}))
            unknown = [term for term in fields if term not in valid]
            raise ValidationError({self.ordering_param: [
                f"Unknown ordering {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)} "
                f"(prefix '-' for descending)."]})
        return valid

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        """The fields the list sorts by, each also with `-` (descending); several are comma-separated."""
        fields = sorted(name for name, _label in self.get_valid_fields(getattr(view, "queryset", None), view, {}))
        return [{
            "name": self.ordering_param, "required": False, "in": "query", "style": "form", "explode": False,
            "description": "Sort by these fields, the first first; `-field` sorts descending.",
            "schema": {"type": "array", "minItems": 1, "items": {"type": "string",
                                                  "enum": [term for name in fields for term in (name, f"-{name}")]}},
        }]
