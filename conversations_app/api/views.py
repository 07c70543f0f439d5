"""Thin viewsets: validate → service → serialize."""

import re
from typing import Any

from django.db import models
from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from conversations_app import selectors, services
from conversations_app.api import filters
from conversations_app.api import serializers as s
from conversations_app.errors import RUN_NOT_FOUND, not_found
from conversations_app.models import Chat, Message, Observation, Run, SyncEntity
from ralphsite.core.access import current_scope
from ralphsite.core.api.pagination import StrictCursorPagination
from ralphsite.core.api.permissions import model_permissions_check
from ralphsite.core.api.query import query_parameters
from ralphsite.core.api.schema import IF_MATCH_PATTERN, ErrorSerializer
from ralphsite.core.api.viewsets import RalphModelViewSet, RalphReadOnlyModelViewSet, RalphViewSet
from ralphsite.core.errors import InvalidInput, NotFound
from ralphsite.core.search.backends import search_kinds_viewable, search_source_model, search_validated


class ConversationViewSet(RalphModelViewSet):
    """Chats, runs and messages: seed 002's not-found codes, tombstones hidden unless asked for."""

    entity: str  # "chat", "run" or "message"
    parent_field = ""  # the ULID parent carried as `<parent>_id` in validated data

    def is_tombstoned(self, instance: models.Model) -> bool:
        raise NotImplementedError

    def get_object(self) -> models.Model:
        try:
            instance = super().get_object()
        except Http404:
            instance = None
        # Tombstones are readable on request, never writable (restore first).
        show_tombstones = self.request.method in SAFE_METHODS and self.query.get("include_deleted", False)
        if instance is None or (self.is_tombstoned(instance) and not show_tombstones):
            raise not_found(self.entity, self.kwargs[self.lookup_url_kwarg or self.lookup_field])
        return instance

    def create_retry_matches(self, instance: models.Model, data: dict[str, Any]) -> bool:
        if self.parent_field:
            data = dict(data)
            if data.pop(self.parent_field, None) != getattr(instance, self.parent_field):
                return False
        return super().create_retry_matches(instance, data)

    @query_parameters(s.IncludeDeletedQuerySerializer)
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)


def _if_match(request: Request) -> int | None:
    """The version an `If-Match: "<version>"` header expects (`*` or no header: none)."""
    raw = request.headers.get("If-Match")
    if raw is None:
        return None
    match = re.fullmatch(IF_MATCH_PATTERN, raw.strip())
    if match is None:
        # A header that names no version (an empty one too) is malformed input (a 400, as the schema's
        # pattern says), not a precondition that failed: no version could ever match it.
        raise InvalidInput(f"If-Match {raw!r} is not a chat version (send the ETag, e.g. \"3\").",
                           details={"If-Match": ["Not a version: send the ETag you read, e.g. \"3\"."]})
    return int(match["version"]) if match["version"] else None


class ChatViewSet(ConversationViewSet):
    """Chats. Every response carries `ETag: "<version>"`; updates and deletes honour If-Match."""

    entity = "chat"
    honours_if_match = True
    queryset = selectors.chat_list()
    serializer_class = s.ChatSerializer
    filterset_class = filters.ChatFilterSet
    ordering_fields = ["updated_at", "created_at", "title"]
    ordering = ["-updated_at"]

    def is_tombstoned(self, instance: Chat) -> bool:
        return instance.is_deleted

    def write_options(self, verb: str) -> dict[str, Any]:
        return {"if_match": _if_match(self.request)} if verb in ("update", "delete") else {}

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        data = getattr(response, "data", None)
        if response.status_code < 300 and isinstance(data, dict) and "version" in data:
            response["ETag"] = f'"{data["version"]}"'
        return super().finalize_response(request, response, *args, **kwargs)

    @extend_schema(request=None, responses=s.ChatSerializer, summary="Restore a deleted chat")
    @action(detail=True, methods=["post"])
    def restore(self, request: Request, pk: str) -> Response:
        """Bring a tombstoned chat back, with its runs and messages."""
        return Response(self.get_serializer(services.chat_restore(chat_id=pk)).data)

    @extend_schema(responses=s.RunSerializer, summary="Get a chat's latest run")
    @query_parameters(s.IncludeDeletedQuerySerializer)
    @action(detail=True, methods=["get"], url_path="latest-run")
    def latest_run(self, request: Request, pk: str) -> Response:
        """GetLatestByChat: the chat's run with the highest sequence number; 404 `run_not_found` when the
        chat has no runs yet."""
        chat = self.get_object()
        run = selectors.run_latest(chat_id=chat.pk)
        if run is None:
            raise NotFound(f"Chat {chat.pk} has no runs yet.", code=RUN_NOT_FOUND, details={"chat": chat.pk})
        return Response(s.RunSerializer(run, context=self.get_serializer_context()).data)


class RunViewSet(ConversationViewSet):
    """Runs; sequence numbers are server-assigned per chat. Deleted only with their chat."""

    entity = "run"
    parent_field = "chat_id"
    queryset = selectors.run_list()
    serializer_class = s.RunSerializer
    filterset_class = filters.RunFilterSet
    ordering_fields = ["sequence_number", "started_at", "created_at", "updated_at"]
    ordering = ["chat_id", "sequence_number"]
    http_method_names = ["get", "post", "put", "patch", "head", "options"]

    def is_tombstoned(self, instance: Run) -> bool:
        return instance.chat.is_deleted

    @extend_schema(
        request=s.MessageAppendSerializer(many=True, min_length=1, max_length=services.MAX_BULK_MESSAGES),
        responses={201: s.MessageSerializer(many=True)},
        summary="Append messages to a run",
        description="Append one message (an object → the message) or up to 1,000 (a list → the list), "
                    "in one transaction; sequence numbers continue the run's.",
    )
    @query_parameters(s.ReopenQuerySerializer)
    @action(detail=True, methods=["post"])
    def messages(self, request: Request, pk: str) -> Response:
        many = isinstance(request.data, list)
        if not many and not isinstance(request.data, dict):
            raise InvalidInput("Send one message object or a list of them.",
                               details={"non_field_errors": ["Expected an object or a list."]})
        extra = {"max_length": services.MAX_BULK_MESSAGES, "min_length": 1} if many else {}
        serializer = s.MessageAppendSerializer(data=request.data, many=many, **extra)
        serializer.is_valid(raise_exception=True)
        items = serializer.validated_data if many else [serializer.validated_data]
        created = services.message_append(run_id=pk, items=items, reopen=self.query["reopen"])
        out = s.MessageSerializer(created if many else created[0], many=many)
        return Response(out.data, status=status.HTTP_201_CREATED)


class MessageCursorPagination(StrictCursorPagination):
    """Messages page in sequence order (keyset on the (run, sequence_number) unique index)."""

    ordering = "sequence_number"
    page_size = 100


class MessageViewSet(ConversationViewSet):
    """Messages: list by run in sequence order (cursor), retrieve, create (appends to `run`), update.
    Deleted only with their chat."""

    entity = "message"
    parent_field = "run_id"
    queryset = selectors.message_list()
    serializer_class = s.MessageSerializer
    filterset_class = filters.MessageFilterSet
    pagination_class = MessageCursorPagination
    ordering_fields = ["sequence_number"]  # the cursor's keys (`-sequence_number`: newest first)
    ordering = ["sequence_number"]
    http_method_names = ["get", "post", "put", "patch", "head", "options"]

    def is_tombstoned(self, instance: Message) -> bool:
        return instance.run.chat.is_deleted

    @query_parameters(s.ReopenQuerySerializer)
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().create(request, *args, **kwargs)

    def write_options(self, verb: str) -> dict[str, Any]:
        return {"reopen": self.query["reopen"]} if verb == "create" else {}


class ObservationViewSet(RalphModelViewSet):
    queryset = selectors.observation_list()
    serializer_class = s.ObservationSerializer
    filterset_class = filters.ObservationFilterSet
    ordering_fields = ["created_at", "importance", "type"]
    ordering = ["-created_at"]


class PatternViewSet(RalphReadOnlyModelViewSet):
    """Cross-project patterns, most frequent first; `record` creates or increments one."""

    queryset = selectors.pattern_list()
    serializer_class = s.PatternSerializer
    filterset_class = filters.PatternFilterSet
    ordering_fields = ["frequency", "updated_at", "created_at"]
    ordering = ["-frequency", "-updated_at"]

    @extend_schema(request=s.PatternRecordSerializer, responses={200: s.PatternSerializer, 201: s.PatternSerializer},
                   summary="Record a pattern")
    @action(detail=False, methods=["post"])
    def record(self, request: Request) -> Response:
        """Record a pattern seen in a project: new → 201 (frequency 1); known → 200, frequency + 1."""
        serializer = s.PatternRecordSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        pattern, created = services.pattern_record(**serializer.validated_data)
        return Response(self.get_serializer(pattern).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class SyncMappingViewSet(RalphReadOnlyModelViewSet):
    """The local ↔ remote id mapping `sync/mark-synced/` records (kept after a purge, so tombstones
    can still be correlated); `?remote_id=` on chats, runs and messages finds a row by its remote id."""

    queryset = selectors.sync_mapping_list()
    serializer_class = s.SyncMappingSerializer
    filterset_class = filters.SyncMappingFilterSet
    ordering_fields = ["synced_at", "entity"]
    ordering = ["entity", "local_id"]


class SyncViewSet(RalphViewSet):
    """What still needs syncing, and marking rows synced with their remote ids."""

    permission_models = (Chat, Run, Message)

    @extend_schema(responses=inline_serializer("SyncPending", {
        entity: s.SyncPendingEntitySerializer(required=False) for entity in SyncEntity.values}),
        summary="List rows waiting to be synced",
        description="Per entity (chat, run, message), how many rows were never synced or changed since, and the "
                    "first `limit` of them; `entity` asks for one.")
    @query_parameters(s.SyncPendingParamsSerializer)
    @action(detail=False, methods=["get"])
    def pending(self, request: Request) -> Response:
        entities = [self.query["entity"]] if "entity" in self.query else SyncEntity.values
        body = {}
        for entity in entities:
            count, rows = selectors.sync_pending(entity=entity, limit=self.query["limit"])
            body[entity] = {"count": count, "results": s.SyncPendingRowSerializer(rows, many=True).data}
        return Response(body)

    @extend_schema(request=s.MarkSyncedSerializer, responses={200: s.MarkSyncedResultSerializer, 404: ErrorSerializer},
                   summary="Mark rows synced",
                   description="Mark chats, runs and messages synced with the remote ids the remote store gave "
                               "them, all or nothing; answers how many rows were marked per entity, or 404 naming "
                               "the rows that do not exist. Marking does not change a chat's version.")
    @action(detail=False, methods=["post"], url_path="mark-synced")
    def mark_synced(self, request: Request) -> Response:
        serializer = s.MarkSyncedSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(services.sync_mark_synced(items=serializer.validated_data["items"]))


class SearchViewSet(RalphViewSet):
    """Full-text search over message content, observation content + tool names, ledger events and task
    reports (the sources the apps register: ralphsite/core/search)."""

    permission_models = (Message, Observation)

    @extend_schema(responses=s.SearchPageSerializer, summary="Search messages, memory, events and reports",
                   description="Full-text search over message content, observation content and tool names, "
                               "ledger events (type, task key, message) and task reports (implementation and "
                               "review reports, error), best matches first, a page at a time. A token finds "
                               "its scope's rows only, of the kinds its owner may view. Quoted phrases, `OR` "
                               "and prefix `term*` are understood; anything else is literal text.")
    @query_parameters(s.SearchParamsSerializer)
    def list(self, request: Request) -> Response:
        return self._search(request, self.query, links=True)

    @extend_schema(request=s.SearchParamsSerializer, responses={200: s.SearchPageSerializer},
                   summary="Search with a JSON body")
    def create(self, request: Request) -> Response:
        """The same search with its parameters in a JSON body, for queries too long for a URL. The page's
        `next` and `previous` are null: ask for another page with `page` in the body."""
        params = s.SearchParamsSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        return self._search(request, params.validated_data, links=False)

    def _search(self, request: Request, p: dict[str, Any], *, links: bool) -> Response:
        page, size = p["page"], p["page_size"]
        scope = current_scope()
        if "kind" in p:  # asked for by name: refused (403) unless its rows may be viewed
            model_permissions_check(scope, (search_source_model(p["kind"]),), "view")
        total, hits = search_validated(p, kinds=search_kinds_viewable(lambda model: scope.permits(model, "view")))
        url = request.build_absolute_uri()
        return Response({
            "count": total,
            "next": replace_query_param(url, "page", page + 1) if links and page * size < total else None,
            "previous": replace_query_param(url, "page", page - 1) if links and page > 1 else None,
            "results": s.SearchHitSerializer(hits, many=True).data,
        })
