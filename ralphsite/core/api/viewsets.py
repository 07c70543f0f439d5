"""The project's base viewsets: concrete viewsets declare queryset, serializer_class, filterset_class.

Every viewset derives from one of these, so the rules of `StrictQueryParametersMixin` (unknown query
parameters are a 400) hold on every route.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.http import Http404
from rest_framework import status, viewsets
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from ralphsite.core.access import OutOfScope, current_scope, scope_path_of
from ralphsite.core.addressing import address_key_of, as_ulid, by_reference, by_seed_id, one_by_key
from ralphsite.core.api.fields import client_id_check
from ralphsite.core.api.permissions import scope_fields_check
from ralphsite.core.api.query import StrictQueryParametersMixin
from ralphsite.core.api.representation import represent_row
from ralphsite.core.api.serializers import RalphModelSerializer
from ralphsite.core.db.precompiled import PrecompiledLookup
from ralphsite.core.errors import Conflict, PermissionDenied
from ralphsite.core.fields import ULIDField
from ralphsite.core.services import column_holds
from ralphsite.core.ulid import ulid_normalize
from ralphsite.core.writes import ModelWrites, writes_for

M = TypeVar("M", bound=models.Model)

_UNSET = object()


class RalphViewSet(StrictQueryParametersMixin, viewsets.ViewSet):
    """Routes that are not a model's CRUD (statistics, search, sync): no FilterSet, no ordering, and
    pages only where an action declares its own."""

    filter_backends = ()
    pagination_class = None


_ROW_ACTIONS = frozenset({"retrieve", "update", "partial_update", "destroy"})


class RalphReadOnlyModelViewSet(StrictQueryParametersMixin, viewsets.ReadOnlyModelViewSet):
    """A model read through the API and written only by domain actions."""


class RalphModelViewSet(StrictQueryParametersMixin, viewsets.ModelViewSet):
    """CRUD over one model, writing through services.

    Offline-first creates: a global caller may send its own ULID `id` (a scoped one may not:
    `client_id_check`). Retrying a create with the same id and the same body returns the existing row
    with 200; the same id with a different body is a 409. A viewset naming a field in `create_retry_field`
    (a checkpoint's `key`, unique in its session) treats a create sending an existing value of it in the
    same session the same way, for every caller.
    Writes call the model's services from the writes registry (`ralphsite.core.writes`), as the admin does.
    """

    # The API's name for one row and for many ("token usage row"); None: the model's verbose names.
    resource_noun: tuple[str, str] | None = None
    # Whether updates and deletes honour `If-Match: "<version>"` (412 when stale); the schema documents it.
    honours_if_match = False
    # A unique field naming a retried create beside the client's id (see the class docstring).
    create_retry_field: str | None = None
    # Whether the last create made its row (`perform_create`), else it answers the row the body named with 200.
    created = True
    # Whether a written row is read again through the class's queryset (its joins and annotations)
    # before it is answered.
    reread_written_rows = False

    @property
    def model(self) -> type[models.Model]:
        # The class's queryset names the model; get_queryset() would build (and compile) a query.
        queryset = type(self).queryset
        return queryset.model if queryset is not None else self.get_queryset().model

    def get_queryset(self) -> models.QuerySet:
        """The class's queryset narrowed to the request's scope: the one place rows are scoped, so a
        row out of scope is absent from lists, filters and detail routes alike (404, never 403)."""
        return current_scope().filter(super().get_queryset())

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """A detail action (`tasks/{id}/heartbeat/`, `chats/{id}/restore/`, …) on a row out of the
        token's scope is a 404 before it runs, as for a row that does not exist: actions may hand the
        id to a service (which acts on any row) or read the row their own way (tombstones included),
        so the rule cannot be left to each of them. This is the base class's scoped lookup, not a
        subclass's (which may refuse rows the action accepts), unless the subclass names its rows
        differently in the path (`scoped_row`). Retrieve, update and delete look the row up in the
        scoped queryset anyway; a global scope sees every row."""
        super().initial(request, *args, **kwargs)
        if getattr(self, "detail", False) and self.action not in _ROW_ACTIONS and not current_scope().is_global:
            self.scoped_row()

    def scoped_row(self) -> models.Model:
        """The path's row in the request's scope (Http404 otherwise), as the base class looks it up."""
        return RalphModelViewSet.get_object(self)

    def get_object(self) -> models.Model:
        # A keyed model's row may be named by its key too (ralphsite.core.addressing).
        # Detail routes look the row up in get_queryset() directly: the list filters (FilterSet,
        # ordering) mean nothing for one id, and building them cost more than the query itself.
        value = self.kwargs[self.lookup_url_kwarg or self.lookup_field]
        try:
            scope_lookup = current_scope().session_lookup(self.model)
        except OutOfScope:
            raise Http404 from None
        key_field = address_key_of(self.model)
        instance = None
        if key_field is None or as_ulid(value) is not None:  # a ULID-shaped value is an id first
            lookup = self._precompiled_detail_lookup(scope_lookup[0] if scope_lookup else "")
            if lookup is not None:
                instance = lookup.get(value, *scope_lookup[1:] if scope_lookup else ())
            else:
                queryset = self.get_queryset()
                try:
                    instance = queryset.get(**{self.lookup_field: value})
                except (queryset.model.DoesNotExist, ValueError, TypeError, OverflowError, ValidationError):
                    instance = None
        if instance is None and key_field is not None:
            instance = one_by_key(self.get_queryset(), key_field, value)
        if instance is None and as_ulid(value) is None:  # the id a seed tool's file gave the row
            instance = by_seed_id(self.get_queryset(), value)
        if instance is None:
            raise Http404
        self.check_object_permissions(self.request, instance)
        return instance

    def _precompiled_detail_lookup(self, scope_lookup: str) -> PrecompiledLookup | None:
        """The class's detail query built once per scope lookup (none, a session, a project), the
        scope's value a parameter of it, when the class's queryset cannot vary per request otherwise
        (compiled, or run by the ORM with the fast path `lookups` off: `PrecompiledLookup`)."""
        cls = type(self)
        if cls.get_queryset is not RalphModelViewSet.get_queryset:
            return None
        lookups = cls.__dict__.get("_detail_lookups")
        if lookups is None:
            lookups = cls._detail_lookups = {}  # a benign race: two threads may both compile one
        lookup = lookups.get(scope_lookup)
        if lookup is None:
            # The class's own queryset, unscoped: the scope is the bound lookup.
            lookup = lookups[scope_lookup] = PrecompiledLookup(
                viewsets.ModelViewSet.get_queryset(self), self.lookup_field,
                bound_lookups=(scope_lookup,) if scope_lookup else ())
        return lookup

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """DRF's list; when the serializer only reads columns, rows come from `values()` and are
        shaped directly, without building a model instance per row (most of a 100-row page)."""
        serializer = self.get_serializer(many=True)
        child = getattr(serializer, "child", None)
        plan = child.row_plan() if isinstance(child, RalphModelSerializer) else None
        if plan is None:
            return super().list(request, *args, **kwargs)
        queryset = self.filter_queryset(self.get_queryset())
        columns = dict.fromkeys(attname for _name, attname, _convert in plan)
        if isinstance(self.paginator, CursorPagination):  # the cursor reads its ordering from each row
            columns |= dict.fromkeys(name.lstrip("-") for name in self.paginator.get_ordering(request, queryset, self))
        rows = queryset.values(*columns)
        page = self.paginate_queryset(rows)
        data = [represent_row(plan, row) for row in (rows if page is None else page)]
        return self.get_paginated_response(data) if page is not None else Response(data)

    @property
    def writes(self) -> ModelWrites:
        return writes_for(self.model)

    def write_options(self, verb: str) -> dict[str, Any]:
        """Optional keywords of the model's `verb` service ("create", "update", "delete") this request
        sets (a chat's `If-Match`)."""
        return {}

    def _reread(self, instance: models.Model) -> models.Model:
        return type(self).queryset.get(pk=instance.pk) if self.reread_written_rows else instance

    def perform_create(self, serializer: BaseSerializer) -> None:
        """The row the create leaves on `serializer.instance`; `self.created` says whether it made it (201) or the
        body named a row the model already had (200: `Writes.record`)."""
        def record() -> models.Model:
            instance, self.created = self.writes.record(serializer.validated_data, **self.write_options("create"))
            return instance

        serializer.instance = self._reread(self._written_in_scope(record))

    def perform_update(self, serializer: BaseSerializer) -> None:
        scope_fields_check(current_scope(), serializer.instance, serializer.validated_data)
        serializer.instance = self._reread(self._written_in_scope(
            lambda: self.writes.update(serializer.instance, serializer.validated_data, **self.write_options("update"))))

    def _written_in_scope(self, write: Callable[[], models.Model]) -> models.Model:
        return written_in_scope(write, noun=self.model._meta.verbose_name)

    def perform_destroy(self, instance: models.Model) -> None:
        self.writes.delete(instance, **self.write_options("delete"))

    # -- idempotent create -------------------------------------------------------------------

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if isinstance(request.data, dict) and "id" in request.data and isinstance(self.model._meta.pk, ULIDField):
            client_id_check()  # before a retry is looked for: one answer to a scoped caller's id
        retry_lookup = self._retry_lookup(request)
        if retry_lookup and (retried := self._retried_create(request, *retry_lookup)) is not None:
            return retried
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            self.perform_create(serializer)
        except IntegrityError:
            # A concurrent create with the same id (or key) won the race: answer as for a retry.
            if retry_lookup and (retried := self._retried_create(request, *retry_lookup)) is not None:
                return retried
            raise
        data = self.get_serializer(serializer.instance).data
        if not self.created:
            return Response(data, status=status.HTTP_200_OK)
        return Response(data, status=status.HTTP_201_CREATED, headers=self.get_success_headers(data))

    def _supplied_id(self, request: Request) -> str | None:
        model = self.model
        if not isinstance(model._meta.pk, ULIDField) or not isinstance(request.data, dict):
            return None
        raw = request.data.get("id")
        if not raw:
            return None
        try:
            return ulid_normalize(raw)
        except ValueError:
            return None  # the serializer reports the bad id as a validation error

    def _retry_lookup(self, request: Request) -> tuple[str, str] | None:
        """(field, value) naming the row a retried create would repeat: the client's id, else the
        value of `create_retry_field` in the body."""
        supplied_id = self._supplied_id(request)
        if supplied_id:
            return "id", supplied_id
        value = request.data.get(self.create_retry_field) \
            if self.create_retry_field and isinstance(request.data, dict) else None
        return (self.create_retry_field, value) if isinstance(value, str) and value else None

    def _retried_create(self, request: Request, name: str, value: str) -> Response | None:
        model = self.model
        existing = current_scope().filter(model._default_manager.filter(**{"pk" if name == "id" else name: value}))
        if name != "id":  # a retry key is unique within its row's session: the body's session
            parent = model._meta.get_field(scope_path_of(model).split("__")[0])
            reference = request.data.get(parent.name)
            existing = existing.filter(**{parent.name: None if reference is None else by_reference(
                current_scope().filter(parent.related_model._default_manager.all()), reference)})
        existing = existing.first()
        if existing is None:
            return None
        serializer = self.get_serializer(existing, data=request.data)
        serializer.is_valid(raise_exception=True)
        if not self.create_retry_matches(existing, serializer.validated_data):
            raise Conflict(
                f"A {model._meta.verbose_name} with {name} {value} already exists with different content.",
                details={name: value},
            )
        return Response(self.get_serializer(existing).data, status=status.HTTP_200_OK)

    def create_retry_matches(self, instance: models.Model, data: dict[str, Any]) -> bool:
        """Whether a retried create carries the content the stored row already has."""
        representation: dict[str, Any] | None = None
        for name, value in data.items():
            holds = column_holds(instance, name, value)
            if holds is False:
                return False
            if holds is None:
                if representation is None:
                    representation = self.get_serializer(instance).data
                if representation.get(name) != value:
                    return False
        return True


def written_in_scope(write: Callable[[], M], *, noun: str) -> M:
    """Run the write; under a scoped token, undo it unless the row it leaves is within the scope
    (a session placed in another project, a row of no session). References in the body were
    already checked by their fields; this catches what the row itself says. The API's creates and
    updates and the MCP tools that create rows go through it."""
    scope = current_scope()
    if scope.is_global:
        return write()
    with transaction.atomic():
        instance = write()
        if not scope.contains(instance):
            raise PermissionDenied(f"This token may not write a {noun} outside its {scope.kind}.")
    return instance
