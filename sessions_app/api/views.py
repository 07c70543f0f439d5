from typing import Any

from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from ralphsite.api.viewsets import RalphModelViewSet
from sessions_app import selectors, services
from sessions_app.api import filters
from sessions_app.api import serializers as api
from sessions_app.api.filters import SessionFilterSet
from sessions_app.api.serializers import SessionSerializer
from sessions_app.api.session_actions import SessionOrchestrationActions, validated
from sessions_app.downloads import attachment_download_response
from sessions_app.models import (
    AgentInvocation,
    FeedbackAttachment,
    FeedbackBatch,
    Iteration,
    Plan,
    PlanSnapshot,
    Question,
    ReplanningDelta,
    ResearchFinding,
    ResearchSession,
    Session,
    Signal,
    Task,
    TaskAttempt,
    TaskFile,
)


class SessionViewSet(SessionOrchestrationActions, RalphModelViewSet):
    queryset = selectors.session_list()
    serializer_class = SessionSerializer
    filterset_class = SessionFilterSet
    ordering_fields = ["created_at", "started_at", "updated_at", "status", "state", "key"]
    ordering = ["-created_at"]

    def create_instance(self, data: dict[str, Any]) -> Session:
        return services.session_create(data=data)

    def update_instance(self, instance: Session, data: dict[str, Any]) -> Session:
        return services.session_update(session=instance, data=data)

    def delete_instance(self, instance: Session) -> None:
        services.session_delete(session=instance)


# -- orchestration ----------------------------------------------------------------------------

class IterationViewSet(RalphModelViewSet):
    queryset = Iteration.objects.all()
    serializer_class = api.IterationSerializer
    filterset_class = filters.IterationFilterSet
    ordering_fields = ["number", "started_at", "created_at"]


class PlanViewSet(RalphModelViewSet):
    queryset = Plan.objects.all()
    serializer_class = api.PlanSerializer
    filterset_class = filters.PlanFilterSet
    ordering_fields = ["key", "status", "created_at", "started_at"]


class PlanSnapshotViewSet(RalphModelViewSet):
    queryset = PlanSnapshot.objects.all()
    serializer_class = api.PlanSnapshotSerializer
    filterset_class = filters.PlanSnapshotFilterSet
    ordering_fields = ["iteration_number", "created_at"]


class ReplanningDeltaViewSet(RalphModelViewSet):
    queryset = ReplanningDelta.objects.all()
    serializer_class = api.ReplanningDeltaSerializer
    filterset_class = filters.ReplanningDeltaFilterSet
    ordering_fields = ["created_at"]


class ResearchSessionViewSet(RalphModelViewSet):
    queryset = ResearchSession.objects.all()
    serializer_class = api.ResearchSessionSerializer
    filterset_class = filters.ResearchSessionFilterSet
    ordering_fields = ["started_at", "created_at"]


class ResearchFindingViewSet(RalphModelViewSet):
    queryset = ResearchFinding.objects.all()
    serializer_class = api.ResearchFindingSerializer
    filterset_class = filters.ResearchFindingFilterSet
    ordering_fields = ["recorded_at", "priority"]


class TaskViewSet(RalphModelViewSet):
    queryset = selectors.task_list()
    serializer_class = api.TaskSerializer
    filterset_class = filters.TaskFilterSet
    ordering_fields = ["key", "wave", "sequence", "status", "priority", "created_at", "started_at"]

    def create_instance(self, data: dict[str, Any]) -> Task:
        return self._reloaded(services.task_create(data=data))

    def update_instance(self, instance: Task, data: dict[str, Any]) -> Task:
        return self._reloaded(services.task_update(task=instance, data=data))

    def delete_instance(self, instance: Task) -> None:
        services.task_delete(task=instance)

    def _reloaded(self, task: Task) -> Task:
        return selectors.task_list().get(pk=task.pk)

    def _task_response(self, task: Task) -> Response:
        return Response(self.get_serializer(self._reloaded(task)).data)

    @extend_schema(request=api.TaskStatusInputSerializer, responses=api.TaskSerializer)
    @action(detail=True, methods=["post"])
    def status(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.TaskStatusInputSerializer, request)
        return self._task_response(services.task_status_set(task=self.get_object(), **body))

    @extend_schema(request=api.TaskReportInputSerializer, responses={201: api.TaskAttemptSerializer})
    @action(detail=True, methods=["post"])
    def report(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.TaskReportInputSerializer, request)
        attempt = services.task_attempt_create(data={**body, "task": self.get_object()})
        return Response(api.TaskAttemptSerializer(attempt).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=api.TaskReviewInputSerializer, responses=api.TaskAttemptSerializer)
    @action(detail=True, methods=["post"])
    def review(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.TaskReviewInputSerializer, request)
        attempt = services.task_review_submit(task=self.get_object(), **body)
        return Response(api.TaskAttemptSerializer(attempt).data)

    @extend_schema(request=api.LeaseInputSerializer, responses=api.TaskSerializer)
    @action(detail=True, methods=["post"])
    def heartbeat(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.LeaseInputSerializer, request)
        return self._task_response(services.task_heartbeat(task=self.get_object(), **body))

    @extend_schema(request=api.ReleaseInputSerializer, responses=api.TaskSerializer)
    @action(detail=True, methods=["post"])
    def release(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.ReleaseInputSerializer, request)
        return self._task_response(services.task_release(task=self.get_object(), **body))


class TaskAttemptViewSet(RalphModelViewSet):
    queryset = TaskAttempt.objects.all()
    serializer_class = api.TaskAttemptSerializer
    filterset_class = filters.TaskAttemptFilterSet
    ordering_fields = ["attempt_number", "created_at", "started_at"]

    def create_instance(self, data: dict[str, Any]) -> TaskAttempt:
        return services.task_attempt_create(data=data)

    def update_instance(self, instance: TaskAttempt, data: dict[str, Any]) -> TaskAttempt:
        return services.task_attempt_update(attempt=instance, data=data)

    def delete_instance(self, instance: TaskAttempt) -> None:
        services.task_attempt_delete(attempt=instance)


class TaskFileViewSet(RalphModelViewSet):
    queryset = TaskFile.objects.all()
    serializer_class = api.TaskFileSerializer
    filterset_class = filters.TaskFileFilterSet
    ordering_fields = ["path"]


class QuestionViewSet(RalphModelViewSet):
    queryset = Question.objects.all()
    serializer_class = api.QuestionSerializer
    filterset_class = filters.QuestionFilterSet
    ordering_fields = ["key", "category", "priority", "created_at"]

    @extend_schema(request=api.QuestionAnswerInputSerializer, responses=api.QuestionSerializer)
    @action(detail=True, methods=["post"])
    def answer(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.QuestionAnswerInputSerializer, request)
        agent = body.pop("agent")
        question = services.question_answer(question=self.get_object(), data=body, agent=agent)
        return Response(self.get_serializer(question).data)


class FeedbackBatchViewSet(RalphModelViewSet):
    queryset = selectors.feedback_batch_list()
    serializer_class = api.FeedbackBatchSerializer
    filterset_class = filters.FeedbackBatchFilterSet
    ordering_fields = ["created_at", "batch_timestamp"]

    def create_instance(self, data: dict[str, Any]) -> FeedbackBatch:
        batch = services.feedback_batch_create(data=data)
        return selectors.feedback_batch_list().get(pk=batch.pk)


class FeedbackItemViewSet(RalphModelViewSet):
    queryset = selectors.feedback_item_list()
    serializer_class = api.FeedbackItemSerializer
    filterset_class = filters.FeedbackItemFilterSet
    ordering_fields = ["issue_key", "severity", "created_at"]

    @extend_schema(request=None, responses=api.FeedbackItemSerializer)
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, pk: str | None = None) -> Response:
        return Response(self.get_serializer(services.feedback_item_resolve(item=self.get_object())).data)


class FeedbackAttachmentViewSet(RalphModelViewSet):
    queryset = FeedbackAttachment.objects.all()
    serializer_class = api.FeedbackAttachmentSerializer
    filterset_class = filters.FeedbackAttachmentFilterSet
    ordering_fields = ["file_name", "created_at"]

    def get_serializer_class(self) -> type[api.OrchestrationSerializer]:
        # Lists carry metadata only; the bytes come with one attachment (or raw from download/).
        return api.FeedbackAttachmentMetadataSerializer if self.action == "list" else api.FeedbackAttachmentSerializer

    def filter_queryset(self, queryset: QuerySet[FeedbackAttachment]) -> QuerySet[FeedbackAttachment]:
        queryset = super().filter_queryset(queryset)
        return queryset.defer("content") if self.action == "list" else queryset

    def create_instance(self, data: dict[str, Any]) -> FeedbackAttachment:
        return services.feedback_attachment_create(data=data)

    def update_instance(self, instance: FeedbackAttachment, data: dict[str, Any]) -> FeedbackAttachment:
        return services.feedback_attachment_update(attachment=instance, data=data)

    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk: str | None = None) -> HttpResponse:
        return attachment_download_response(self.get_object())


class SignalViewSet(RalphModelViewSet):
    queryset = Signal.objects.all()
    serializer_class = api.SignalSerializer
    filterset_class = filters.SignalFilterSet
    ordering_fields = ["sent_at", "created_at"]

    def create_instance(self, data: dict[str, Any]) -> Signal:
        return services.signal_create(data=data)


class AgentInvocationViewSet(RalphModelViewSet):
    queryset = AgentInvocation.objects.all()
    serializer_class = api.AgentInvocationSerializer
    filterset_class = filters.AgentInvocationFilterSet
    ordering_fields = ["started_at", "completed_at", "duration_ms", "cost_usd"]

    def create_instance(self, data: dict[str, Any]) -> AgentInvocation:
        return services.agent_invocation_create(data=data)

    def update_instance(self, instance: AgentInvocation, data: dict[str, Any]) -> AgentInvocation:
        return services.agent_invocation_update(invocation=instance, data=data)

    def delete_instance(self, instance: AgentInvocation) -> None:
        services.agent_invocation_delete(invocation=instance)

    @extend_schema(request=api.InvocationCompleteInputSerializer, responses=api.AgentInvocationSerializer)
    @action(detail=True, methods=["post"])
    def complete(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.InvocationCompleteInputSerializer, request)
        invocation = services.agent_invocation_update(invocation=self.get_object(), data=body)
        return Response(self.get_serializer(invocation).data)
