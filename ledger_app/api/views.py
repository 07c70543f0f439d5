from typing import Any

from django.db import models
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from ledger_app import selectors, services
from ledger_app.api import filters
from ledger_app.api import serializers as s
from ledger_app.models import ErrorLog, GateResult, TokenUsage
from ledger_app.stats import STATS, Stat, StatFilters
from ralphsite.core.api.pagination import IdCursorPagination
from ralphsite.core.api.query import query_parameters
from ralphsite.core.api.viewsets import RalphModelViewSet, RalphViewSet
from ralphsite.core.errors import Conflict, InvalidInput, NotFound
from ralphsite.core.fields import BIGINT_MAX
from sessions_app.models import Session

# Append-only resources: no PUT, PATCH or DELETE (405).
APPEND_ONLY_METHODS = ["get", "post", "head", "options"]


def _integer_id(value: str) -> int | None:
    """A URL's integer id, or None when it cannot be one (SQLite cannot even bind an int past 64 bits)."""
    try:
        number = int(value)
    except ValueError:
        return None
    return number if 0 < number <= BIGINT_MAX else None


def _list_body(data: Any, *, limit: int) -> list[Any]:
    if not data:
        raise InvalidInput("The list is empty.", details={"non_field_errors": ["Send at least one item."]})
    if len(data) > limit:
        raise InvalidInput(f"At most {limit} items per request; got {len(data)}.",
                           details={"limit": limit, "received": len(data)})
    return data


class IntegerIdMixin:
    """Integer-id tables: a detail URL whose id is no 64-bit integer is a 404, never a database error."""

    def get_object(self) -> models.Model:
        if _integer_id(self.kwargs[self.lookup_url_kwarg or self.lookup_field]) is None:
            raise Http404
        return super().get_object()


class CursorListMixin(IntegerIdMixin):
    """High-volume integer-id tables: keyset pages on id (`?ordering=-id`: newest first), no COUNT(*),
    no OFFSET."""

    pagination_class = IdCursorPagination
    ordering_fields = ["id"]
    ordering = ["id"]


class LedgerEventViewSet(CursorListMixin, RalphModelViewSet):
    queryset = selectors.event_list()
    serializer_class = s.LedgerEventSerializer
    filterset_class = filters.LedgerEventFilterSet
    http_method_names = APPEND_ONLY_METHODS

    @extend_schema(
        request=s.LedgerEventSerializer,
        responses={201: s.LedgerEventSerializer, 200: OpenApiResponse(
            s.AppendResultSerializer(many=True),
            description="A list body (up to 1,000 events) is answered per item: created, duplicate (the same "
                        "body under an idempotency key already used), invalid or conflict (the key recorded "
                        "another body: `idempotency_key_reused`). Every item appended: 201 (200 when all were "
                        "duplicates); some failed: 207 (the others are appended); every item failed: 400, or "
                        "409 when each reused a key. A single event that repeats its idempotency key returns "
                        "the existing event with 200, or 409 with a different body."),
            207: OpenApiResponse(s.AppendResultSerializer(many=True), description="Some items failed.")},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if isinstance(request.data, list):
            return self._append_many(_list_body(request.data, limit=services.MAX_EVENTS_PER_APPEND))
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        event, created = services.event_append_one(item=serializer.validated_data)
        answer = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(self.get_serializer(event).data, status=answer)

    @extend_schema(responses=s.ChainHeadSerializer, summary="Get the ledger's chain head")
    @action(detail=False, methods=["get"])
    def head(self, request: Request) -> Response:
        """The newest event's id and hash (null and the genesis hash before the first event): record
        it outside the server, and `manage.py ledger_verify --anchor ID:HASH` proves nothing before
        it changed. A session or project token sees the newest event of its own sessions."""
        event_id, event_hash = selectors.event_head()
        return Response(s.ChainHeadSerializer({"id": event_id, "hash": event_hash}).data)

    def _append_many(self, raw_items: list[Any]) -> Response:
        answers: list[dict[str, Any] | None] = [None] * len(raw_items)
        valid_indexes, valid_items = [], []
        # One serializer validates every item, as DRF's ListSerializer does: its fields and
        # validators are built once per request instead of once per event.
        validator = self.get_serializer()
        for index, raw in enumerate(raw_items):
            try:
                valid_items.append(validator.run_validation(raw))
                valid_indexes.append(index)
            except ValidationError as exc:
                answers[index] = {"index": index, "status": "invalid", "id": None, "code": "validation_error",
                                  "errors": exc.detail}
        results = services.events_append(items=valid_items) if valid_items else []
        for index, result in zip(valid_indexes, results, strict=True):
            answers[index] = {"index": index, "status": result.status, "id": result.event_id,
                              **({"code": result.code} if result.code else {}),
                              **({"errors": result.errors} if result.errors else {})}
        failed = [answer for answer in answers if answer and answer["status"] in ("invalid", "conflict")]
        if len(failed) == len(answers):  # nothing appended: the request failed as a whole
            if all(answer["status"] == "conflict" for answer in failed):
                raise Conflict("No event was appended: every item reuses an idempotency key with another body.",
                               code="idempotency_key_reused", details={"items": answers})
            raise InvalidInput("No event was appended: every item failed.", details={"items": answers})
        if failed:
            return Response(answers, status=status.HTTP_207_MULTI_STATUS)
        created = any(result.status == "created" for result in results)
        return Response(answers, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class IssueViewSet(RalphModelViewSet):
    queryset = selectors.issue_list()
    serializer_class = s.IssueSerializer
    filterset_class = filters.IssueFilterSet
    ordering_fields = ["count", "last_seen_at", "first_seen_at", "kind"]
    ordering = ["-count", "-last_seen_at"]

    @extend_schema(request=s.IssueRecordSerializer, responses={200: s.IssueSerializer, 201: s.IssueSerializer},
                   description="The same as `issues/record/`: a known signature (in the session) increments "
                               "`count` and answers 200; a new one is created (201). Either way an "
                               "`issue_recorded` event is appended.")
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._record(request)

    @extend_schema(request=s.IssueRecordSerializer, responses={200: s.IssueSerializer, 201: s.IssueSerializer},
                   summary="Record an issue occurrence")
    @action(detail=False, methods=["post"])
    def record(self, request: Request) -> Response:
        """Record an occurrence: a known signature (in the session) increments `count` (200), a new one is
        created (201). Either way an `issue_recorded` event is appended."""
        return self._record(request)

    def _record(self, request: Request) -> Response:
        serializer = s.IssueRecordSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        issue, created = services.issue_record(session_id=data.pop("session"), issue_id=data.pop("id", None), **data)
        answer = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(s.IssueSerializer(issue).data, status=answer)


class CheckpointViewSet(RalphModelViewSet):
    create_retry_field = "key"  # creating it again with the same body answers the existing row (200)
    queryset = selectors.checkpoint_list()
    serializer_class = s.CheckpointSerializer
    filterset_class = filters.CheckpointFilterSet
    ordering_fields = ["created_at", "key"]
    ordering = ["-created_at"]

    @extend_schema(request=s.CheckpointRestoreRequestSerializer, responses={201: s.CheckpointRestoreSerializer},
                   summary="Restore a checkpoint")
    @action(detail=True, methods=["post"])
    def restore(self, request: Request, pk: str) -> Response:
        """Record a restore of this checkpoint; 409 when its `can_restore` is false."""
        serializer = s.CheckpointRestoreRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        restore = services.checkpoint_restore(checkpoint=self.get_object(), **serializer.validated_data)
        return Response(s.CheckpointRestoreSerializer(restore).data, status=status.HTTP_201_CREATED)


class CheckpointRestoreViewSet(RalphModelViewSet):
    queryset = selectors.checkpoint_restore_list()
    serializer_class = s.CheckpointRestoreSerializer
    filterset_class = filters.CheckpointRestoreFilterSet
    ordering_fields = ["restored_at"]
    ordering = ["-restored_at"]
    http_method_names = APPEND_ONLY_METHODS


class RollbackViewSet(RalphModelViewSet):
    queryset = selectors.rollback_list()
    serializer_class = s.RollbackSerializer
    filterset_class = filters.RollbackFilterSet
    ordering_fields = ["rolled_back_at", "rollback_type"]
    ordering = ["-rolled_back_at"]


class BaselineViewSet(RalphModelViewSet):
    queryset = selectors.baseline_list()
    serializer_class = s.BaselineSerializer
    filterset_class = filters.BaselineFilterSet
    ordering_fields = ["created_at", "tag_name", "milestone"]
    ordering = ["-created_at"]


class GateResultViewSet(RalphModelViewSet):
    queryset = selectors.gate_result_list()
    serializer_class = s.GateResultSerializer
    filterset_class = filters.GateResultFilterSet
    ordering_fields = ["timestamp", "gate", "iteration"]
    ordering = ["-timestamp"]


class TokenUsageViewSet(CursorListMixin, RalphModelViewSet):
    """Usage rows are facts that feed session totals: recorded, never edited (no PUT/PATCH/DELETE)."""

    resource_noun = ("token usage row", "token usage rows")
    queryset = selectors.token_usage_list()
    serializer_class = s.TokenUsageSerializer
    filterset_class = filters.TokenUsageFilterSet
    http_method_names = APPEND_ONLY_METHODS

    @extend_schema(request=s.TokenUsageSerializer, responses={201: s.TokenUsageSerializer},
                   summary="Record token usage")
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """One usage row, or a list of up to 1,000 (one transaction: all are recorded or none)."""
        many = isinstance(request.data, list)
        data = _list_body(request.data, limit=services.MAX_EVENTS_PER_APPEND) if many else request.data
        serializer = self.get_serializer(data=data, many=many)
        serializer.is_valid(raise_exception=True)
        rows = services.token_usage_record(items=serializer.validated_data if many else [serializer.validated_data])
        body = self.get_serializer(rows, many=True).data if many else self.get_serializer(rows[0]).data
        return Response(body, status=status.HTTP_201_CREATED)


class ModelPriceViewSet(RalphModelViewSet):
    queryset = selectors.model_price_list()
    serializer_class = s.ModelPriceSerializer
    filterset_class = filters.ModelPriceFilterSet
    ordering_fields = ["model", "valid_from"]
    ordering = ["model", "-valid_from"]


class ErrorLogViewSet(CursorListMixin, RalphModelViewSet):
    resource_noun = ("error log entry", "error log entries")
    queryset = selectors.error_list()
    serializer_class = s.ErrorLogSerializer
    filterset_class = filters.ErrorLogFilterSet


class DeadLetterViewSet(IntegerIdMixin, RalphModelViewSet):
    queryset = selectors.dead_letter_list()
    serializer_class = s.DeadLetterSerializer
    filterset_class = filters.DeadLetterFilterSet
    ordering_fields = ["created_at", "retry_after", "status"]
    ordering = ["-created_at"]

    @extend_schema(request=None, responses={200: s.DeadLetterSerializer}, summary="Retry a dead letter")
    @action(detail=True, methods=["post"])
    def retry(self, request: Request, pk: str) -> Response:
        """Take this item for a retry (pending and due → retried); 409 when it is not."""
        dead_letter_id = _integer_id(pk)
        if dead_letter_id is None:
            raise NotFound(f"Dead letter {pk} does not exist.")
        return Response(s.DeadLetterSerializer(services.dead_letter_retry(dead_letter_id=dead_letter_id)).data)

    @extend_schema(request=None, responses={200: s.DeadLetterSerializer}, summary="Discard a dead letter")
    @action(detail=True, methods=["post"])
    def discard(self, request: Request, pk: str) -> Response:
        """Give up on this pending item (pending → failed): it is never retried; 409 when not pending."""
        dead_letter_id = _integer_id(pk)
        if dead_letter_id is None:
            raise NotFound(f"Dead letter {pk} does not exist.")
        return Response(s.DeadLetterSerializer(services.dead_letter_discard(dead_letter_id=dead_letter_id)).data)

    @extend_schema(request=s.DeadLetterClaimSerializer,
                   responses={200: s.DeadLetterSerializer, 204: OpenApiResponse(description="Nothing is due.")},
                   summary="Claim the next due dead letter")
    @action(detail=False, methods=["post"])
    def claim(self, request: Request) -> Response:
        """Atomically take the oldest due item for a retry; two workers never get the same one."""
        serializer = s.DeadLetterClaimSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        item = services.dead_letter_claim_next(**serializer.validated_data)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(s.DeadLetterSerializer(item).data)


def _stat_body(stat: Stat, filters_: StatFilters | None) -> dict[str, Any]:
    """A statistic's answer; its rows computed for `filters_` (None: its description and columns only)."""
    extra = stat.all_sources
    return {"name": stat.name, "description": stat.description, "columns": list(stat.columns),
            "rows": [] if filters_ is None else stat.rows(filters_),
            "all_sources": None if extra is None else {
                "description": extra.description, "columns": list(extra.columns),
                "rows": [] if filters_ is None else extra.rows(filters_)}}


STAT_NAME = OpenApiParameter("name", str, OpenApiParameter.PATH, enum=sorted(STATS), description="The statistic.")


class StatsViewSet(RalphViewSet):
    """Seed 003's views, one read-only resource each: `GET stats/<name>/`."""

    lookup_field = "name"
    permission_models = (Session, TokenUsage, ErrorLog, GateResult)  # what the statistics read

    @extend_schema(responses=s.StatsResultSerializer(many=True), summary="List the statistics",
                   description="Every statistic this server computes, with its description and columns (no rows: "
                               "ask for one by name).")
    def list(self, request: Request) -> Response:
        return Response([_stat_body(stat, None) for stat in STATS.values()])

    @extend_schema(parameters=[STAT_NAME], responses=s.StatsResultSerializer, summary="Compute a statistic",
                   description="One statistic's rows, optionally for one session and a time range "
                               "(`since`, `until`): `rows` answer what the seed's view answers; `all_sources`, where "
                               "the statistic has it, Ralph Site's own figures over every path that reports a call.")
    @query_parameters(s.StatsQuerySerializer)
    def retrieve(self, request: Request, name: str) -> Response:
        stat = STATS.get(name)
        if stat is None:
            raise NotFound(f"No statistic named {name!r}; available: {', '.join(STATS)}.")
        filters_ = StatFilters(session_id=self.query.get("session"), since=self.query.get("since"),
                               until=self.query.get("until"))
        body = _stat_body(stat, filters_)
        return Response(s.StatsResultSerializer(body).data)


