"""The tools: seed 000's session tools, the loop's other verbs, and memory (seed 004).

Each tool validates its arguments with the serializer of its REST twin (named in its comment) and
calls the same service, so both answer with the same rows, ledger events and error codes. Results
are the REST representation cut down to what a model needs: keys and statuses rather than ids.
"""

from typing import Any

from django_filters.utils import translate_validation

from conversations_app import services as memory
from conversations_app.api import serializers as memory_api
from conversations_app.models import GlobalPattern, Message, Observation, ObservationType, PatternType
from ledger_app import services as ledger
from ledger_app.api import serializers as ledger_api
from ledger_app.models import Checkpoint, Issue, LedgerEvent, TokenUsage
from ralphsite.agents.mcp import schemas as out
from ralphsite.agents.mcp.registry import (
    AGENT,
    TOOLS,
    ToolCall,
    any_json,
    api_time,
    choice,
    cost,
    count,
    flag,
    integer,
    json_object,
    number,
    pick,
    strings,
    text,
    tool,
)
from ralphsite.core.fields import INTEGER_MIN
from ralphsite.core.search.backends import search_validated
from sessions_app import selectors
from sessions_app.api import filters
from sessions_app.api import serializers as api
from sessions_app.models import (
    AttemptStatus,
    FeedbackBatch,
    FeedbackItem,
    Level,
    Question,
    QuestionCategory,
    QuestionStatus,
    ReviewVerdict,
    Session,
    SessionStateEntry,
    Signal,
    SignalType,
    Task,
    TaskAttempt,
    TaskStatus,
    TaskType,
    WorkType,
)
from sessions_app.services.questions import question_answer, question_create, signal_create, signal_poll
from sessions_app.services.sessions import plan_update, session_state_set
from sessions_app.services.tasks import (
    NothingToClaim,
    task_claim_next,
    task_create,
    task_heartbeat,
    task_release,
    task_report_submit,
    task_review_submit,
    task_status_set,
)

__all__ = ["TOOLS"]  # the table, filled by the @tool declarations below

# -- results ---------------------------------------------------------------------------------------


_TASK = ("key", "title", "objective", "description", "task_type", "work_type", "status", "status_annotation",
         "priority", "wave", "sequence", "depends_on", "files", "success_criteria", "notes", "assigned_agent",
         "claimed_by", "lease_expires_at", "iteration_count")
_ATTEMPT = ("attempt_number", "status", "agent", "model", "review_verdict", "reviewed_at")


def task_result(task: Task) -> dict[str, Any]:
    """GetTask's answer: the task with its dependency keys, file paths and latest attempt."""
    data = api.TaskSerializer(selectors.task_details_load(task=task)).data
    result = pick({**data, "files": [spec["path"] for spec in data["files"]]}, _TASK)
    if data["latest_attempt"]:
        result["latest_attempt"] = pick(data["latest_attempt"], _ATTEMPT)
    return result


def task_brief(task: Task) -> dict[str, Any]:
    """A task after a change of status or claim: what the change was about."""
    brief = {"key": task.key, "status": task.status, "claimed_by": task.claimed_by,
             "lease_expires_at": api_time(task.lease_expires_at)}
    return pick(brief, tuple(brief))


def question_result(question: Question) -> dict[str, Any]:
    return pick(api.QuestionSerializer(question).data, (
        "key", "category", "priority", "status", "text", "impact", "iteration_number", "answer", "answer_source",
        "answer_confidence", "answer_implication"))


# Claims need the agent; not `required` in the schema, because a token bound to an agent supplies it.
HOLDER = text("The agent holding the claim (needed unless the token is bound to an agent).")
TASK = text("The task's key, e.g. task-1 (or its id).", required=True)
CLAIM = count("The `claim` value claim_task answered: needed on a claimed task unless the token is bound to the "
                "holder's agent; a claim that is no longer current is refused (stale_claim).")
# One provider call reported through several paths (an event, a report, token usage) is counted once.
REQUEST_ID = text("The provider's request id: the same call reported again, by any tool, is counted once.",
                  max_length=200)

# -- seed 000: the session tools ------------------------------------------------------------------


@tool("get_plan", "Get the plan",
      "Read the session's current plan (markdown), the iteration it was written in, and the "
      "iterations whose earlier plan was kept as a snapshot. An empty content means no plan exists yet.",
      writes=None, reads=(Session,),
      output=out.obj(required=("content",), content=out.STRING, iteration=out.INTEGER,
                     snapshots=out.array(out.INTEGER)))
def get_plan(call: ToolCall) -> Any:  # GET sessions/{id}/plan/
    plan = selectors.session_plan(session=call.session())
    return {"content": plan["content"], **pick(plan, ("iteration", "snapshots"))}


@tool("update_plan", "Replace the plan", "Replace the session's plan with new content; a plan written in an "
      "earlier iteration is kept as that iteration's snapshot, one written in this iteration is overwritten.",
      writes=Session, action="update", destructive=True, idempotent=True,
      output=out.obj(required=("updated",), updated=out.BOOLEAN, iteration=out.INTEGER,
                     snapshots=out.array(out.INTEGER)),
      content=text("The whole new plan (markdown).", required=True), agent=AGENT)
def update_plan(call: ToolCall) -> Any:  # PUT sessions/{id}/plan/
    body = call.validated(api.PlanInputSerializer)
    session = plan_update(session=call.session(), content=body["content"], agent=body["agent"])
    return {"updated": True, **pick(selectors.session_plan(session=session), ("iteration", "snapshots"))}


@tool("get_task", "Get a task",
      "Read one task: title, objective, type, status, files, success criteria, the keys it depends "
      "on, notes, who holds it, and its latest attempt.", writes=None, reads=(Task,), output=out.TASK, task=TASK)
def get_task(call: ToolCall) -> Any:  # GET tasks/{id}/
    return task_result(call.task())


@tool("create_task", "Create a task", "Create a task definition with its dependencies, target files and success "
      "criteria; it starts not_started and executors claim it once its dependencies are completed.",
      writes=Task, output=out.TASK,
      key=text("The task's key, unique in the session, e.g. task-3.", required=True, max_length=100),
      title=text("A short title.", required=True, max_length=500),
      objective=text("What the task must achieve."),
      description=text("Longer detail."),
      task_type=choice("sequential (runs alone) or parallelizable (may run beside others of its wave).", TaskType),
      work_type=choice("The kind of work.", WorkType),
      depends_on=strings("Keys of the tasks (in this session) that must complete first."),
      files=strings("Target file paths or glob patterns."),
      success_criteria=strings("How to know the task is done, one criterion per item."),
      notes=text("Anything else the executor should know."),
      priority=choice("Scheduling priority.", Level),
      sequence=integer("Order within its wave (lower first).", minimum=INTEGER_MIN),
      wave=integer("The wave, if already known.", minimum=1))
def create_task(call: ToolCall) -> Any:  # POST tasks/
    task = task_create(data=call.validated(api.TaskSerializer, session=call.session().pk))
    return task_result(task)


@tool("update_task_status", "Set a task's status",
      "Set a task's status, with a one-line annotation saying why, as its lifecycle allows "
      "(else invalid_transition naming the allowed ones). The executor acts under its claim; in_progress comes only "
      "from claim_task; review_pending hands the work to the reviewer and, like the ending statuses, ends the claim.",
      writes=Task, action="update", output=out.TASK_BRIEF,
      task=TASK, status=choice("The new status.", TaskStatus, required=True),
      annotation=text("Why, in a line.", max_length=500), agent=AGENT, claim=CLAIM)
def update_task_status(call: ToolCall) -> Any:  # POST tasks/{id}/status/
    return task_brief(task_status_set(task=call.task(), **call.validated(api.TaskStatusInputSerializer)))


@tool("get_progress", "Get the progress", "Progress of the session's tasks: counts by status and by wave, and "
      "each task's key, title, status and wave.", writes=None, reads=(Session, Task),
      output=out.obj(required=("total", "by_status", "tasks"), total=out.INTEGER,
                     by_status={"type": "object", "additionalProperties": out.INTEGER},
                     tasks=out.array(out.obj(required=("key", "status"), key=out.STRING, title=out.STRING,
                                             status=out.STRING, wave=out.INTEGER, assigned_agent=out.STRING))))
def get_progress(call: ToolCall) -> Any:  # GET sessions/{id}/progress/
    progress = selectors.session_progress(session=call.session())
    return {"total": progress["total"],
            "by_status": {status: count for status, count in progress["by_status"].items() if count},
            "tasks": [pick(task, ("key", "title", "status", "wave", "assigned_agent")) for task in progress["tasks"]]}


@tool("submit_report", "Report an attempt", "Submit an implementation report (PART 1) for a task: it leaves the "
      "task's next attempt, with its tokens and cost, for the reviewer; set the task review_pending to hand it over. "
      "An attempt_number the task already has names that attempt: the report describes it (created: false).",
      writes=TaskAttempt, output=out.obj(required=("task", "attempt_number", "created"), task=out.STRING,
                                         attempt_number=out.INTEGER, created=out.BOOLEAN),
      task=TASK, implementation_report=text("The report (markdown).", required=True),
      attempt_number=integer("The attempt number; omit to take the next one.", minimum=1),
      status=choice("The attempt's outcome.", AttemptStatus),
      agent=AGENT, model=text("The model that did the work."),
      tokens_input=count("Input tokens the attempt used."), tokens_output=count("Output tokens it used."),
      cost_usd=cost("What it cost, in USD."), request_id=REQUEST_ID,
      error_message=text("What went wrong, for a failed attempt."), claim=CLAIM)
def submit_report(call: ToolCall) -> Any:  # POST tasks/{id}/report/
    task, body = call.task(), call.validated(api.TaskReportInputSerializer)
    attempt, created = task_report_submit(task=task, claim=body.pop("claim"), data=body)
    return {"task": task.key, "attempt_number": attempt.attempt_number, "created": created}


@tool("submit_review", "Review the latest attempt", "Submit a review (PART 2) with its verdict, on the task's "
      "latest report. The reviewer needs no claim: complete=true completes a qualified task, send_back=true returns a "
      "failed one to the pool; without them the orchestrator decides.",
      writes=TaskAttempt, action="update",
      output=out.obj(required=("task", "attempt_number", "verdict"), task=out.STRING, attempt_number=out.INTEGER,
                     verdict=out.STRING),
      task=TASK, review_report=text("The review (markdown).", required=True),
      verdict=choice("qualified or failed.", ReviewVerdict, required=True), agent=AGENT,
      complete=flag("With a qualified verdict: the task is completed."),
      send_back=flag("With a failed verdict: the task goes back to not_started, claimable again."))
def submit_review(call: ToolCall) -> Any:  # POST tasks/{id}/review/
    task = call.task()
    attempt = task_review_submit(task=task, **call.validated(api.TaskReviewInputSerializer))
    return {"task": task.key, "attempt_number": attempt.attempt_number, "verdict": attempt.review_verdict}


@tool("get_questions", "List the questions", "List the session's questions (optionally of one category or "
      "status), with answers.", writes=None, reads=(Question,),
      output=out.obj(required=("questions",), questions=out.array(out.QUESTION)),
      category=choice("Only this category.", QuestionCategory),
      status=choice("Only questions with this status.", QuestionStatus))
def get_questions(call: ToolCall) -> Any:  # GET questions/?session=…&category=…&status=…
    questions = filters.QuestionFilterSet(data={name: [value] for name, value in call.body().items()},
                                          queryset=Question.objects.filter(session=call.session()))
    if not questions.is_valid():
        raise translate_validation(questions.errors)
    return {"questions": [question_result(question) for question in questions.qs.order_by("key")]}


@tool("create_question", "Ask a question", "Ask a question (planning, research or feedback) for the session, in "
      "its current iteration; it stays unanswered until answer_question.", writes=Question, output=out.QUESTION,
      key=text("The question's key, unique in the session, e.g. Q-TECH-001.", required=True, max_length=100),
      category=choice("The category.", QuestionCategory, required=True),
      text=text("The question.", required=True),
      priority=choice("How much it matters.", Level), impact=text("What depends on the answer."),
      question_type=text("A free-form type."), source_issue_key=text("The feedback issue it comes from."))
def create_question(call: ToolCall) -> Any:  # POST questions/
    question = question_create(data=call.validated(api.QuestionSerializer, session=call.session().pk))
    return question_result(question)


@tool("answer_question", "Answer a question", "Answer a question: the answer, where it comes from, how confident, "
      "and what it implies; the question becomes answered (replace=true overwrites an earlier answer).",
      writes=Question, action="update", destructive=True, output=out.QUESTION,
      question=text("The question's key, e.g. Q-TECH-001 (or its id).", required=True),
      answer=text("The answer.", required=True), answer_source=text("Where the answer comes from.", max_length=500),
      answer_confidence=choice("How confident the answer is.", Level),
      answer_implication=text("What the answer means for the plan."),
      replace=flag("Replace an earlier answer (without it a second answer is refused: already_answered)."),
      agent=AGENT)
def answer_question(call: ToolCall) -> Any:  # POST questions/{id}/answer/
    body = call.validated(api.QuestionAnswerInputSerializer)
    agent, replace = body.pop("agent"), body.pop("replace")
    return question_result(question_answer(question=call.question(), data=body, agent=agent, replace=replace))


def feedback_item_result(item: FeedbackItem) -> dict[str, Any]:
    return pick(api.FeedbackItemInBatchSerializer(item).data, (
        "issue_key", "severity", "description", "evidence", "suggested_fix", "is_resolved", "resolved_at"))


def feedback_batch_result(batch: FeedbackBatch) -> dict[str, Any]:
    """A batch as GetFeedback shows it: its iteration number, its items and its attachments' names."""
    return {"iteration": batch.iteration.number, "batch": batch.batch_timestamp,
            **pick({"summary": batch.summary}, ("summary",)),
            "items": [feedback_item_result(item) for item in batch.items.all()],
            "attachments": [attachment.file_name for attachment in batch.attachments.all()]}


@tool("get_feedback", "Get the feedback", "Read the session's feedback batches (of one iteration when given): each "
      "issue with its severity, description, evidence, suggested fix and whether it is resolved.",
      writes=None, reads=(FeedbackItem,), output=out.obj(required=("batches",), batches=out.array(out.FEEDBACK_BATCH)),
      iteration=integer("Only this iteration number's feedback.", minimum=1))
def get_feedback(call: ToolCall) -> Any:  # GET sessions/{id}/feedback/?iteration=…
    number = call.validated(api.FeedbackQuerySerializer).get("iteration")
    return {"batches": [feedback_batch_result(batch) for batch in
                        selectors.session_feedback(session=call.session(), iteration_number=number)]}


@tool("create_signal", "Send a signal", "Send a steering signal to the orchestrator (steer, pause, resume, stop or "
      "info); it waits, unprocessed, until poll_signal takes it, and a pause holds until a resume signal is sent.",
      writes=Signal, output=out.obj(required=("id", "type"), id=out.STRING, type=out.STRING),
      type=choice("The kind of signal.", SignalType, required=True), message=text("What to tell it."))
def create_signal(call: ToolCall) -> Any:  # POST signals/
    signal = signal_create(data=call.validated(api.SignalSerializer, session=call.session().pk))
    return {"id": signal.id, "type": signal.type}


@tool("poll_signal", "Take the next signal", "Take the oldest unprocessed signal (it is marked processed); null "
      "when there is none.", writes=Signal, action="update",
      output=out.obj(required=("signal",), signal=out.nullable(out.obj(
          required=("id", "type"), id=out.STRING, type=out.STRING, message=out.STRING, sent_at=out.TIME))),
      agent=AGENT)
def poll_signal(call: ToolCall) -> Any:  # POST sessions/{id}/poll-signal/
    signal = signal_poll(session=call.session(), **call.validated(api.AgentInputSerializer))
    if signal is None:
        return {"signal": None}
    return {"signal": {"id": signal.id, "type": signal.type, "message": signal.message,
                       "sent_at": api_time(signal.sent_at)}}


# -- the loop's other verbs -----------------------------------------------------------------------

LEASE = integer("How long the claim lasts without a heartbeat, in seconds (default 600).", minimum=1,
                maximum=7 * 24 * 3600)


@tool("claim_task", "Claim the next task",
      "Claim the next task the plan lets start: it is set in progress and leased to you. Answers "
      "the task with your claim value (only here, only to you: send it with every write on the task), or task "
      "null with the reason nothing can be claimed: all_done, waiting (work in progress will "
      "unblock more), blocked (a failed dependency), at_capacity, session_finished, stop (poll the operator's "
      "signal) or paused (until a resume signal is sent).",
      writes=Task, action="update",
      output=out.obj(required=("task",), task=out.nullable({**out.TASK, "properties": {
          **out.TASK["properties"], "claim": out.INTEGER}}), reason=out.STRING, message=out.STRING),
      agent=text("Who claims (needed unless the token is bound to an agent)."), lease_seconds=LEASE)
def claim_task(call: ToolCall) -> Any:  # POST sessions/{id}/claim-task/
    try:
        task = task_claim_next(session=call.session(), **call.validated(api.LeaseInputSerializer))
    except NothingToClaim as nothing:
        # An answer, not a failure: the reason tells the agent whether to wait, stop or report a blockage.
        return {"task": None, "reason": nothing.details.get("reason"), "message": nothing.message,
                **pick(nothing.details, tuple(name for name in nothing.details if name not in ("reason", "session")))}
    return {"task": {**task_result(task), "claim": task.claim}}  # the claim value: to the claimer only


@tool("heartbeat_task", "Extend a claim's lease", "Extend the lease of a task you hold, so nobody else claims it.",
      writes=Task, action="update", output=out.TASK_BRIEF,
      task=TASK, agent=HOLDER, lease_seconds=LEASE, claim=CLAIM)
def heartbeat_task(call: ToolCall) -> Any:  # POST tasks/{id}/heartbeat/
    return task_brief(task_heartbeat(task=call.task(), **call.validated(api.HeartbeatInputSerializer)))


@tool("release_task", "Give a task back", "Give back a task you hold: it is not started again and anyone may "
      "claim it.", writes=Task, action="update", output=out.TASK_BRIEF,
      task=TASK, agent=HOLDER, reason=text("Why."), claim=CLAIM)
def release_task(call: ToolCall) -> Any:  # POST tasks/{id}/release/
    return task_brief(task_release(task=call.task(), **call.validated(api.ReleaseInputSerializer)))


@tool("get_waves", "Compute the waves", "The session's tasks in waves: wave 1 has no dependencies, each later "
      "wave depends only on earlier ones (store_waves writes them to the tasks).", writes=None, reads=(Task,),
      output=out.WAVES)
def get_waves(call: ToolCall) -> Any:  # GET sessions/{id}/waves/
    return {"waves": selectors.session_waves(session=call.session())}


@tool("get_state", "Read the state",
      "Read the session's key/value state: one key, or every key when none is named. A key that "
      "is not set is absent from the answer.", writes=None, reads=(SessionStateEntry,),
      output=out.obj(required=("state",), state={"type": "object"}), key=text("The key to read."))
def get_state(call: ToolCall) -> Any:  # GET session-state/?session=…&key=…
    entries = selectors.session_state_list().filter(session=call.session())
    if "key" in call.arguments:
        entries = entries.filter(key=call.arguments["key"])
    return {"state": dict(entries.order_by("key").values_list("key", "value"))}


@tool("set_state", "Set a state key", "Set one key of the session's state to any JSON value (replacing what it "
      "held).", writes=SessionStateEntry, destructive=True, idempotent=True,
      output=out.obj(required=("key", "value", "created"), key=out.STRING, value=out.ANY, created=out.BOOLEAN),
      key=text("The key, e.g. current_phase.", required=True), value=any_json("The value: any JSON.", required=True))
def set_state(call: ToolCall) -> Any:  # POST session-state/set/
    entry, created = session_state_set(**call.validated(api.SessionStateSetSerializer,
                                                                 session=call.session().pk))
    return {"key": entry.key, "value": entry.value, "created": created}


@tool("append_event", "Append an event", "Append an event to the session's ledger (append-only); its tokens and "
      "cost add to the session's totals. A retry with the same idempotency_key records it once.", writes=LedgerEvent,
      output=out.obj(required=("id", "type", "created"), id=out.INTEGER, type=out.STRING, created=out.BOOLEAN),
      type=text("An event type (task_started, backend_call_finished, phase_entered, …) or x-<custom>.",
                required=True),
      message=text("What happened."), task_key=text("The task it concerns."), agent=AGENT,
      model=text("The model involved."), phase=text("The loop's phase."),
      category=text("A category."), iteration=integer("The iteration."),
      duration_ms=count("How long it took, in ms."), tokens_in=count("Input tokens."),
      tokens_out=count("Output tokens."), cost_usd=cost("Cost in USD."), request_id=REQUEST_ID,
      data=json_object("Structured data."), meta=json_object("Metadata."),
      idempotency_key=text("A key making retries safe.", max_length=200))
def append_event(call: ToolCall) -> Any:  # POST events/
    event, created = ledger.event_append_one(item=call.validated(ledger_api.LedgerEventSerializer,
                                                                  session=call.session().pk))
    return {"id": event.id, "type": event.type, "created": created}


@tool("record_issue", "Record an issue", "Record an occurrence of an issue; a signature seen before in the session "
      "counts up.", writes=Issue,
      output=out.obj(required=("signature", "kind", "count", "created"), signature=out.STRING, kind=out.STRING,
                     count=out.INTEGER, created=out.BOOLEAN),
      task_key=text("The task it happened in, e.g. task-1.", required=True),
      kind=text("The kind, e.g. test_failure, lint, build.", required=True),
      signature=text("What identifies the issue across occurrences, e.g. a test id.", required=True),
      message=text("The message.", required=True), file=text("The file."),
      line=integer("The line."))
def record_issue(call: ToolCall) -> Any:  # POST issues/record/
    body = call.validated(ledger_api.IssueRecordSerializer, session=call.session().pk)
    issue, created = ledger.issue_record(session_id=body.pop("session"), **body)
    return {"signature": issue.signature, "kind": issue.kind, "count": issue.count, "created": created}


@tool("create_checkpoint", "Record a checkpoint", "Record a checkpoint (a git ref to come back to); resume answers "
      "the session's last one.", writes=Checkpoint,
      output=out.obj(required=("key", "git_ref"), key=out.STRING, git_ref=out.STRING, git_commit=out.STRING,
                     task_key=out.STRING),
      key=text("The checkpoint's key, unique.", required=True, max_length=200),
      git_ref=text("The git ref, e.g. a branch or tag.", required=True), git_commit=text("The commit sha."),
      task_key=text("The task it follows."), summary=text("What is done at this point."),
      description=text("Longer detail."))
def create_checkpoint(call: ToolCall) -> Any:  # POST checkpoints/
    checkpoint = ledger.checkpoint_create(data=call.validated(ledger_api.CheckpointSerializer,
                                                              session=call.session().pk))
    return pick(ledger_api.CheckpointSerializer(checkpoint).data, ("key", "git_ref", "git_commit", "task_key"))


@tool("add_token_usage", "Record token usage", "Record one model call's tokens and cost; the session's totals grow "
      "by it. Omit cost_usd to have it priced from the model's price.", writes=TokenUsage,
      output=out.obj(required=("model", "input_tokens", "output_tokens", "is_estimated"), model=out.STRING,
                     input_tokens=out.INTEGER, output_tokens=out.INTEGER, cost_usd=out.MONEY, is_estimated=out.BOOLEAN),
      model=text("The model.", required=True), input_tokens=count("Input tokens.", required=True),
      output_tokens=count("Output tokens.", required=True), cost_usd=cost("Cost in USD."),
      cached_read_tokens=count("Cache-read tokens."), cached_write_tokens=count("Cache-write tokens."),
      reasoning_tokens=count("Reasoning tokens."), task_key=text("The task."), agent=AGENT,
      operation=text("What the call was for."), request_id=REQUEST_ID)
def add_token_usage(call: ToolCall) -> Any:  # POST token-usage/
    [row] = ledger.token_usage_record(items=[call.validated(ledger_api.TokenUsageSerializer,
                                                            session=call.session().pk)])
    return pick(ledger_api.TokenUsageSerializer(row).data, ("model", "input_tokens", "output_tokens", "cost_usd",
                                                            "is_estimated"))


# -- memory (seed 004) ----------------------------------------------------------------------------

@tool("search_memory", "Search memory",
      "Full-text search of past messages and observations (English with stemming; Chinese, "
      "Japanese and Korean too). Answers the best matches first, each with a snippet: <mark> around the matches.",
      writes=None, reads=(Message, Observation), session_bound=False,
      output=out.obj(required=("count", "hits"), count=out.INTEGER, hits=out.array(out.obj(
          required=("kind", "id", "snippet"), kind=out.STRING, id={"type": ["integer", "string"]}, session=out.STRING,
          subtype=out.STRING, created_at=out.TIME, snippet=out.STRING))),
      q=text("What to look for.", required=True),
      kind=choice("message or observation; both when omitted.", ("message", "observation")),
      session=text("Only this session (its id or key)."),
      type=choice("Only observations of this type.", ObservationType),
      page_size=integer("How many hits (default 20, at most 100).", minimum=1, maximum=100))
def search_memory(call: ToolCall) -> Any:  # GET search/?q=…
    within = {"session": call.session().pk} if "session" in call.arguments else {}
    total, hits = search_validated(call.validated(memory_api.SearchParamsSerializer, **within),
                                   kinds=("message", "observation"))  # memory: the ledger and reports are the API's
    return {"count": total, "hits": [pick(memory_api.SearchHitSerializer(hit).data, (
        "kind", "id", "session", "subtype", "created_at", "snippet")) for hit in hits]}


@tool("record_observation", "Remember an observation",
      "Remember something about this session's work: a tool use, a command, an error, a "
      "success or a note. Observations are found again by search_memory.",
      writes=Observation, output=out.obj(required=("id", "type"), id=out.STRING, type=out.STRING),
      type=choice("What kind of observation.", ObservationType, required=True),
      content=text("What to remember.", required=True), tool_name=text("The tool it concerns.", max_length=200),
      importance=number("How much it matters, 0 to 1 (default 0.5).", maximum=1))
def record_observation(call: ToolCall) -> Any:  # POST observations/
    observation = memory.observation_create(data=call.validated(memory_api.ObservationSerializer,
                                                                session=call.session().pk))
    return {"id": observation.id, "type": observation.type}


@tool("record_pattern", "Record a pattern",
      "Record a pattern worth reusing across projects (an error and its fix, a best practice, "
      "a tool usage); recording it again counts up its frequency.", session_bound=False,
      writes=GlobalPattern,
      output=out.obj(required=("pattern_type", "frequency", "created"), pattern_type=out.STRING,
                     frequency=out.INTEGER, created=out.BOOLEAN, source_projects=out.STRINGS),
      pattern_type=choice("What kind of pattern.", PatternType, required=True),
      description=text("The pattern, self-contained.", required=True),
      project=text("The project where it was seen."))
def record_pattern(call: ToolCall) -> Any:  # POST patterns/record/
    pattern, created = memory.pattern_record(**call.validated(memory_api.PatternRecordSerializer))
    return {"pattern_type": pattern.pattern_type, "frequency": pattern.frequency, "created": created,
            "source_projects": pattern.source_projects}


# The orchestrator's tools (sessions, iterations, waves, feedback, invocations), listed after the agents'.
from ralphsite.agents.mcp import orchestration  # noqa: E402, F401
