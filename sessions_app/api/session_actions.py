"""The seed 000 session tools and the orchestrator's verbs, as actions on `sessions/{id}/`."""


from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from ralphsite.core.access import current_scope
from ralphsite.core.api.query import query_parameters
from ralphsite.core.api.schema import ErrorSerializer
from ralphsite.core.api.serializers import validated
from sessions_app import selectors
from sessions_app.api import serializers as api
from sessions_app.api.serializers import SessionSerializer
from sessions_app.services.questions import signal_poll
from sessions_app.services.sessions import (
    plan_update,
    session_counter_increment,
    session_finish,
    session_resume,
    session_transition,
    session_waves_store,
)
from sessions_app.services.tasks import task_claim_next


class SessionOrchestrationActions:
    """Mixed into SessionViewSet: each action is one call for an agent or the orchestrator."""

    @extend_schema(request=None, responses=api.PlanOutputSerializer, methods=["GET"], summary="Get a session's plan",
                   description="GetPlan: the session's current plan, the iteration it was written in and the "
                               "iterations whose earlier plans are kept as snapshots.")
    @extend_schema(request=api.PlanInputSerializer, responses=api.PlanOutputSerializer, methods=["PUT"],
                   summary="Write a session's plan",
                   description="UpdatePlan: replace the plan's content. A plan written in an earlier iteration is "
                               "kept as that iteration's snapshot.")
    @action(detail=True, methods=["get", "put"])
    def plan(self, request: Request, pk: str | None = None) -> Response:
        session = self.get_object()
        if request.method == "PUT":
            body = validated(api.PlanInputSerializer, request)
            session = plan_update(session=session, content=body["content"], agent=body["agent"])
        return Response(selectors.session_plan(session=session))

    @extend_schema(responses=api.ProgressSerializer, summary="Get a session's progress",
                   description="The session's tasks counted by status and by wave, each task's state, and the "
                               "tasks blocked by a failed, cancelled or blocked dependency.")
    @action(detail=True, methods=["get"])
    def progress(self, request: Request, pk: str | None = None) -> Response:
        return Response(selectors.session_progress(session=self.get_object()))

    @extend_schema(responses={200: api.WaveSerializer(many=True), 409: ErrorSerializer}, methods=["GET"],
                   summary="Compute a session's waves",
                   description="The waves of the dependency graph (Kahn layering); a cycle is a 409 naming it.")
    @extend_schema(request=None, responses=api.WaveSerializer(many=True), methods=["POST"],
                   summary="Store a session's waves",
                   description="The same waves as GET, also written to each task's `wave`; a cycle is a 409 "
                               "naming it.")
    @action(detail=True, methods=["get", "post"])
    def waves(self, request: Request, pk: str | None = None) -> Response:
        if request.method == "POST":
            return Response(session_waves_store(session=self.get_object()))
        return Response(selectors.session_waves(session=self.get_object()))

    @extend_schema(responses=api.FeedbackBatchSerializer(many=True), summary="List a session's feedback",
                   description="Every feedback batch of the session with its items (all of them, not a page), "
                               "oldest first; `iteration` keeps one iteration's.")
    @query_parameters(api.FeedbackQuerySerializer)
    @action(detail=True, methods=["get"])
    def feedback(self, request: Request, pk: str | None = None) -> Response:
        batches = selectors.session_feedback(session=self.get_object(), iteration_number=self.query.get("iteration"))
        return Response(api.FeedbackBatchSerializer(batches, many=True).data)

    @extend_schema(request=api.AgentInputSerializer, responses={200: api.SignalSerializer, 204: None},
                   summary="Take the next signal",
                   description="PollSignal: the oldest unprocessed signal, marked processed (200), or 204 when "
                               "there is none. Works on a finished session too: its pending signals are still "
                               "delivered.")
    @action(detail=True, methods=["post"], url_path="poll-signal")
    def poll_signal(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.AgentInputSerializer, request)
        signal = signal_poll(session=self.get_object(), agent=body["agent"])
        if signal is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(api.SignalSerializer(signal).data)

    @extend_schema(request=api.TransitionInputSerializer, responses=SessionSerializer,
                   summary="Change a session's orchestrator state",
                   description="The orchestrator's state change, with the iteration, wave and phase it moves to; "
                               "`message` is recorded with the change. The session state lifecycle (the `state` "
                               "field's description) decides: any other change is a 409 `invalid_transition`. "
                               "complete and stopped end the session (completed, stopped) with `message` as its "
                               "exit reason; a finished session is a 409 `session_finished`.")
    @action(detail=True, methods=["post"])
    def transition(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.TransitionInputSerializer, request)
        agent, message = body.pop("agent"), body.pop("message")
        session = session_transition(session=self.get_object(), data=body, agent=agent, message=message)
        return Response(SessionSerializer(session).data)

    @extend_schema(request=api.LeaseInputSerializer, responses={200: api.ClaimedTaskSerializer},
                   summary="Claim the next task")
    @action(detail=True, methods=["post"], url_path="claim-task")
    def claim_task(self, request: Request, pk: str | None = None) -> Response:
        """The next task the plan lets start, in progress and leased to the agent (200). When there is
        none: 409 `nothing_to_claim` whose `details.reason` says why: `all_done`, `waiting` (work in
        progress will unblock more), `blocked` (a failed, cancelled or blocked dependency),
        `at_capacity` (max_concurrency reached, or a sequential task runs or waits to run alone),
        `session_finished`, or `stop` / `paused` (an operator's signal waits for poll-signal/: it comes
        before more work); `details` names the tasks or the signal behind it."""
        body = validated(api.LeaseInputSerializer, request)
        task = task_claim_next(session=self.get_object(), agent=body["agent"],
                               lease_seconds=body["lease_seconds"])
        # The claim saved every changed column of `task`: only its relations need loading.
        return Response(api.ClaimedTaskSerializer(selectors.task_details_load(task=task)).data)

    @extend_schema(responses=SessionSerializer(many=True), summary="List interrupted sessions",
                   description="Running sessions with no activity for `idle_seconds` (their loop stopped without "
                               "finishing them), newest first, a page at a time; `project_path` keeps one "
                               "project's.")
    @query_parameters(api.InterruptedQuerySerializer, paginated=True)
    @action(detail=False, methods=["get"])
    def interrupted(self, request: Request) -> Response:
        sessions = current_scope().filter(selectors.sessions_interrupted(
            idle_seconds=self.query["idle_seconds"], project_path=self.query.get("project_path")))
        page = self.paginate_queryset(sessions)
        return self.get_paginated_response(SessionSerializer(page, many=True).data)

    @extend_schema(request=api.ResumeInputSerializer, responses=api.ResumePointSerializer, summary="Resume a session")
    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        """The resume point of an interrupted (or failed, stopped, aborted) session, which runs again;
        409 `session_completed` for a session that completed, 409 `session_active` for a running
        session written to in the last `idle_seconds` (unless `force`)."""
        body = validated(api.ResumeInputSerializer, request)
        return Response(session_resume(session=self.get_object(), **body))

    @extend_schema(request=api.CounterIncrementInputSerializer, responses=SessionSerializer,
                   summary="Count one more iteration or failure",
                   description="Raises `current_iteration` (a new iteration gets its row) or `consecutive_failures` "
                               "by one, read and written under the session's lock: increments sent at the same "
                               "instant by several agents are all counted, where a read then a PATCH could count "
                               "once (DevTeam's increment_iteration, increment_failures). A finished session is a "
                               "409 `session_finished`.")
    @action(detail=True, methods=["post"])
    def increment(self, request: Request, pk: str | None = None) -> Response:
        body = validated(api.CounterIncrementInputSerializer, request)
        session = session_counter_increment(session=self.get_object(), **body)
        return Response(SessionSerializer(session).data)

    @extend_schema(request=api.FinishInputSerializer, responses=SessionSerializer, summary="Finish a session")
    @action(detail=True, methods=["post"])
    def finish(self, request: Request, pk: str | None = None) -> Response:
        """The session's outcome (a status other than running), once: 409 `session_finished` when it
        has already finished."""
        body = validated(api.FinishInputSerializer, request)
        session = session_finish(session=self.get_object(), **body)
        return Response(SessionSerializer(session).data)
