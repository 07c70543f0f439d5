"""The OpenAPI schema, written for the agent calling the API.

It reads the same declarations the routes enforce (`ralphsite.core.api.query`): an operation lists the
FilterSet, ordering and page parameters only where they apply (a viewset's `list`), and an action
lists the query parameters it declares, with a page only when it pages.

Texts: a CRUD operation's summary and description come from templates over the resource's noun (the
model's verbose name, or the viewset's `resource_noun`), so a new resource is documented by declaring
nothing. A domain action declares its own summary (`@extend_schema(summary=…)`) and is described by
`@extend_schema(description=…)` or its method's docstring, which is therefore written for agents.
Class docstrings are for developers and never reach the schema. Every operation lists the error
responses it can answer (`ERROR_RESPONSES`), all in the API's one error shape (the `Error` component).
"""

import copy
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent, force_instance
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination

from ralphsite.core.addressing import address_key_of
from ralphsite.core.api.fields import (
    EPOCH_LAST_MILLISECOND,
    EpochOrISODateTimeField,
    ReferenceFilterField,
    ReferenceIdField,
    ULIDSerializerField,
)
from ralphsite.core.api.filters import EpochOrIsoDateTimeFormField, filters_naming_rows
from ralphsite.core.api.pagination import StrictCursorPagination
from ralphsite.core.api.query import filters_apply, paginates, query_declaration
from ralphsite.core.api.routers import PATH_VALUE
from ralphsite.core.api.serializers import StrictKeysMixin
from ralphsite.core.fields import ULIDField
from ralphsite.core.money import COST_SENT_OR_PRICED

# What `ulid_normalize` accepts: 26 Crockford base32 characters, any case, the first at most 7 (128 bits).
ULID_PATTERN = "^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$"

# A text that is not blank: a filter's value (`RalphFilterSet` refuses an empty one), a required text field.
# Python's whitespace (`str.isspace`, what DRF trims) spelled out: a regex's `\S` differs (U+001F is
# whitespace to Python and not to ECMAScript, U+FEFF the other way round).
NOT_BLANK = r"[^\t\n\x0b\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"

# DRF's own pattern of a row's path segment, which drf-spectacular recognizes (`_resolve_path_parameters`).
DRF_PATH_VALUE = "[^/.]+"

# Where DRF's and the project's base viewsets define the CRUD methods: their docstrings are developer
# notes, so these methods are described by the templates below.
_BASE_MODULES = ("rest_framework.", "ralphsite.core.api.viewsets")


class ErrorSerializer(serializers.Serializer):
    """Every error the API answers, whatever the status."""

    code = serializers.CharField(help_text="Stable and machine-readable, e.g. `validation_error`, `not_found`, "
                                           "`conflict`; branch on it, not on the message.")
    message = serializers.CharField(help_text="One line for a human or a log.")
    details = serializers.JSONField(help_text="Specifics: for a validation error, the messages by field name.")


# Status → what it means; `_error_statuses` decides where each applies. Each is one component
# (`#/components/responses/Error400`) that operations refer to.
ERROR_RESPONSES: dict[str, str] = {
    "400": "Invalid input (`validation_error`, `parse_error`): a body field or query parameter failed validation, "
           "or an unknown query parameter or body key was sent; `details` names each by field.",
    "401": "No valid token (`not_authenticated`): send `Authorization: Token <token>`.",
    "403": "This token may not do this (`permission_denied`): a read-only token writing, or a write outside the "
           "token's session or project.",
    "404": "No such row visible to this token, or a page past the last (`not_found` or a resource's own code, "
           "e.g. `chat_not_found`).",
    "409": "The request conflicts with the current state (`conflict` or a specific code in `details`): e.g. a "
           "create retried with the same id and a different body, a state change the row's state does not "
           "allow, or a delete of a row others still refer to.",
    "412": "`If-Match` names another version than the current one (`precondition_failed`): read the row again.",
    "414": "The request line (the URL with its query) is longer than the server reads (`uri_too_long`): send a "
           "long search as `POST /api/v1/search/`.",
    "413": "The body is larger than the server's limit (`payload_too_large`; `details.limit_bytes`).",
    "429": "Too many requests with this token (`throttled`): retry after the `Retry-After` seconds.",
    "503": "The database cannot be reached (`database_unavailable`), or a deadlock with a concurrent request "
           "rolled this one back (`database_deadlock`): retry after the `Retry-After` seconds.",
}

# What an `If-Match` header may hold: `*`, or the ETag of one version (`"3"`, weak `W/"3"`).
IF_MATCH_PATTERN = r'^(\*|(W/)?"(?P<version>\d+)")$'
IF_MATCH = OpenApiParameter("If-Match", {"type": "string", "pattern": IF_MATCH_PATTERN}, OpenApiParameter.HEADER,
                            required=False,
                            description='The ETag you read (`"<version>"`): write only over that version.')


def _article(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _own_docstring(method: Any) -> str:
    """The method's docstring when a concrete viewset wrote it; base classes' docstrings are for developers."""
    function = getattr(method, "__func__", method)
    if not (function.__doc__ and not function.__module__.startswith(_BASE_MODULES)):
        return ""
    return " ".join(line.strip() for line in function.__doc__.strip().splitlines())


def _column_nullable(field: Any) -> bool:
    """Whether the model column a model serializer's field reads may hold NULL (an answer then may be null,
    whatever a write accepts: a task whose session was deleted keeps the task with no session)."""
    model = getattr(getattr(getattr(field, "parent", None), "Meta", None), "model", None)
    source = getattr(field, "source", None)
    if model is None or not source or "." in source or source == "*":
        return False
    try:
        column = model._meta.get_field(source)
    except FieldDoesNotExist:
        return False
    return bool(getattr(column, "concrete", False) and column.null)


def _is_ulid(field: Any) -> bool:
    """A ULID, written as such or as a related row's id. A field naming a keyed model's row also
    takes its key (`ralphsite.core.addressing`), so it gets no ULID pattern."""
    if isinstance(field, serializers.ManyRelatedField):
        field = field.child_relation
    if isinstance(field, serializers.PrimaryKeyRelatedField) and field.queryset is not None:
        model = field.queryset.model
        return isinstance(model._meta.pk, ULIDField) and address_key_of(model) is None
    if isinstance(field, (ReferenceIdField, ReferenceFilterField)):
        return address_key_of(field.referenced_model) is None
    return isinstance(field, ULIDSerializerField)


def _names_a_row(field: Any) -> bool:
    """Whether a body field's value is looked up as a row (its id or key)."""
    if isinstance(field, serializers.ManyRelatedField):
        field = field.child_relation
    return isinstance(field, (serializers.RelatedField, ReferenceIdField, ReferenceFilterField))


def _priced_when_omitted(field: Any) -> bool:
    """Whether a body field is a call's cost that the ledger prices when omitted: tokens sent without
    it need a model price in force (`no_model_price` otherwise)."""
    return not field.read_only and field.help_text == COST_SENT_OR_PRICED["help_text"]


def _keyed_parent(model: type[models.Model], name: str) -> type[models.Model] | None:
    """The keyed model a path variable of a nested route names through `model`'s foreign key `name`."""
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return None
    parent = field.related_model if field.many_to_one else None
    return parent if address_key_of(parent) else None


_DECIMAL_AS_NUMBER = "A JSON number with as many places is taken too."


def epoch_or_iso(schema: dict[str, Any]) -> dict[str, Any]:
    """A time as the server reads it (`ralphsite.core.api.fields.epoch_moment`): ISO 8601 text, or epoch
    seconds, or epoch milliseconds from 10^11 on."""
    rest = {key: value for key, value in schema.items() if key not in ("type", "format", "nullable")}
    text = {"type": "string", "format": "date-time", **({"nullable": True} if schema.get("nullable") else {})}
    epoch = {"type": "number", "minimum": 0, "maximum": EPOCH_LAST_MILLISECOND,
             "description": "Epoch seconds; from 10^11 on, epoch milliseconds."}
    return {"anyOf": [text, epoch], **rest}


class RalphAutoSchema(AutoSchema):
    # -- texts ---------------------------------------------------------------------------------

    def _model(self) -> type[models.Model] | None:
        queryset = getattr(type(self.view), "queryset", None)
        return queryset.model if queryset is not None else None

    def _nouns(self) -> tuple[str, str] | None:
        """(singular, plural) of the resource: the viewset's `resource_noun`, else the model's verbose names."""
        declared = getattr(self.view, "resource_noun", None)
        if declared is not None:
            return declared
        model = self._model()
        return (str(model._meta.verbose_name), str(model._meta.verbose_name_plural)) if model else None

    def _path_key(self) -> str | None:
        """The field that names this route's row in its path besides its id: a keyed model's key
        (`ralphsite.core.addressing`) or the viewset's `path_key` (a task within its session)."""
        return getattr(self.view, "path_key", None) or address_key_of(self._model())

    def _crud_texts(self) -> tuple[str, str] | None:
        """The (summary, description) templates of a CRUD action, None for a domain action."""
        nouns = self._nouns()
        action = getattr(self.view, "action", None)
        if nouns is None or action not in ("list", "retrieve", "create", "update", "partial_update", "destroy"):
            return None
        one, many = nouns
        if action == "list":
            if isinstance(self._get_paginator(), StrictCursorPagination):
                pages = "Keyset pages of `page_size` rows: follow `next` (no total count)."
            else:
                pages = "Pages of `page_size` rows with the total in `count`: `page` or follow `next`."
            return (f"List {many}", f"The {many} this token can see, filtered by the query parameters below "
                                    f"(an unknown one is a 400 naming the allowed ones) and sorted by "
                                    f"`ordering` (`-field` descending). {pages}")
        if action == "retrieve":
            by = "its id or `key`" if self._path_key() else "its id"
            return f"Get {_article(one)}", f"One {one} by {by}; 404 when it does not exist or this token cannot see it."
        if action == "create":
            text = f"Create {_article(one)} (201). A key the {one} does not have, or a read-only one, is a 400."
            if self._client_ids():
                text += (" A global token may send its own ULID `id` (offline-first): a retry with the same id and the "
                         f"same body returns the existing {one} (200); the same id with a different body is a 409. A "
                         "session or project token sends none (400 `id_chosen_by_server`).")
            return f"Create {_article(one)}", text
        if action == "update":
            return (f"Replace {_article(one)}", f"A full update (PUT): send every required field. A key the {one} "
                                                f"does not have, or a read-only one, is a 400.{self._if_match_text()}")
        if action == "partial_update":
            return (f"Update {_article(one)}", f"Change only the fields sent (PATCH). A key the {one} does not have, "
                                               f"or a read-only one, is a 400.{self._if_match_text()}")
        return (f"Delete {_article(one)}", f"Delete the {one} (204); 409 when other rows still need it."
                                           f"{self._if_match_text()}")

    def _client_ids(self) -> bool:
        model = self._model()
        return model is not None and isinstance(model._meta.pk, ULIDField)

    def _honours_if_match(self) -> bool:
        return getattr(self.view, "honours_if_match", False) and self.method in ("PUT", "PATCH", "DELETE")

    def _if_match_text(self) -> str:
        if not self._honours_if_match():
            return ""
        return (' Send the ETag you read as `If-Match: "<version>"` to write only over that version '
                "(412 when it changed).")

    def get_summary(self) -> str | None:
        crud = self._crud_texts()
        return crud[0] if crud else None

    def get_description(self) -> str:
        handler = getattr(self.view, getattr(self.view, "action", None) or self.method.lower(), None)
        own = _own_docstring(handler) if handler is not None else ""
        if own:
            return own
        crud = self._crud_texts()
        return crud[1] if crud else ""

    # -- shapes --------------------------------------------------------------------------------

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        schema = super()._map_basic_serializer(serializer, direction)
        if not type(serializer).__dict__.get("__doc__"):
            schema.pop("description", None)  # inherited from a base serializer: a developer's note
        if direction == "request" and isinstance(serializer, StrictKeysMixin):
            schema["additionalProperties"] = False  # an unknown key is a 400
        return schema

    def _unwrap_list_serializer(self, serializer: Any, direction: str) -> dict[str, Any] | None:
        """A list of serializers (`many=True`) with the bounds it enforces on input: drf-spectacular
        drops `min_length`, `max_length` and `allow_empty=False`, so an empty bulk body the server
        refuses looked valid."""
        schema = super()._unwrap_list_serializer(serializer, direction)
        if schema and direction == "request" and isinstance(serializer, serializers.ListSerializer):
            fewest = serializer.min_length if serializer.min_length is not None else int(not serializer.allow_empty)
            if fewest:
                schema["minItems"] = fewest
            if serializer.max_length is not None:
                schema["maxItems"] = serializer.max_length
        return schema

    def _map_serializer_field(self, field: Any, direction: str, bypass_extensions: bool = False) -> dict[str, Any]:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction == "request" and isinstance(field, EpochOrISODateTimeField):
            return epoch_or_iso(schema)
        if schema.get("type") == "string" and _is_ulid(field):
            schema["pattern"] = ULID_PATTERN
        if direction == "request":
            self._say_what_is_refused(field, schema)
        elif not field.allow_null and _column_nullable(field) and "$ref" not in schema:
            schema["nullable"] = True
        return schema

    @staticmethod
    def _say_what_is_refused(field: Any, schema: dict[str, Any]) -> None:
        """What drf-spectacular's mapping of a writable field leaves out of the schema: a required text
        is not blank (DRF trims it first), a decimal has a digit (and no sign when it may not be
        negative), a JSON value is not null unless the field allows it."""
        if isinstance(field, serializers.JSONField) and not field.allow_null \
                and not {"type", "anyOf", "oneOf", "$ref", "not"} & set(schema):
            schema["not"] = {"enum": [None]}
        elif isinstance(field, serializers.DecimalField) and schema.get("type") == "string":
            whole = "+" if field.max_whole_digits is None else f"{{1,{field.max_whole_digits}}}"
            places = "+" if field.decimal_places is None else f"{{1,{field.decimal_places}}}"
            sign = "" if field.min_value is not None and field.min_value >= 0 else "-?"
            schema["pattern"] = rf"^{sign}(?:\d{whole}(?:\.\d{places.replace('1,', '0,')})?|\.\d{places})$"
            # Not in the type: a number's binary digits can exceed the places a string is held to.
            schema["description"] = " ".join(filter(None, [schema.get("description"), _DECIMAL_AS_NUMBER]))
        elif isinstance(field, serializers.CharField) and not field.allow_blank and field.trim_whitespace \
                and not {"pattern", "format", "enum"} & set(schema):
            schema["pattern"] = NOT_BLANK


    # -- error responses -------------------------------------------------------------------------

    def _error_statuses(self) -> list[str]:
        statuses = ["400"]
        if self.view.permission_classes:
            statuses += ["401", "403"]
        if "{" in self.path or isinstance(self._get_paginator(), PageNumberPagination):
            statuses.append("404")
        if self.method in ("POST", "PUT", "PATCH", "DELETE") and self._model() is not None:
            statuses.append("409")  # a write to rows: the rows' state or references may refuse it
        if self._honours_if_match():
            statuses.append("412")
        if self.method in ("POST", "PUT", "PATCH"):
            statuses.append("413")
        statuses.append("414")
        if self.view.throttle_classes:
            statuses.append("429")
        return [*statuses, "503"]

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        if getattr(self.view, "action", None) == "create" and "201" in responses and "200" not in responses \
                and self._client_ids():
            responses["200"] = {**responses["201"], "description": "A retried create (same `id`, same body): "
                                                                  "the existing row."}
        for status in self._error_statuses():
            responses.setdefault(status, self._error_response(status))
        for status, response in responses.items():
            # An action declaring an error status of its own (`responses={409: ErrorSerializer}`, e.g. a
            # read that can conflict) answers it the same way.
            if status in ERROR_RESPONSES and not response.get("description"):
                responses[status] = self._error_response(status)
        return responses

    def _error_response(self, status: str) -> dict[str, str]:
        error = self.resolve_serializer(ErrorSerializer, "response").ref
        component = ResolvedComponent(
            name=f"Error{status}", type=ResolvedComponent.RESPONSE, object=f"Error{status}",
            schema={"description": ERROR_RESPONSES[status], "content": {"application/json": {"schema": error}}})
        self.registry.register_on_missing(component)
        return component.ref

    # -- parameters ------------------------------------------------------------------------------

    def get_override_parameters(self) -> list[Any]:
        declared = query_declaration(self.view).serializer_class
        return [*super().get_override_parameters(), *([declared] if declared is not None else []),
                *([IF_MATCH] if self._honours_if_match() else [])]

    def _resolve_path_parameters(self, variables: list[str]) -> list[dict[str, Any]]:
        """A path's row and its parent (`sessions/{session}/tasks/{id}/`) say when they take a key.

        drf-spectacular types a segment from the model (integer ids as integers) only when it has DRF's
        default pattern, so it is shown that one in place of ours (`PATH_VALUE`, which takes dots)."""
        path_regex = self.path_regex
        self.path_regex = path_regex.replace(f">{PATH_VALUE})", f">{DRF_PATH_VALUE})")
        try:
            parameters = super()._resolve_path_parameters(variables)
        finally:
            self.path_regex = path_regex
        model, nouns = self._model(), self._nouns()
        for parameter in parameters:
            name = parameter["name"]
            if name in ("id", "pk", getattr(self.view, "lookup_field", "pk")) and self._path_key() and nouns:
                parameter["description"] = (f"The {nouns[0]}'s id or `{self._path_key()}` (a value shaped like "
                                            "a ULID is read as an id first).")
            elif model is not None and (parent := _keyed_parent(model, name)) is not None:
                parameter["description"] = f"The {parent._meta.verbose_name}'s id or `{address_key_of(parent)}`."
        return parameters

    def _get_filter_parameters(self) -> list[dict[str, Any]]:
        """The FilterSet's parameters as `RalphFilterSet` reads them: a text value is never blank (an
        empty filter is a 400), an integer within the filter's bounds."""
        parameters = super()._get_filter_parameters()
        filterset = self._filterset_class()
        for parameter in parameters:
            template = filterset.base_filters.get(parameter["name"]) if filterset is not None else None
            schema = parameter["schema"]
            if template is None:
                continue
            if template.field_class is EpochOrIsoDateTimeFormField:
                parameter["schema"] = epoch_or_iso(schema)
                continue
            if schema.get("type") == "string" and not {"format", "enum", "pattern"} & set(schema):
                schema["pattern"] = NOT_BLANK
            if schema.get("type") == "integer":
                for bound, keyword in (("minimum", "min_value"), ("maximum", "max_value")):
                    if template.extra.get(keyword) is not None:
                        schema[bound] = template.extra[keyword]
        return parameters

    def _filterset_class(self) -> Any:
        if not filters_apply(self.view) or not any(issubclass(backend, DjangoFilterBackend)
                                                   for backend in self.get_filter_backends()):
            return None
        return getattr(self.view, "filterset_class", None)

    def _refers_to_existing(self) -> list[str]:
        """The parts of a request that must name something that exists (a row, or a page the server
        wrote), each a 400 naming it when it does not: what a schema cannot say of a valid request."""
        parts = []
        filterset = self._filterset_class()
        if filterset is not None:
            parts += [f"query.{name}" for name in filters_naming_rows(filterset)]
        declared = query_declaration(self.view).serializer_class
        if declared is not None:
            parts += [f"query.{name}" for name, field in declared().fields.items()
                      if isinstance(field, ReferenceFilterField)]
        if isinstance(self._get_paginator(), StrictCursorPagination):
            parts.append(f"query.{self._get_paginator().cursor_query_param}")
        if self.method in ("POST", "PUT", "PATCH"):
            body = force_instance(self.get_request_serializer())
            body = getattr(body, "child", body)
            if isinstance(body, serializers.BaseSerializer):
                parts += [f"body.{name}" for name, field in body.fields.items()
                          if not field.read_only and _names_a_row(field)]
                parts += [f"body.{name} (when omitted with tokens: a model price in force)"
                          for name, field in body.fields.items() if _priced_when_omitted(field)]
        return sorted(set(parts))

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is not None and (parts := self._refers_to_existing()):
            operation["x-refers-to-existing"] = True
            operation["description"] = (f"{operation.get('description', '')}\n\nMust name something that exists "
                                        f"(a 400 naming it otherwise): {', '.join(parts)}.").strip()
        return operation

    def get_filter_backends(self) -> list[Any]:
        return super().get_filter_backends() if filters_apply(self.view) else []

    def _get_paginator(self) -> Any:
        return super()._get_paginator() if paginates(self.view) else None



def update_bodies_without_id(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook (after the enums'): an update never changes a row's id, which only a create
    may choose (`RalphModelSerializer`), so PUT and PATCH bodies have no `id`. PATCH has components of
    its own (`Patched…Request`); PUT shares the create's, so it gets a copy without `id` (`…UpdateRequest`)."""
    schemas = result["components"]["schemas"]
    for operations in result["paths"].values():
        for method in ("put", "patch"):
            content = operations.get(method, {}).get("requestBody", {}).get("content", {})
            for media in content.values():
                name = media["schema"].get("$ref", "").removeprefix("#/components/schemas/")
                if "id" not in schemas.get(name, {}).get("properties", {}):
                    continue
                if method == "put":
                    update = name.removesuffix("Request") + "UpdateRequest"
                    schemas[update] = copy.deepcopy(schemas[name])
                    media["schema"]["$ref"] = f"#/components/schemas/{update}"
                    name = update
                del schemas[name]["properties"]["id"]
                required = [field for field in schemas[name].pop("required", []) if field != "id"]
                if required:  # OpenAPI 3.0 refuses an empty list
                    schemas[name]["required"] = required
    result["components"]["schemas"] = dict(sorted(schemas.items()))
    return result
