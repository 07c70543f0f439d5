"""The OpenAPI schema reads the same declarations the routes enforce (`ralphsite.api.query`): an
operation lists the FilterSet, ordering and page parameters only where they apply (a viewset's
`list`), and an action lists the query parameters it declares, with a page only when it pages."""

from typing import Any

from drf_spectacular.openapi import AutoSchema

from ralphsite.api.query import filters_apply, paginates, query_declaration


class RalphAutoSchema(AutoSchema):
    def get_override_parameters(self) -> list[Any]:
        declared = query_declaration(self.view).serializer_class
        return [*super().get_override_parameters(), *([declared] if declared is not None else [])]

    def get_filter_backends(self) -> list[Any]:
        return super().get_filter_backends() if filters_apply(self.view) else []

    def _get_paginator(self) -> Any:
        return super()._get_paginator() if paginates(self.view) else None
