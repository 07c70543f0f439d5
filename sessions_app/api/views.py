from typing import Any

from django.db import IntegrityError
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.validators import UniqueTogetherValidator

from ralphsite.core.access import current_scope
from ralphsite.core.addressing import as_ulid, by_reference
from ralphsite.core.api.permissions import write_check
from ralphsite.core.api.query import query_parameters
from ralphsite.core.api.serializers import RalphModelSerializer, validated
from ralphsite.core.api.viewsets import RalphModelViewSet
from ralphsite.core.errors import InvalidInput, NotFound
from sessions_app import selectors
from sessions_app.api import filters, serializers
from sessions_app.api import serializers as api
from sessions_app.api.filters import SessionFilterSet
from sessions_app.api.serializers import SessionSerializer
from sessions_app.api.session_actions import SessionOrchestrationActions
from sessions_app.downloads import attachment_download_response
from sessions_app.models import (
    AgentInvocation,
    FeedbackAttachment,
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
from sessions_app.services.devteam import (
    acceptance_criterion_verify,
    context_budget_record_usage,
    interview_question_answer,
    loop_run_finish,
    loop_run_iterate,
)
from sessions_app.services.questions import feedback_item_resolve, question_answer
from sessions_app.services.sessions import session_state_set
from sessions_app.services.tasks import (
    task_heartbeat,
    task_release,
    task_report_submit,
    task_review_submit,
    task_status_set,
)
from sessions_app.services.usage import agent_invocation_update


class SessionViewSet(SessionOrchestrationActions, RalphModelViewSet):
    queryset = selectors.session_list()
    serializer_class = SessionSerializer
    filterset_class = SessionFilterSet
    ordering_fields = ["created_at", "started_at", "updated_at", "status", "state", "key"]
    ordering = ["-created_at"]


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------


class SessionStateEntryViewSet(RalphModelViewSet):
    """DevTeam's key/value session state. Read a key with `?session=<id>&key=<key>`; write one with
    `POST session-state/set/` (an upsert)."""

    queryset = selectors.session_state_list()
    serializer_class = serializers.SessionStateEntrySerializer
    filterset_class = filters.SessionStateEntryFilterSet
    ordering_fields = ["key", "created_at", "updated_at"]

    @extend_schema(request=serializers.SessionStateSetSerializer,
                   responses={200: serializers.SessionStateEntrySerializer,
                              201: serializers.SessionStateEntrySerializer},
                   summary="Set a session state key",
                   description="Set one key of a session's state in one call: creates the entry (201) or "
                               "replaces its value (200).")
    @action(detail=False, methods=["post"], url_path="set")
    def set_value(self, request: Request) -> Response:
        data = serializers.SessionStateSetSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry, created = session_state_set(**data.validated_data)
        return Response(self.get_serializer(entry).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class SessionPhaseViewSet(RalphModelViewSet):
    queryset = selectors.session_phase_list()
    serializer_class = serializers.SessionPhaseSerializer
    filterset_class = filters.SessionPhaseFilterSet
    ordering_fields = ["created_at", "phase_type"]


class ProgressSummaryViewSet(RalphModelViewSet):
    queryset = selectors.progress_summary_list()
    serializer_class = serializers.ProgressSummarySerializer
    filterset_class = filters.ProgressSummaryFilterSet
    ordering_fields = ["created_at", "to_iteration"]


class BugViewSet(RalphModelViewSet):
    queryset = selectors.bug_list()
    serializer_class = serializers.BugSerializer
    filterset_class = filters.BugFilterSet
    ordering_fields = ["created_at", "resolved_at", "severity", "status"]


class EscalationViewSet(RalphModelViewSet):
    queryset = selectors.escalation_list()
    serializer_class = serializers.EscalationSerializer
    filterset_class = filters.EscalationFilterSet
    ordering_fields = ["timestamp", "created_at"]


class AcceptanceCriterionViewSet(RalphModelViewSet):
    queryset = selectors.acceptance_criterion_list()
    serializer_class = serializers.AcceptanceCriterionSerializer
    filterset_class = filters.AcceptanceCriterionFilterSet
    ordering_fields = ["plan_key", "key", "sequence", "created_at", "verified_at"]

    @extend_schema(request=serializers.CriterionVerifySerializer,
                   responses={200: serializers.AcceptanceCriterionSerializer},
                   summary="Verify an acceptance criterion",
                   description="Record a verification: a pass sets verified_at; a fail increments "
                               "failure_count and stores failure_reason as last_failure_reason.")
    @action(detail=True, methods=["post"])
    def verify(self, request: Request, pk: str) -> Response:
        criterion = self.get_object()
        data = serializers.CriterionVerifySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        criterion = acceptance_criterion_verify(criterion_id=criterion.pk, **data.validated_data)
        return Response(self.get_serializer(criterion).data)


class FeatureViewSet(RalphModelViewSet):
    queryset = selectors.feature_list()
    serializer_class = serializers.FeatureSerializer
    filterset_class = filters.FeatureFilterSet
    ordering_fields = ["plan_key", "key", "sequence", "created_at", "verified_at"]


class ContextBudgetViewSet(RalphModelViewSet):
    queryset = selectors.context_budget_list()
    serializer_class = serializers.ContextBudgetSerializer
    filterset_class = filters.ContextBudgetFilterSet
    ordering_fields = ["model", "usage_percent", "updated_at"]

    @extend_schema(request=serializers.ContextUsageSerializer, responses={200: serializers.ContextBudgetSerializer},
                   summary="Record context usage",
                   description="Record the context usage (`current_usage`) or add to it (`tokens_added`); "
                               "usage_percent and status are recomputed.")
    @action(detail=True, methods=["post"], url_path="record-usage")
    def record_usage(self, request: Request, pk: str) -> Response:
        budget = self.get_object()
        data = serializers.ContextUsageSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        budget = context_budget_record_usage(budget_id=budget.pk, **data.validated_data)
        return Response(self.get_serializer(budget).data)


class ContextSnapshotViewSet(RalphModelViewSet):
    queryset = selectors.context_snapshot_list()
    serializer_class = serializers.ContextSnapshotSerializer
    filterset_class = filters.ContextSnapshotFilterSet
    ordering_fields = ["created_at", "tokens_saved"]


class InterviewViewSet(RalphModelViewSet):
    queryset = selectors.interview_list()
    serializer_class = serializers.InterviewSerializer
    filterset_class = filters.InterviewFilterSet
    ordering_fields = ["started_at", "completed_at", "created_at"]


class InterviewQuestionViewSet(RalphModelViewSet):
    queryset = selectors.interview_question_list()
    serializer_class = serializers.InterviewQuestionSerializer
    filterset_class = filters.InterviewQuestionFilterSet
    ordering_fields = ["sequence", "created_at", "responded_at"]

    @extend_schema(request=serializers.InterviewAnswerSerializer,
                   responses={200: serializers.InterviewQuestionSerializer},
                   summary="Answer an interview question",
                   description="Record the response; sets responded_at and the interview's questions_answered.")
    @action(detail=True, methods=["post"])
    def answer(self, request: Request, pk: str) -> Response:
        question = self.get_object()
        data = serializers.InterviewAnswerSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        question = interview_question_answer(question_id=question.pk, **data.validated_data)
        return Response(self.get_serializer(question).data)


class LoopRunViewSet(RalphModelViewSet):
    """ralph-mem loop runs: create one running, `iterate` once per loop iteration, then `finish`."""

    queryset = selectors.loop_run_list()
    serializer_class = serializers.LoopRunSerializer
    filterset_class = filters.LoopRunFilterSet
    ordering_fields = ["started_at", "ended_at", "iterations"]

    @extend_schema(request=None, responses={200: serializers.LoopRunSerializer},
                   summary="Count a loop iteration",
                   description="Count one more iteration of a running loop; 409 once max_iterations is "
                               "reached or when the loop is no longer running.")
    @action(detail=True, methods=["post"])
    def iterate(self, request: Request, pk: str) -> Response:
        loop_run = loop_run_iterate(loop_run_id=self.get_object().pk)
        return Response(self.get_serializer(loop_run).data)

    @extend_schema(request=serializers.LoopRunFinishSerializer, responses={200: serializers.LoopRunSerializer},
                   summary="Finish a loop run",
                   description="End a running loop with its outcome (success, failed or stopped); 409 when it "
                               "has already ended.")
    @action(detail=True, methods=["post"])
    def finish(self, request: Request, pk: str) -> Response:
        loop_run = self.get_object()
        data = serializers.LoopRunFinishSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        loop_run = loop_run_finish(loop_run_id=loop_run.pk, **data.validated_data)
        return Response(self.get_serializer(loop_run).data)
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


class NamedWithinSession:
    """Mixed into the flat viewset of rows whose key is unique within their session only (tasks, questions):
    `<rows>/{id}/` takes the id, and a value that is no id is a 404 saying where the key is taken (a new user
    tries `questions/Q-TECH-001/answer/`). The words depend on the value's shape only, not on any row."""

    rows_in_session = ""  # the path segment of its nested routes: `sessions/{session}/<rows>/{key}/`

    def get_object(self) -> Any:
        value = self.kwargs["pk"]
        if as_ulid(value) is None:
            raise NotFound(f"{value!r} is not an id. A key names one within its session: "
                           f"/api/v1/sessions/{{session}}/{self.rows_in_session}/{value}/.", details={"id": value})
        return super().get_object()


class TaskViewSet(NamedWithinSession, RalphModelViewSet):
    rows_in_session = "tasks"
    queryset = selectors.task_list()
    reread_written_rows = True
    serializer_class = api.TaskSerializer
    filterset_class = filters.TaskFilterSet
    ordering_fields = ["key", "wave", "sequence", "status", "priority", "created_at", "started_at"]

    def _reloaded(self, task: Task) -> Task:
        return selectors.task_list().get(pk=task.pk)

    @extend_schema(summary="Delete a task",
                   description="The task with its attempts, files and own dependency edges. A task others depend "
                               "on is a 409 `has_dependents` naming them; a claimed task is deleted under its "
                               "claim only: send `?claim=` (409 `stale_claim` when no longer current, "
                               "`claim_required` without it unless the token is the holder's agent's).")
    @query_parameters(api.TaskDeleteQuerySerializer)
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().destroy(request, *args, **kwargs)

    def write_options(self, verb: str) -> dict[str, Any]:
        return {"claim": self.query.get("claim")} if verb == "delete" else {}

    def _task_response(self, task: Task) -> Response:
        return Response(self.get_serializer(self._reloaded(task)).data)

    @extend_schema(request=api.TaskStatusInputSerializer, responses=api.TaskSerializer, summary="Set a task's status",
                   description="UpdateTaskStatus: the new status with an optional annotation; the times it implies "
                               "(completed) are set. A change the task lifecycle (the `status` field's description) "
                               "does not allow is a 409 `invalid_transition` naming the allowed next statuses; "
                               "only claim-task puts a task in progress (409 `claim_required`); a task completes "
                               "after the tasks it depends on (409 `dependencies_unfinished`). On a claimed task "
                               "send its `claim` (409 `stale_claim` when no longer current).")
    @action(detail=True, methods=["post"])
    def status(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.TaskStatusInputSerializer, request)
        return self._task_response(task_status_set(task=self.get_object(), **body))

    @extend_schema(request=api.TaskReportInputSerializer,
                   responses={201: api.TaskAttemptSerializer, 200: api.TaskAttemptSerializer},
                   summary="Report an implementation attempt",
                   description="Record an attempt at the task with its implementation report (201, the attempt); "
                               "attempts are numbered per task. An `attempt_number` the task already has names that "
                               "attempt (200): the report describes it, so its tokens and cost are that attempt's "
                               "one call, not another; a different report on an attempt already reported is a 409 "
                               "`attempt_reported`.")
    @action(detail=True, methods=["post"])
    def report(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.TaskReportInputSerializer, request)
        claim = body.pop("claim")
        attempt, created = task_report_submit(task=self.get_object(), data=body, claim=claim)
        return Response(api.TaskAttemptSerializer(attempt).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=api.TaskReviewInputSerializer, responses=api.TaskAttemptSerializer,
                   summary="Submit a task review",
                   description="SubmitReview: the review and verdict go on the task's latest attempt (409 when it has "
                               "none). The reviewer needs no claim: with `complete`, a `qualified` verdict also "
                               "completes the task; with `send_back`, a `failed` one returns it to not_started; "
                               "otherwise the status is left to the orchestrator.")
    @action(detail=True, methods=["post"])
    def review(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.TaskReviewInputSerializer, request)
        attempt = task_review_submit(task=self.get_object(), **body)
        return Response(api.TaskAttemptSerializer(attempt).data)

    @extend_schema(request=api.HeartbeatInputSerializer, responses=api.TaskSerializer,
                   summary="Extend a task's lease",
                   description="Extend the lease of a task you claimed by `lease_seconds` from now, under your "
                               "`claim`; 409 `stale_claim` when the claim is no longer current, `not_claim_holder` "
                               "when `agent` does not hold it.")
    @action(detail=True, methods=["post"])
    def heartbeat(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.HeartbeatInputSerializer, request)
        return self._task_response(task_heartbeat(task=self.get_object(), **body))

    @extend_schema(request=api.ReleaseInputSerializer, responses=api.TaskSerializer, summary="Release a claimed task",
                   description="Give a claimed task back: not started again, assigned to nobody, claimable by "
                               "anyone; 409 when `agent` does not hold the claim, `stale_claim` when `claim` is no "
                               "longer current.")
    @action(detail=True, methods=["post"])
    def release(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.ReleaseInputSerializer, request)
        return self._task_response(task_release(task=self.get_object(), **body))


class SessionNestedRows:
    """Mixed into a viewset of rows named within their session, `sessions/{session}/<rows>/{row}/`: the session
    by id or key, the row by id or by its `path_key` (unique within a session); the same routes as the flat
    `<rows>/{id}/`, whose actions take the row only."""

    detail_routes_only = True
    filterset_class = None  # no list: a row is one of its session
    path_key = "key"  # the row's field that names it in the path besides its id (the schema says so)
    session_reference = ""

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        self.session_reference = kwargs.pop("session", "")
        return super().dispatch(request, *args, **kwargs)

    def path_session(self) -> Session:
        """The path's session, by id, key or a seed tool's id, in the request's scope (404 otherwise)."""
        session = by_reference(current_scope().filter(Session.objects.all()), self.session_reference)
        if session is None:
            raise Http404
        return session

    def path_row(self, session: Session) -> Any:
        """The path's row of `session`, by id or key; None when it has none."""
        return by_reference(self.get_queryset().filter(session=session), self.kwargs["pk"], key_field=self.path_key)

    def get_object(self) -> Any:
        row = self.path_row(self.path_session())
        if row is None:
            raise Http404
        self.check_object_permissions(self.request, row)
        return row

    def scoped_row(self) -> Any:
        # The path names the row by key within its session: the nested lookup scopes both (a scoped token's
        # task routes by key answered 404 through the base lookup, issue #27 §4).
        return self.get_object()


class SessionTaskViewSet(SessionNestedRows, TaskViewSet):
    """A task named within its session, `sessions/{session}/tasks/{task}/`: the same routes as `tasks/{id}/`,
    and a PUT that creates the task its path names (ralphy's `updateTaskState(run, task, partial)`)."""

    @extend_schema(request=api.TaskSerializer(partial=True), responses={200: api.TaskSerializer,
                                                                         201: api.TaskSerializer},
                   summary="Create or update a task by its key",
                   description="ralphy's updateTaskState(run, task, partial): the fields sent are set on the task "
                               "the path names (200); a key the session has no task of yet creates it (201) with "
                               "the path's session and key, the fields sent, and its title the key unless one is "
                               "sent. Through the same verbs as POST tasks/ and PATCH (the status lifecycle, the "
                               "session open, the token's scope and permissions: creating needs the add "
                               "permission). A body naming another session or key than the path is a 400; "
                               "concurrent PUTs of one new key create one task (the others update it).")
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if kwargs.get("partial"):  # PATCH updates the task the path names (404 when there is none)
            return super().update(request, *args, **kwargs)
        session = self.path_session()
        task = self.path_row(session)
        if task is None and as_ulid(self.kwargs["pk"]) is None:  # an id names a task that exists, a key one to be
            try:
                return self._task_put_create(request, session)
            except IntegrityError:
                # A concurrent PUT of the same key created the task first (the key is unique in its session, a
                # database constraint): this PUT updates it, as it would have a moment later.
                task = self.path_row(session)
                if task is None:
                    raise
        if task is None:
            raise Http404
        self.check_object_permissions(request, task)
        return self._task_put_update(request, task, session)

    def _task_put_create(self, request: Request, session: Session) -> Response:
        write_check(current_scope(), Task, "create")  # what a POST of the task needs (the route's PUT: change)
        key = self.kwargs["pk"]
        body = dict(request.data) if isinstance(request.data, dict) else request.data
        if isinstance(body, dict):
            if not {"session", "run_id"} & set(body):
                body["session"] = session.pk
            body.setdefault("key", key)
            body.setdefault("title", key)  # ralphy's tasks have none: the import names them so too
        serializer = self.get_serializer(data=body)
        # The path names the task: the database's (session, key) constraint decides a concurrent create.
        serializer.validators = [v for v in serializer.validators if not isinstance(v, UniqueTogetherValidator)]
        serializer.is_valid(raise_exception=True)
        self._path_agrees(serializer.validated_data, session)
        self.perform_create(serializer)
        return Response(self.get_serializer(serializer.instance).data, status=status.HTTP_201_CREATED)

    def _task_put_update(self, request: Request, task: Task, session: Session) -> Response:
        serializer = self.get_serializer(task, data=request.data, partial=True)  # ralphy sends a partial state
        serializer.is_valid(raise_exception=True)
        self._path_agrees(serializer.validated_data, session)
        self.perform_update(serializer)
        return Response(self.get_serializer(serializer.instance).data)

    def _path_agrees(self, data: dict[str, Any], session: Session) -> None:
        """A PUT body naming another session or key than its path is refused: which task it writes is the path's."""
        errors = {}
        if "session" in data and data["session"] != session:
            errors["session"] = ["The path names the task's session: send the same one, or none."]
        if "key" in data and data["key"] != self.kwargs["pk"] and as_ulid(self.kwargs["pk"]) is None:
            errors["key"] = ["The path names the task's key: send the same one, or none (PATCH renames a task)."]
        if errors:
            raise InvalidInput(f"{next(iter(errors))}: {next(iter(errors.values()))[0]}", details=errors)


@extend_schema_view(create=extend_schema(
    responses={201: api.TaskAttemptSerializer, 200: api.TaskAttemptSerializer},
    description="Record an attempt at a task (201, the attempt); attempts are numbered per task. An "
                "`attempt_number` the task already has names that attempt (200, as `tasks/{id}/report/` answers): "
                "the body describes it, so its tokens and cost are that attempt's one call, not another."))
class TaskAttemptViewSet(RalphModelViewSet):
    queryset = TaskAttempt.objects.all()
    serializer_class = api.TaskAttemptSerializer
    filterset_class = filters.TaskAttemptFilterSet
    ordering_fields = ["attempt_number", "created_at", "started_at"]


class TaskFileViewSet(RalphModelViewSet):
    queryset = TaskFile.objects.all()
    serializer_class = api.TaskFileSerializer
    filterset_class = filters.TaskFileFilterSet
    ordering_fields = ["path"]


class QuestionViewSet(NamedWithinSession, RalphModelViewSet):
    rows_in_session = "questions"
    queryset = Question.objects.all()
    serializer_class = api.QuestionSerializer
    filterset_class = filters.QuestionFilterSet
    ordering_fields = ["key", "category", "priority", "created_at"]

    @extend_schema(request=api.QuestionAnswerInputSerializer, responses=api.QuestionSerializer,
                   summary="Answer a question",
                   description="AnswerQuestion: the answer with its source, confidence and implication; the "
                               "question becomes answered. A second answer is a 409 `already_answered` unless it "
                               "says `replace: true` (the replaced answer stays in the ledger's event).")
    @action(detail=True, methods=["post"])
    def answer(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.QuestionAnswerInputSerializer, request)
        agent, replace = body.pop("agent"), body.pop("replace")
        question = question_answer(question=self.get_object(), data=body, agent=agent, replace=replace)
        return Response(self.get_serializer(question).data)


class SessionQuestionViewSet(SessionNestedRows, QuestionViewSet):
    """A question named within its session, `sessions/{session}/questions/{question}/` (Q-TECH-001): the same
    routes as `questions/{id}/`."""


class FeedbackBatchViewSet(RalphModelViewSet):
    queryset = selectors.feedback_batch_list()
    reread_written_rows = True
    serializer_class = api.FeedbackBatchSerializer
    filterset_class = filters.FeedbackBatchFilterSet
    ordering_fields = ["created_at", "batch_timestamp"]


class FeedbackItemViewSet(RalphModelViewSet):
    queryset = selectors.feedback_item_list()
    serializer_class = api.FeedbackItemSerializer
    filterset_class = filters.FeedbackItemFilterSet
    ordering_fields = ["issue_key", "severity", "created_at"]

    @extend_schema(request=None, responses=api.FeedbackItemSerializer, summary="Resolve a feedback item",
                   description="Mark the item resolved (now); resolving a resolved item changes nothing.")
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, pk: str | None = None) -> Response:
        return Response(self.get_serializer(feedback_item_resolve(item=self.get_object())).data)


class FeedbackAttachmentViewSet(RalphModelViewSet):
    queryset = FeedbackAttachment.objects.all()
    serializer_class = api.FeedbackAttachmentSerializer
    filterset_class = filters.FeedbackAttachmentFilterSet
    ordering_fields = ["file_name", "created_at"]

    def get_serializer_class(self) -> type[RalphModelSerializer]:
        # Lists carry metadata only; the bytes come with one attachment (or raw from download/).
        return api.FeedbackAttachmentMetadataSerializer if self.action == "list" else api.FeedbackAttachmentSerializer

    def filter_queryset(self, queryset: QuerySet[FeedbackAttachment]) -> QuerySet[FeedbackAttachment]:
        queryset = super().filter_queryset(queryset)
        return queryset.defer("content") if self.action == "list" else queryset

    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY},
                   summary="Download a feedback attachment",
                   description="The attachment's bytes as a file download, with its file name and content type.")
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk: str | None = None) -> HttpResponse:
        return attachment_download_response(self.get_object())


class SignalViewSet(RalphModelViewSet):
    queryset = Signal.objects.all()
    serializer_class = api.SignalSerializer
    filterset_class = filters.SignalFilterSet
    ordering_fields = ["sent_at", "created_at"]


class AgentInvocationViewSet(RalphModelViewSet):
    queryset = AgentInvocation.objects.all()
    serializer_class = api.AgentInvocationSerializer
    filterset_class = filters.AgentInvocationFilterSet
    ordering_fields = ["started_at", "completed_at", "duration_ms", "cost_usd"]

    @extend_schema(request=api.InvocationCompleteInputSerializer, responses=api.AgentInvocationSerializer,
                   summary="Complete an agent invocation",
                   description="Record how the invocation ended: response, status, tokens, cost and duration; the "
                               "session's totals move by the difference.")
    @action(detail=True, methods=["post"])
    def complete(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.InvocationCompleteInputSerializer, request)
        invocation = agent_invocation_update(invocation=self.get_object(), data=body)
        return Response(self.get_serializer(invocation).data)
