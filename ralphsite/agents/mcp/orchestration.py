"""The orchestrator's tools: what Ralph V2's OrchestratorStateMachine does to the database (seed 000:
TransitionStateAsync, ComputeWavesAsync, the iterations' planning and review, feedback batches, agent
invocations), so that one agent can run a whole loop through MCP alone.

As in `tools`, each tool validates with its REST twin's serializer (named in its comment) and calls
the same service.
"""

from typing import Any

from ralphsite.agents.mcp import schemas as out
from ralphsite.agents.mcp.registry import (
    AGENT,
    Arg,
    ToolCall,
    choice,
    cost,
    count,
    flag,
    integer,
    objects,
    pick,
    strings,
    text,
    tool,
)
from ralphsite.agents.mcp.tools import REQUEST_ID, feedback_batch_result, feedback_item_result
from ralphsite.core.api.viewsets import written_in_scope
from ralphsite.core.errors import InvalidInput, NotFound
from ralphsite.core.writes import writes_for
from sessions_app import selectors
from sessions_app.api import serializers as api
from sessions_app.models import (
    FINISHED_SESSION_STATUSES,
    AgentInvocation,
    AgentRole,
    CommandType,
    ExecutionMode,
    FeedbackBatch,
    FeedbackItem,
    FeedbackSeverity,
    InvocationStatus,
    Iteration,
    OrchestratorState,
    ReplanningDelta,
    Session,
    Task,
)
from sessions_app.services.questions import feedback_batch_create, feedback_item_resolve
from sessions_app.services.sessions import (
    iteration_update,
    session_create,
    session_finish,
    session_transition,
    session_waves_store,
)
from sessions_app.services.usage import agent_invocation_create, agent_invocation_update

_SESSION = ("id", "key", "user_request", "state", "status", "current_iteration", "current_wave", "current_phase",
            "default_model", "max_concurrency", "project_path", "exit_reason", "summary", "started_at", "ended_at",
            "total_tokens_input", "total_tokens_output", "total_cost_usd")
_ITERATION = ("number", "planning_complete", "planning_completed_at", "tasks_defined", "review_content",
              "started_at", "completed_at")
_INVOCATION = ("id", "role", "agent", "mode", "model", "task_key", "status", "tokens_input", "tokens_output",
               "cost_usd", "is_estimated", "duration_ms", "started_at", "completed_at")


def session_result(session: Session) -> dict[str, Any]:
    data = pick(api.SessionSerializer(session).data, _SESSION)
    # Required in the result even when zero or blank (pick drops only empty strings and nulls).
    return {"id": session.pk, "state": session.state, "status": session.status,
            "current_iteration": session.current_iteration, **data}


def invocation_result(invocation: AgentInvocation) -> dict[str, Any]:
    return {"id": invocation.pk, "status": invocation.status,
            **pick(api.AgentInvocationSerializer(invocation).data, _INVOCATION)}


SESSION_STATE = choice("The orchestrator state it moves to (complete and stopped end the session).",
                       OrchestratorState, required=True)
ITERATION_NUMBER = integer("The iteration's number (1, 2, …).", required=True, minimum=1)


@tool("create_session", "Create a session", "Start a loop: a new session (state initializing, status running) "
      "with its iteration 1; name it by its key afterwards. A project token creates sessions of its project only.",
      writes=Session, session_bound=False, output=out.SESSION,
      key=text("A human key for the session, unique (not shaped like an id).", max_length=100),
      user_request=text("What the user asked for: the loop's goal."),
      project_path=text("The project it works on (a project token's own project).", max_length=1000),
      default_model=text("The model agents use unless told otherwise.", max_length=100),
      max_concurrency=integer("At most this many tasks in progress at once (default 2).", minimum=1),
      max_iterations=integer("The iteration limit (default 10).", minimum=1),
      command=text("The command the session runs.", max_length=500),
      command_type=choice("DevTeam's command type.", CommandType),
      execution_mode=choice("normal or eco.", ExecutionMode))
def create_session(call: ToolCall) -> Any:  # POST sessions/
    data = call.validated(api.SessionSerializer)
    return session_result(written_in_scope(lambda: session_create(data=data), noun="session"))


@tool("get_session", "Get the session", "Read the session: orchestrator state, status, current iteration, wave "
      "and phase, and its token and cost totals.", writes=None, reads=(Session,), output=out.SESSION)
def get_session(call: ToolCall) -> Any:  # GET sessions/{id}/
    return session_result(call.session())


@tool("transition_session", "Move the orchestrator", "Change the orchestrator state (planning, batching, "
      "executing_batch, reviewing_batch, session_review, replanning, …) with the iteration, wave and phase it moves "
      "to; a new iteration number gets its row. complete and stopped end the session, message as the exit reason.",
      writes=Session, action="update", output=out.SESSION,
      state=SESSION_STATE, current_iteration=integer("The iteration it moves to.", minimum=1),
      current_wave=integer("The wave it moves to."), current_phase=text("The phase, free text.", max_length=100),
      message=text("Why, recorded with the change."), agent=AGENT)
def transition_session(call: ToolCall) -> Any:  # POST sessions/{id}/transition/
    body = call.validated(api.TransitionInputSerializer)
    agent, message = body.pop("agent"), body.pop("message")
    return session_result(session_transition(session=call.session(), data=body, agent=agent, message=message))


@tool("finish_session", "Finish the session", "End the session with its outcome, once: tasks still in progress are "
      "released and every later write but the summary is refused (session_finished).",
      writes=Session, action="update", destructive=True, output=out.SESSION,
      status=choice("The outcome.", sorted(FINISHED_SESSION_STATUSES), required=True),
      exit_reason=text("Why it ended.", max_length=200), summary=text("What the session did."), agent=AGENT)
def finish_session(call: ToolCall) -> Any:  # POST sessions/{id}/finish/
    return session_result(session_finish(session=call.session(), **call.validated(api.FinishInputSerializer)))


def _iteration(call: ToolCall, number: int) -> Iteration:
    iteration = Iteration.objects.filter(session=call.session(), number=number).first()
    if iteration is None:
        raise NotFound(f"No iteration {number} in this session (transition_session moves to a new one).",
                       details={"number": number})
    return iteration


@tool("update_iteration", "Update an iteration", "Record an iteration's planning (planning_complete, "
      "tasks_defined) and its review (review_content, completed_at); planning_completed_at follows "
      "planning_complete.", writes=Iteration, action="update", destructive=True, idempotent=True,
      output=out.ITERATION, number=ITERATION_NUMBER,
      planning_complete=flag("The planning of this iteration is complete."),
      tasks_defined=integer("How many tasks the planning defined."),
      review_content=text("The iteration's review (markdown), replacing an earlier one."),
      completed_at=Arg({"type": "string", "format": "date-time", "description": "When the iteration completed."}))
def update_iteration(call: ToolCall) -> Any:  # PATCH iterations/{id}/
    iteration = _iteration(call, call.arguments["number"])
    iteration = iteration_update(iteration=iteration, data=call.validated(api.IterationSerializer, instance=iteration))
    return {"number": iteration.number, "planning_complete": iteration.planning_complete,
            **pick(api.IterationSerializer(iteration).data, _ITERATION)}


@tool("store_waves", "Store the waves", "Compute the waves of the task graph (as get_waves) and write each task's "
      "wave number; a dependency cycle is refused naming it.", writes=Task, action="update", idempotent=True,
      output=out.WAVES)
def store_waves(call: ToolCall) -> Any:  # POST sessions/{id}/waves/
    return {"waves": session_waves_store(session=call.session())}


_DELTA = ("previous_plan_snapshot_ref", "summary", "removed_items", "added_items", "modified_items", "rationale")


@tool("record_replanning", "Record a replanning", "Record what a replanning changed in an iteration (once per "
      "iteration): the plan it started from, what was removed, added and modified, and why.",
      writes=ReplanningDelta, output=out.obj(required=("iteration",), iteration=out.INTEGER,
                                             **{name: out.STRING for name in _DELTA}),
      iteration=integer("The iteration it replans (default: the current one).", minimum=1),
      previous_plan_snapshot_ref=text("The plan it started from, e.g. plan.iteration-1.", max_length=200),
      summary=text("What changed, in a few lines."), removed_items=text("What was removed (markdown)."),
      added_items=text("What was added (markdown)."), modified_items=text("What was modified (markdown)."),
      rationale=text("Why."))
def record_replanning(call: ToolCall) -> Any:  # POST replanning-deltas/
    iteration = _iteration(call, call.arguments.get("iteration", call.session().current_iteration))
    delta = writes_for(ReplanningDelta).create(call.validated(api.ReplanningDeltaSerializer, iteration=iteration.pk))
    return {"iteration": iteration.number, **pick(api.ReplanningDeltaSerializer(delta).data, _DELTA)}


FEEDBACK_ITEM = {"type": "object", "additionalProperties": False, "required": ["issue_key", "severity", "description"],
                 "properties": {
                     "issue_key": {"type": "string", "maxLength": 100, "description": "e.g. ISS-001, unique in the "
                                                                                      "batch."},
                     "severity": {"type": "string", "enum": list(FeedbackSeverity.values)},
                     "description": {"type": "string"}, "evidence": {"type": "string"},
                     "suggested_fix": {"type": "string"}}}


@tool("create_feedback", "Record human feedback", "Record a batch of human feedback on an iteration (its issues with "
      "severity, evidence and suggested fix); the planner replans from it and resolves each item.",
      writes=FeedbackBatch, output=out.FEEDBACK_BATCH,
      batch_timestamp=text("The batch's name, e.g. 20260209-143000.", required=True, max_length=32),
      iteration=integer("The iteration it is about (default: the current one).", minimum=1),
      summary=text("The batch in a few lines."),
      items=objects("The issues.", FEEDBACK_ITEM, required=True))
def create_feedback(call: ToolCall) -> Any:  # POST feedback-batches/
    session = call.session()
    iteration = _iteration(call, call.arguments.get("iteration", session.current_iteration))
    batch = feedback_batch_create(data=call.validated(api.FeedbackBatchSerializer, iteration=iteration.pk))
    return feedback_batch_result(selectors.feedback_batch_list().select_related("iteration").get(pk=batch.pk))


@tool("resolve_feedback", "Resolve a feedback item", "Mark a feedback item resolved (its issue is addressed); "
      "resolving it again changes nothing.", writes=FeedbackItem, action="update", idempotent=True,
      output=out.FEEDBACK_ITEM,
      item=text("The item's issue key, e.g. ISS-001.", required=True),
      batch=text("The batch's name, when several batches have an item of that key."))
def resolve_feedback(call: ToolCall) -> Any:  # POST feedback-items/{id}/resolve/
    items = FeedbackItem.objects.filter(batch__session=call.session(), issue_key=call.arguments["item"])
    if "batch" in call.arguments:
        items = items.filter(batch__batch_timestamp=call.arguments["batch"])
    found = list(items[:2])
    if not found:
        raise NotFound(f"No feedback item {call.arguments['item']!r} here.", details={"item": call.arguments["item"]})
    if len(found) > 1:
        raise InvalidInput("Several batches have an item of that key: name the batch.",
                           details={"batch": ["Required: several batches have this item."]})
    return feedback_item_result(feedback_item_resolve(item=found[0]))


@tool("start_invocation", "Log an agent invocation", "Log that an agent (planner, questioner, executor, reviewer) "
      "was invoked, with its prompt; complete_invocation records how it ended. Answers the invocation's id.",
      writes=AgentInvocation, output=out.INVOCATION,
      role=choice("The agent's role.", AgentRole), agent=AGENT,
      mode=text("The mode, e.g. INITIALIZE, brainstorm.", max_length=100),
      model=text("The model.", max_length=100), prompt=text("The prompt it was given."),
      task_key=text("The task it works on (none for planning).", max_length=100),
      iteration=integer("The iteration."), attempt=integer("The attempt number.", minimum=1),
      status=choice("Its status now (default started).", InvocationStatus))
def start_invocation(call: ToolCall) -> Any:  # POST agent-invocations/
    return invocation_result(agent_invocation_create(data=call.validated(api.AgentInvocationSerializer,
                                                                          session=call.session().pk)))


@tool("complete_invocation", "Complete an agent invocation", "Record how an invocation ended: status, response, "
      "tokens, cost and duration; the session's totals move by the difference (a call already reported with the same "
      "request_id is counted once).", writes=AgentInvocation, action="update", idempotent=True,
      output=out.INVOCATION,
      invocation=text("The id start_invocation answered.", required=True),
      status=choice("How it ended.", InvocationStatus, required=True), response=text("The agent's answer."),
      error_message=text("What went wrong."), error_type=text("The kind of error.", max_length=100),
      tokens_input=count("Input tokens."), tokens_output=count("Output tokens."), cost_usd=cost("Cost in USD."),
      request_id=REQUEST_ID, duration_ms=count("How long it ran, in ms."),
      files_changed=strings("The files it changed."), output_summary=text("Its outcome in a line."))
def complete_invocation(call: ToolCall) -> Any:  # POST agent-invocations/{id}/complete/
    invocation = AgentInvocation.objects.filter(session=call.session(), pk=call.arguments["invocation"]).first()
    if invocation is None:
        raise NotFound(f"No invocation {call.arguments['invocation']!r} here.",
                       details={"invocation": call.arguments["invocation"]})
    body = call.validated(api.InvocationCompleteInputSerializer)
    return invocation_result(agent_invocation_update(invocation=invocation, data=body))
