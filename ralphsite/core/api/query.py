"""Query parameters: a route accepts only the ones it honours; any other is a 400 naming the allowed ones.

A list accepts its FilterSet's filters, `ordering` and its paginator's parameters; every other action
accepts what it declares with `@query_parameters(SomeQuerySerializer, paginated=…)`, the same
declaration the OpenAPI schema reads (`ralphsite.core.api.schema.RalphAutoSchema`), so the schema lists
exactly what the route honours. Declared parameters are validated before the action runs
(`view.query`); `format` (DRF's format override) is accepted everywhere.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.http import QueryDict
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from ralphsite.core.api.fields import ReferenceFilterField
from ralphsite.core.api.serializers import QUERY_STRING

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class QueryDeclaration:
    """What one action accepts beside `format`: its serializer's fields, and the paginator's
    parameters when it answers with a page."""

    serializer_class: type[serializers.Serializer] | None = None
    paginated: bool = False


_LIST = QueryDeclaration(paginated=True)  # a list's filters and ordering come from its filter backends
_NOTHING = QueryDeclaration()


def query_parameters(serializer_class: type[serializers.Serializer] | None = None, *,
                     paginated: bool = False) -> Callable[[F], F]:
    """Declare the query parameters a viewset action accepts (validated into `view.query`); each
    reference parameter (`session`) also answers to its seed column name (`session_id`), as a list's
    relation filters do."""
    declared = _with_id_twins(serializer_class) if serializer_class is not None else None

    def decorate(func: F) -> F:
        func.query_declaration = QueryDeclaration(declared, paginated)  # type: ignore[attr-defined]
        return func

    return decorate


def _with_id_twins(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    references = {name: field for name, field in serializer_class().fields.items()
                  if isinstance(field, ReferenceFilterField)}
    if not references:
        return serializer_class
    twins: dict[str, Any] = {
        f"{name}_id": ReferenceFilterField(model=field.model_label, source=name, required=False,
                                           help_text=f"The same as `{name}` (the seeds' column name).")
        for name, field in references.items()}

    def to_internal_value(self: serializers.Serializer, data: Any) -> Any:
        both = [name for name in references if name in data and f"{name}_id" in data]
        if both:
            raise ValidationError({f"{name}_id": [f"Give `{name}` or `{name}_id`, not both."] for name in both})
        return serializer_class.to_internal_value(self, data)

    return type(serializer_class.__name__, (serializer_class,),
                {**twins, "__module__": serializer_class.__module__, "__doc__": serializer_class.__doc__,
                 "to_internal_value": to_internal_value})


def query_declaration(view: APIView) -> QueryDeclaration:
    """The declaration of the view's current action (a viewset's `list` declares its page by default)."""
    action = getattr(view, "action", None)
    handler = getattr(view, action, None) if action else None
    declaration = getattr(handler, "query_declaration", None)
    if declaration is not None:
        return declaration
    return _LIST if action == "list" else _NOTHING


def paginates(view: APIView) -> bool:
    return query_declaration(view).paginated and getattr(view, "paginator", None) is not None


def filters_apply(view: APIView) -> bool:
    """Whether the view's filter backends (FilterSet, ordering) apply: on a viewset's `list` only."""
    return getattr(view, "action", None) == "list"


def _parameter_names(source: Any, view: APIView) -> list[str]:
    """The query parameters a paginator or filter backend reads (django-filter's backend no longer
    describes them: its FilterSet's filters are the names)."""
    if hasattr(source, "get_filterset_class"):
        filterset_class = source.get_filterset_class(view, getattr(view, "queryset", None))
        return list(filterset_class.base_filters) if filterset_class is not None else []
    return [parameter["name"] for parameter in source.get_schema_operation_parameters(view)]


def _allowed_names(view: APIView) -> frozenset[str]:
    declaration = query_declaration(view)
    names = {api_settings.URL_FORMAT_OVERRIDE}
    if declaration.serializer_class is not None:
        names.update(declaration.serializer_class().fields)
    if paginates(view):
        names.update(_parameter_names(view.paginator, view))
    if filters_apply(view):
        for backend in getattr(view, "filter_backends", ()):
            names.update(_parameter_names(backend(), view))
    names.discard(None)
    return frozenset(names)


# The allowed names depend on the view class and action only (never on the request's values or its
# caller), so they are computed once for each.
_allowed: dict[tuple[type, str | None], frozenset[str]] = {}


def allowed_query_parameters(view: APIView) -> frozenset[str]:
    key = (type(view), getattr(view, "action", None))
    names = _allowed.get(key)
    if names is None:
        names = _allowed[key] = _allowed_names(view)
    return names


def _declared_only(query: QueryDict, names: Any) -> dict[str, str]:
    """The declared parameters as a plain dict: DRF reads a QueryDict as an HTML form, where an empty
    value of an optional field means "absent"; here `?entity=` is a value, refused like any other
    the field does not accept."""
    return {name: query[name] for name in query if name in names}


class StrictQueryParametersMixin:
    """For every viewset: unknown query parameters are a 400 and declared ones are validated, after
    authentication (an anonymous caller gets its 401 first)."""

    query: dict[str, Any]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        self.query = {}
        method = request.method.lower()
        if method not in self.http_method_names or not hasattr(self, method):  # type: ignore[attr-defined]
            return  # dispatch answers 405 Method Not Allowed, whatever the query says
        params = request.query_params
        if params:
            allowed = allowed_query_parameters(self)  # type: ignore[arg-type]
            unknown = [name for name in params if name not in allowed]
            if unknown:
                listed = ", ".join(sorted(allowed))
                raise ValidationError({name: [f"Unknown query parameter; allowed: {listed}."] for name in unknown})
        serializer_class = query_declaration(self).serializer_class  # type: ignore[arg-type]
        if serializer_class is not None:  # validated even when absent: the declared defaults apply
            serializer = serializer_class(data=_declared_only(params, serializer_class().fields),
                                          context={QUERY_STRING: True})
            serializer.is_valid(raise_exception=True)
            self.query = dict(serializer.validated_data)
