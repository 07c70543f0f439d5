"""Every operation that changes orchestration state: one function per domain verb, one transaction."""

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import connection, models, transaction
from django.db.models import Count, F, Max, Q, QuerySet, Value
from django.utils import timezone

from ralphsite.access import current_scope
from ralphsite.activity import sessions_touch
from ralphsite.errors import Conflict, InvalidInput, NotFound, detail_time
from ralphsite.fields import BIGINT_MAX
from ralphsite.money import USD_MAX
from ralphsite.services import instance_create, instance_delete, instance_update, instances_delete
from sessions_app import selectors
from sessions_app.graph import kahn_layers
from sessions_app.models import (
    FINISHED_INVOCATION_STATUSES,
    FINISHED_SESSION_STATUSES,
    TASK_ENDED_STATUSES,
    AcceptanceCriterion,
    AgentInvocation,
    Bug,
    BugStatus,
    ContextBudget,
    ContextSnapshot,
    ContextStatus,
    Feature,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    FindingType,
    Interview,
    InterviewQuestion,
    InterviewStatus,
    Iteration,
    LoopRun,
    LoopRunStatus,
    PlanSnapshot,
    Question,
    QuestionStatus,
    ResearchFinding,
    ResearchSession,
    ReviewVerdict,
    Session,
    SessionStateEntry,
    SessionStatus,
    Signal,
    Task,
    TaskAttempt,
    TaskDependency,
    TaskFile,
    TaskStatus,
    TaskType,
)
from sessions_app.models.context import validate_context_thresholds
from sessions_app.signals import (
    orchestration_event,
    resume_requested,
    sessions_deleting,
    usage_recorded,
    usage_reported,
)

M = TypeVar("M", bound=models.Model)

# Written only by services that account usage, never by clients.
SESSION_TOTAL_FIELDS = ("total_tokens_input", "total_tokens_output", "total_cost_usd")


def session_create(*, data: dict[str, Any]) -> Session:
    """A new session; its current iteration (1 unless given) exists from the start. A session created
    finished gets its ended_at (now unless given); a running one has none."""
    data = dict(data)
    status = data.get("status", SessionStatus.RUNNING)
    if status == SessionStatus.RUNNING and data.get("ended_at") is not None:
        raise InvalidInput("A running session has no ended_at.", details={"ended_at": [_ENDED_AT_RULE]})
    if status != SessionStatus.RUNNING and data.get("ended_at") is None:
        data["ended_at"] = timezone.now()
    with transaction.atomic():
        session = instance_create(model=Session, data=data)
        _iteration_ensure(session=session)
    return session


_ENDED_AT_RULE = "ended_at changes with status only (finish/, or a status in the same write)."


def session_update(*, session: Session, data: dict[str, Any], agent: str = "") -> Session:
    """A plain update (API PATCH/PUT, admin). `status` and `ended_at` change together: a running
    session given a final status is finished as by `finish/` (ended_at now unless given, a
    `session_finished` event); a finished session keeps its status (409 `session_finished`; `resume/`
    runs it again); ended_at alone is a 400. A new current_iteration gets its iteration row."""
    data = dict(data)
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        status = data.pop("status", session.status)
        ended_at = data.pop("ended_at", session.ended_at)
        finishing = status != session.status
        if finishing and session.status in FINISHED_SESSION_STATUSES:
            raise _already_finished(session)
        if finishing and status == SessionStatus.RUNNING:
            raise InvalidInput("A finished session runs again through resume/.", details={"status": [status]})
        if not finishing and ended_at != session.ended_at:
            raise InvalidInput(_ENDED_AT_RULE, details={"ended_at": [_ENDED_AT_RULE]})
        old_state, old_iteration = session.state, session.current_iteration
        session = instance_update(instance=session, data={**data, "last_activity_at": timezone.now()})
        if session.current_iteration != old_iteration:
            _iteration_ensure(session=session)
        if session.state != old_state:
            _event(session_id=session.id, event_type="session_state_changed", agent=agent,
                   message=f"state {old_state} → {session.state}", data={"from": old_state, "to": session.state})
        if finishing:
            session = _session_end(session=session, status=status, exit_reason=session.exit_reason,
                                   ended_at=ended_at, agent=agent)
    return session


def session_delete(*, session: Session) -> None:
    """Delete a finished session and what seed 003 cascades from it; its ledger events leave through
    the ledger's retention path (a retention record), rows the seed keeps lose only their session.
    A running session is refused: finish it first."""
    with transaction.atomic():
        session = Session.objects.select_for_update().get(pk=session.pk)
        if session.status == SessionStatus.RUNNING:
            raise Conflict(f"Session {session.pk} is running; finish it before deleting it.",
                           code="session_running", details={"session": session.pk, "status": session.status})
        sessions_deleting.send(sender=Session, session_ids=[session.pk], reason=f"session {session.pk} deleted")
        session.delete()


def _usage_totals_add(*, session_id: str, tokens_input: int, tokens_output: int, cost_usd: Decimal) -> int:
    """The totals UPDATE (F() expressions, so concurrent writers never lose an increment); the number of
    rows it changed (0: no session, or an overflow). Money is exact on both backends: SQLite adds whole
    micro-dollars (integers), PostgreSQL numeric (`ralphsite.money.MoneyField`)."""
    tokens = tokens_input + tokens_output
    return Session.objects.filter(
        pk=session_id, total_tokens_input__lte=BIGINT_MAX - max(tokens_input, 0),
        total_tokens_output__lte=BIGINT_MAX - max(tokens_output, 0), token_count__lte=BIGINT_MAX - max(tokens, 0),
        total_cost_usd__lte=USD_MAX - max(cost_usd, Decimal(0)),
    ).update(
        total_tokens_input=F("total_tokens_input") + tokens_input,
        total_tokens_output=F("total_tokens_output") + tokens_output, token_count=F("token_count") + tokens,
        total_cost_usd=F("total_cost_usd") + Value(cost_usd, output_field=Session._meta.get_field("total_cost_usd")),
        last_activity_at=timezone.now(),
    )


def session_usage_add(*, session_id: str, tokens_input: int = 0, tokens_output: int = 0,
                      cost_usd: Decimal | int = 0) -> None:
    """Add one usage-bearing row's tokens and cost to its session's totals; the same UPDATE moves the
    session's activity (a write without usage only moves that).

    An UPDATE with F() expressions: concurrent writers never lose an increment. Call it inside the
    transaction that writes the row, so the totals always equal the sum of the rows.
    """
    if not (tokens_input or tokens_output or cost_usd):
        sessions_touch([session_id])  # no usage, still the session's activity
        return
    cost_usd = Decimal(cost_usd)
    # Only a total that fits its column is written (positive deltas are bounded, in the same UPDATE):
    # an overflow is the client's 400, never the database's error.
    updated = _usage_totals_add(session_id=session_id, tokens_input=tokens_input, tokens_output=tokens_output,
                                cost_usd=cost_usd)
    if not updated and Session.objects.filter(pk=session_id).exists():
        raise InvalidInput(f"The usage would overflow the totals of session {session_id}.", code="usage_overflow",
                           details={"session": session_id, "tokens_input": tokens_input,
                                    "tokens_output": tokens_output, "cost_usd": str(cost_usd)})
    if not updated:
        raise NotFound(f"Session {session_id} does not exist.", details={"session": session_id})
    usage_recorded.send(sender=Session, session_id=session_id, tokens_input=tokens_input,
                        tokens_output=tokens_output, cost_usd=cost_usd)


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------

# Fields only the services write (read-only in the API and the admin).
# Written by the verify action only, so failure_count always counts the recorded failures.
CRITERION_VERIFICATION_FIELDS = ("passes", "verified_at", "verified_by", "failure_count", "last_failure_reason")
# Derived from `steps` by the services on every write.
FEATURE_STEP_COUNT_FIELDS = ("steps_total", "steps_passed", "all_steps_pass")
# Derived from the usage, the limit and the thresholds by the services.
CONTEXT_BUDGET_DERIVED_FIELDS = ("usage_percent", "status")
# Kept equal to the interview's question rows by the services.
INTERVIEW_COUNTER_FIELDS = ("questions_asked", "questions_answered")
# Assigned by the services: the next number in the interview, and the time a response was recorded.
INTERVIEW_QUESTION_SERVER_FIELDS = ("sequence", "responded_at")
# Moved by the iterate and finish actions only.
LOOP_RUN_PROGRESS_FIELDS = ("status", "iterations", "ended_at")
# Kept equal to the research session's findings by the services.
RESEARCH_COUNTER_FIELDS = ("findings_count", "recommendations_count", "blockers_found")


def _stamp_on_change(data: dict[str, Any], *, previous: Any, field: str, value: Any, stamp: str) -> dict[str, Any]:
    """Set the time `stamp` when `field` becomes `value` (an explicit stamp in `data` wins) and clear
    it when `field` leaves `value`: resolved_at, completed_at and verified_at follow their status."""
    if field not in data or data[field] == previous:
        return data
    if data[field] == value:
        return {stamp: timezone.now(), **data}
    return {**data, stamp: None}


def session_state_set(*, session: Session, key: str, value: Any) -> tuple[SessionStateEntry, bool]:
    """Upsert one key of a session's state (DevTeam's set_state); returns (entry, created).

    update_or_create locks the row it finds and, when two writers insert the same new key at once,
    catches the unique violation and updates the row the other one made: the last write wins.
    """
    with transaction.atomic():
        entry, created = SessionStateEntry.objects.update_or_create(session=session, key=key,
                                                                    defaults={"value": value})
        sessions_touch([session.pk])
    return entry, created


def bug_create(*, data: dict[str, Any]) -> Bug:
    with transaction.atomic():
        return instance_create(model=Bug, data=_stamp_on_change(
            data, previous=BugStatus.OPEN, field="status", value=BugStatus.RESOLVED, stamp="resolved_at"))


def bug_update(*, bug: Bug, data: dict[str, Any]) -> Bug:
    with transaction.atomic():
        return instance_update(instance=bug, data=_stamp_on_change(
            data, previous=bug.status, field="status", value=BugStatus.RESOLVED, stamp="resolved_at"))


def acceptance_criterion_verify(*, criterion_id: str, passes: bool, verified_by: str = "",
                                verification_method: str = "", verification_evidence: str = "",
                                failure_reason: str = "") -> AcceptanceCriterion:
    """Record one verification: a pass sets verified_at; a fail clears it, stores the reason and
    increments failure_count (an F() update, so concurrent failures are all counted)."""
    now = timezone.now()
    changes: dict[str, Any] = {"passes": passes, "verified_by": verified_by, "updated_at": now}
    if verification_method:
        changes["verification_method"] = verification_method
    if verification_evidence:
        changes["verification_evidence"] = verification_evidence
    if passes:
        changes["verified_at"] = now
    else:
        changes.update(verified_at=None, last_failure_reason=failure_reason,
                       failure_count=F("failure_count") + 1)
    with transaction.atomic():
        if not AcceptanceCriterion.objects.filter(pk=criterion_id).update(**changes):
            raise NotFound(f"Acceptance criterion {criterion_id} does not exist.", details={"id": criterion_id})
        return AcceptanceCriterion.objects.get(pk=criterion_id)


def _feature_derived(data: dict[str, Any], *, previous_passes: bool) -> dict[str, Any]:
    """Step counts from `steps` (when written) and verified_at from `passes`."""
    if "steps" in data:
        steps = data["steps"] or []
        passed = sum(1 for step in steps if step["passes"])
        data = {**data, "steps": steps, "steps_total": len(steps), "steps_passed": passed,
                "all_steps_pass": bool(steps) and passed == len(steps)}
    return _stamp_on_change(data, previous=previous_passes, field="passes", value=True, stamp="verified_at")


def feature_create(*, data: dict[str, Any]) -> Feature:
    with transaction.atomic():
        return instance_create(model=Feature, data=_feature_derived({"steps": [], **data}, previous_passes=False))


def feature_update(*, feature: Feature, data: dict[str, Any]) -> Feature:
    with transaction.atomic():
        return instance_update(instance=feature, data=_feature_derived(data, previous_passes=feature.passes))


_BUDGET_INPUTS = ("context_limit", "current_usage", "warn_threshold", "summarize_threshold")


def _context_budget_derived(values: dict[str, Any]) -> dict[str, Any]:
    """usage_percent and status from the usage against the limit and the thresholds (0 = unset)."""
    limit, usage = values["context_limit"], values["current_usage"]
    warn, summarize = values["warn_threshold"], values["summarize_threshold"]
    try:
        validate_context_thresholds(warn_threshold=warn, summarize_threshold=summarize)
    except ValidationError as error:
        raise InvalidInput(error.messages[0], details=error.message_dict) from error
    if usage >= limit or (summarize and usage >= summarize):
        status = ContextStatus.CRITICAL
    elif warn and usage >= warn:
        status = ContextStatus.WARNING
    else:
        status = ContextStatus.OK
    return {"usage_percent": round(usage * 100 / limit, 2), "status": status}


def context_budget_create(*, data: dict[str, Any]) -> ContextBudget:
    defaults = {name: ContextBudget._meta.get_field(name).get_default() for name in _BUDGET_INPUTS}
    with transaction.atomic():
        return instance_create(model=ContextBudget, data={**data, **_context_budget_derived({**defaults, **data})})


def context_budget_update(*, budget: ContextBudget, data: dict[str, Any]) -> ContextBudget:
    current = {name: getattr(budget, name) for name in _BUDGET_INPUTS}
    with transaction.atomic():
        return instance_update(instance=budget, data={**data, **_context_budget_derived({**current, **data})})


def context_budget_record_usage(*, budget_id: str, current_usage: int | None = None, tokens_added: int = 0,
                                last_action: str | None = None) -> ContextBudget:
    """Set the usage (`current_usage`) or add to it (`tokens_added`); the row is locked meanwhile."""
    with transaction.atomic():
        budget = ContextBudget.objects.select_for_update(no_key=True).filter(pk=budget_id).first()
        if budget is None:
            raise NotFound(f"Context budget {budget_id} does not exist.", details={"id": budget_id})
        usage = current_usage if current_usage is not None else budget.current_usage + tokens_added
        if usage > BIGINT_MAX:
            raise InvalidInput(f"The usage would exceed {BIGINT_MAX} tokens.",
                               details={"tokens_added": [f"{budget.current_usage} + {tokens_added} is too large."]})
        data: dict[str, Any] = {"current_usage": usage}
        if last_action is not None:
            data["last_action"] = last_action
        return context_budget_update(budget=budget, data=data)


def _with_tokens_saved(data: dict[str, Any], *, current: dict[str, Any]) -> dict[str, Any]:
    """tokens_saved = tokens_before - tokens_after, unless the client gave it."""
    if data.get("tokens_saved") is not None or not {"tokens_before", "tokens_after"} & set(data):
        return data
    before = data.get("tokens_before", current.get("tokens_before"))
    after = data.get("tokens_after", current.get("tokens_after"))
    if before is None or after is None:
        return data
    return {**data, "tokens_saved": before - after}


def context_snapshot_create(*, data: dict[str, Any]) -> ContextSnapshot:
    with transaction.atomic():
        return instance_create(model=ContextSnapshot, data=_with_tokens_saved(data, current={}))


def context_snapshot_update(*, snapshot: ContextSnapshot, data: dict[str, Any]) -> ContextSnapshot:
    current = {"tokens_before": snapshot.tokens_before, "tokens_after": snapshot.tokens_after}
    with transaction.atomic():
        return instance_update(instance=snapshot, data=_with_tokens_saved(data, current=current))


def interview_create(*, data: dict[str, Any]) -> Interview:
    with transaction.atomic():
        return instance_create(model=Interview, data=_stamp_on_change(
            data, previous=InterviewStatus.IN_PROGRESS, field="status", value=InterviewStatus.COMPLETED,
            stamp="completed_at"))


def interview_update(*, interview: Interview, data: dict[str, Any]) -> Interview:
    with transaction.atomic():
        return instance_update(instance=interview, data=_stamp_on_change(
            data, previous=interview.status, field="status", value=InterviewStatus.COMPLETED,
            stamp="completed_at"))


def _interview_lock(interview_id: str) -> None:
    """Serialize question writes of one interview (a row lock on PostgreSQL; SQLite's BEGIN
    IMMEDIATE already serializes writers), so sequence numbers and counters are race-free."""
    if not Interview.objects.select_for_update(no_key=True).filter(pk=interview_id).exists():
        raise NotFound(f"Interview {interview_id} does not exist.", details={"interview": interview_id})


def _interview_recount(interview_id: str) -> None:
    """questions_asked / questions_answered = the interview's question rows (all / answered)."""
    counts = InterviewQuestion.objects.filter(interview_id=interview_id).aggregate(
        asked=Count("pk"), answered=Count("pk", filter=Q(responded_at__isnull=False)))
    Interview.objects.filter(pk=interview_id).update(questions_asked=counts["asked"],
                                                     questions_answered=counts["answered"])


def _with_response_time(data: dict[str, Any], *, previous: str) -> dict[str, Any]:
    """responded_at is set when a response is recorded and cleared when the response is emptied."""
    if "response" not in data or data["response"] == previous:
        return data
    return {**data, "responded_at": timezone.now() if data["response"] else None}


def interview_question_create(*, data: dict[str, Any]) -> InterviewQuestion:
    """Append a question to its interview with the next sequence number (1, 2, 3… per interview)."""
    interview_id = data["interview"].pk
    with transaction.atomic():
        _interview_lock(interview_id)
        last = InterviewQuestion.objects.filter(interview_id=interview_id).aggregate(last=Max("sequence"))["last"]
        question = instance_create(model=InterviewQuestion,
                                   data={**_with_response_time(data, previous=""), "sequence": (last or 0) + 1})
        _interview_recount(interview_id)
    return question


def interview_question_update(*, question: InterviewQuestion, data: dict[str, Any]) -> InterviewQuestion:
    if "interview" in data and data["interview"].pk != question.interview_id:
        raise InvalidInput("A question cannot move to another interview.",
                           details={"interview": ["A question cannot move to another interview."]})
    with transaction.atomic():
        _interview_lock(question.interview_id)
        question = instance_update(instance=question, data=_with_response_time(data, previous=question.response))
        _interview_recount(question.interview_id)
    return question


def interview_question_answer(*, question_id: str, response: str) -> InterviewQuestion:
    with transaction.atomic():
        question = InterviewQuestion.objects.filter(pk=question_id).first()
        if question is None:
            raise NotFound(f"Interview question {question_id} does not exist.", details={"id": question_id})
        return interview_question_update(question=question, data={"response": response})


def interview_question_delete(*, question: InterviewQuestion) -> None:
    with transaction.atomic():
        _interview_lock(question.interview_id)
        instance_delete(instance=question)
        _interview_recount(question.interview_id)


def _research_lock(research_session_id: str) -> None:
    """Serialize finding writes of one research session (as _interview_lock) so its counters are exact."""
    if not ResearchSession.objects.select_for_update(no_key=True).filter(pk=research_session_id).exists():
        raise NotFound(f"Research session {research_session_id} does not exist.",
                       details={"research_session": research_session_id})


def _research_recount(research_session_id: str) -> None:
    """findings_count, recommendations_count and blockers_found = the research session's findings
    (all, of type recommendation, of type blocker)."""
    counts = ResearchFinding.objects.filter(research_session_id=research_session_id).aggregate(
        findings=Count("pk"), recommendations=Count("pk", filter=Q(finding_type=FindingType.RECOMMENDATION)),
        blockers=Count("pk", filter=Q(finding_type=FindingType.BLOCKER)))
    ResearchSession.objects.filter(pk=research_session_id).update(
        findings_count=counts["findings"], recommendations_count=counts["recommendations"],
        blockers_found=counts["blockers"], updated_at=timezone.now())


def research_finding_create(*, data: dict[str, Any]) -> ResearchFinding:
    research_session_id = data["research_session"].pk
    with transaction.atomic():
        _research_lock(research_session_id)
        finding = instance_create(model=ResearchFinding, data=data)
        _research_recount(research_session_id)
    return finding


def research_finding_update(*, finding: ResearchFinding, data: dict[str, Any]) -> ResearchFinding:
    """A finding moved to another research session is counted there (and no longer in the first)."""
    with transaction.atomic():
        old_research_session_id = finding.research_session_id
        for research_session_id in sorted({old_research_session_id, *(
                [data["research_session"].pk] if "research_session" in data else [])}):
            _research_lock(research_session_id)
        finding = instance_update(instance=finding, data=data)
        for research_session_id in {old_research_session_id, finding.research_session_id}:
            _research_recount(research_session_id)
    return finding


def research_finding_delete(*, finding: ResearchFinding) -> None:
    with transaction.atomic():
        _research_lock(finding.research_session_id)
        instance_delete(instance=finding)
        _research_recount(finding.research_session_id)


def _loop_run_transition(*, loop_run_id: str, allowed: Q, changes: dict[str, Any]) -> LoopRun:
    """One conditional UPDATE (race-free on both backends); when no row matched, say why."""
    with transaction.atomic():
        matched = LoopRun.objects.filter(allowed, pk=loop_run_id, status=LoopRunStatus.RUNNING).update(
            **changes, updated_at=timezone.now())
        loop_run = LoopRun.objects.filter(pk=loop_run_id).first()
        if loop_run is None:
            raise NotFound(f"Loop run {loop_run_id} does not exist.", details={"id": loop_run_id})
        if not matched and loop_run.status != LoopRunStatus.RUNNING:
            raise Conflict(f"Loop run {loop_run_id} is {loop_run.status}, not running.",
                           details={"status": loop_run.status})
        if not matched:
            raise Conflict(f"Loop run {loop_run_id} has reached max_iterations ({loop_run.max_iterations}).",
                           details={"iterations": loop_run.iterations, "max_iterations": loop_run.max_iterations})
        sessions_touch([loop_run.session_id])
    return loop_run


def loop_run_iterate(*, loop_run_id: str) -> LoopRun:
    """Count one more iteration of a running loop; refused (409) past max_iterations."""
    return _loop_run_transition(loop_run_id=loop_run_id, allowed=Q(iterations__lt=F("max_iterations")),
                                changes={"iterations": F("iterations") + 1})


def loop_run_finish(*, loop_run_id: str, status: str, snapshot_path: str | None = None) -> LoopRun:
    """End a running loop with its outcome (success, failed or stopped)."""
    changes: dict[str, Any] = {"status": status, "ended_at": timezone.now()}
    if snapshot_path is not None:
        changes["snapshot_path"] = snapshot_path
    return _loop_run_transition(loop_run_id=loop_run_id, allowed=Q(), changes=changes)


# -- orchestration: plans, tasks, attempts, questions, feedback, signals, claims, resume --------

def _event(*, session_id: str, event_type: str, message: str, data: dict[str, Any], task_key: str = "",
           agent: str = "") -> None:
    """Announce a change for the audit trail: the ledger appends it to its hash chain, whose head is
    the last lock of a transaction; so this comes after the transaction's other writes (touch first)."""
    orchestration_event.send(sender=Session, session_id=session_id, event_type=event_type, task_key=task_key,
                             agent=agent, message=message, data=data)


def lock_rows(queryset: QuerySet[M], *, skip_locked: bool = False) -> QuerySet[M]:
    """Row locks for a read-then-write transaction, per backend.

    PostgreSQL: SELECT … FOR NO KEY UPDATE [SKIP LOCKED], so concurrent claimers lock different rows.
    NO KEY: no row's key ever changes, and a plain FOR UPDATE also blocks the FOR KEY SHARE lock that
    every foreign-key check takes at COMMIT (Django's constraints are deferred), so a transaction
    inserting a row that references a locked task waited on it while holding the session row the
    locker wanted next: a deadlock, seen under many agents on several hosts (the scale-out benchmark).
    SQLite: unchanged — every transaction starts with BEGIN IMMEDIATE and so already holds the
    database's write lock while it reads.
    """
    if connection.vendor == "postgresql":
        # OF self: only the queried table's rows (joined optional rows cannot be locked).
        return queryset.select_for_update(skip_locked=skip_locked, of=("self",), no_key=True)
    return queryset


def _usage_item(row: TaskAttempt | AgentInvocation) -> dict[str, Any]:
    """The provider call this row reports, as the ledger's token usage records it."""
    attempt = isinstance(row, TaskAttempt)
    return {"session_id": row.session_id, "request_id": row.request_id, "model": row.model, "agent": row.agent,
            "task_key": row.task.key if attempt else row.task_key, "operation": "attempt" if attempt else "invocation",
            "input_tokens": row.tokens_input, "output_tokens": row.tokens_output, "cost_usd": Decimal(row.cost_usd),
            "recorded_at": (row.started_at or row.created_at) if attempt else row.started_at}


def _usage_report(*, row: TaskAttempt | AgentInvocation, item: dict[str, Any] | None) -> None:
    """Tell the ledger the call this row reports (None: the row is gone); its token usage is the one
    book of calls and moves the session totals (sessions_app.signals.usage_reported)."""
    usage_reported.send(sender=type(row), source="attempt" if isinstance(row, TaskAttempt) else "invocation",
                        source_id=row.pk, item=item)


UsageRow = TypeVar("UsageRow", TaskAttempt, AgentInvocation)


# Rows carrying tokens/cost: their writes record the call in the same transaction.
def _usage_row_create(*, model: type[UsageRow], data: dict[str, Any]) -> UsageRow:
    row = instance_create(model=model, data=data)
    _usage_report(row=row, item=_usage_item(row))
    return row


def _usage_row_update(*, row: UsageRow, data: dict[str, Any]) -> UsageRow:
    old_usage = _usage_item(row)
    row = instance_update(instance=row, data=data)
    new_usage = _usage_item(row)
    if new_usage != old_usage:
        _usage_report(row=row, item=new_usage)
    return row


def _usage_row_delete(*, row: TaskAttempt | AgentInvocation) -> None:
    _usage_report(row=row, item=None)
    instance_delete(instance=row)


def plan_update(*, session: Session, content: str, agent: str = "") -> Session:
    """UpdatePlan. The plan written in an earlier iteration is kept as that iteration's snapshot."""
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        written_in = session.plan_iteration
        if session.current_plan_content and written_in is not None and written_in < session.current_iteration:
            PlanSnapshot.objects.get_or_create(session=session, iteration_number=written_in,
                                               defaults={"content": session.current_plan_content})
        session.current_plan_content = content
        session.plan_iteration = session.current_iteration
        session.last_activity_at = timezone.now()
        session.save(update_fields=["current_plan_content", "plan_iteration", "last_activity_at", "updated_at"])
    return session


def _iteration_ensure(*, session: Session) -> None:
    """The session's current iteration has its row (iteration 1 from the session's creation on)."""
    Iteration.objects.get_or_create(session=session, number=session.current_iteration)


def iteration_create(*, data: dict[str, Any]) -> Iteration:
    with transaction.atomic():
        return instance_create(model=Iteration, data=_stamp_on_change(
            data, previous=False, field="planning_complete", value=True, stamp="planning_completed_at"))


def iteration_update(*, iteration: Iteration, data: dict[str, Any]) -> Iteration:
    """planning_completed_at is set when planning_complete becomes true (and cleared if it is undone)."""
    with transaction.atomic():
        return instance_update(instance=iteration, data=_stamp_on_change(
            data, previous=iteration.planning_complete, field="planning_complete", value=True,
            stamp="planning_completed_at"))


def session_waves_store(*, session: Session) -> list[dict[str, Any]]:
    """Compute the session's waves (selectors.session_waves) and write each task's `wave` to its
    number: one UPDATE per wave."""
    with transaction.atomic():
        waves = selectors.session_waves(session=session)
        for wave in waves:
            Task.objects.filter(session=session, key__in=wave["tasks"]).exclude(wave=wave["wave"]).update(
                wave=wave["wave"], updated_at=timezone.now())
        sessions_touch([session.pk])
    return waves


def question_create(*, data: dict[str, Any]) -> Question:
    """CreateQuestion: asked in the session's current iteration unless the caller says otherwise."""
    data = dict(data)
    with transaction.atomic():
        if "iteration_number" not in data:
            data["iteration_number"] = (Session.objects.filter(pk=data["session"].pk)
                                        .values_list("current_iteration", flat=True).get())
        return instance_create(model=Question, data=data)


def session_transition(*, session: Session, data: dict[str, Any], agent: str = "", message: str = "") -> Session:
    """The orchestrator's state change (and the iteration/wave/phase it moves to)."""
    with transaction.atomic():
        old_state = session.state
        session = instance_update(instance=session, data={**data, "last_activity_at": timezone.now()})
        if "current_iteration" in data:
            _iteration_ensure(session=session)
        _event(session_id=session.id, event_type="session_state_changed", agent=agent,
               message=message or f"state {old_state} → {session.state}",
               data={"from": old_state, "to": session.state, **{k: v for k, v in data.items() if k != "state"}})
    return session


def _dependency_targets(*, session_id: str | None, keys: list[str], task_key: str) -> list[Task]:
    if task_key in keys:
        raise InvalidInput(f"Task {task_key} cannot depend on itself.", details={"depends_on": [task_key]})
    targets = list(Task.objects.filter(session_id=session_id, key__in=keys)) if keys else []
    unknown = sorted(set(keys) - {t.key for t in targets})
    if unknown:
        raise InvalidInput(f"Unknown dependency keys in this session: {', '.join(unknown)}.",
                           code="unknown_dependency", details={"depends_on": unknown})
    return targets


def _dependencies_set(*, task: Task, keys: list[str]) -> None:
    """Replace the task's dependencies; a change that would close a cycle is refused naming it."""
    targets = _dependency_targets(session_id=task.session_id, keys=keys, task_key=task.key)
    edges = [(a, b) for a, b in TaskDependency.objects.filter(task__session_id=task.session_id)
             .exclude(task=task).values_list("task__key", "depends_on__key")]
    edges += [(task.key, target.key) for target in targets]
    nodes = Task.objects.filter(session_id=task.session_id).values_list("key", flat=True)
    _, cyclic = kahn_layers(nodes, edges)
    if cyclic:
        raise InvalidInput(f"These dependencies would make a cycle through: {', '.join(cyclic)}.",
                           code="dependency_cycle", details={"depends_on": keys, "cycle": cyclic})
    TaskDependency.objects.filter(task=task).delete()
    TaskDependency.objects.bulk_create(TaskDependency(task=task, depends_on=target) for target in targets)


def _task_links_check(*, task: Task, old_session_id: str | None) -> None:
    """A task's parent is another task of its session, never itself or one of its own subtasks; a task
    with dependency edges stays in its session (the edges may not cross sessions)."""
    if task.session_id != old_session_id and (
            TaskDependency.objects.filter(Q(task=task) | Q(depends_on=task)).exists()):
        raise InvalidInput(f"Task {task.key} has dependencies or dependents and cannot move to another session.",
                           details={"session": ["A task with dependency edges cannot change session."]})
    ancestor_id, seen = task.parent_id, {task.pk}
    while ancestor_id is not None:
        if ancestor_id in seen:
            raise InvalidInput(f"Task {task.key} cannot be its own ancestor.",
                               details={"parent": ["The parent chain would form a loop."]})
        seen.add(ancestor_id)
        ancestor = Task.objects.filter(pk=ancestor_id).values("session_id", "parent_id").get()
        if ancestor_id == task.parent_id and ancestor["session_id"] != task.session_id:
            raise InvalidInput("The parent task belongs to another session.",
                               details={"parent": ["The parent task belongs to another session."]})
        ancestor_id = ancestor["parent_id"]


def _files_set(*, task: Task, files: list[dict[str, Any]]) -> None:
    TaskFile.objects.filter(task=task).delete()
    TaskFile.objects.bulk_create(TaskFile(task=task, **spec) for spec in files)


def task_create(*, data: dict[str, Any]) -> Task:
    """CreateTask: the task, its dependencies (keys in the same session) and files, one transaction."""
    data = dict(data)
    depends_on: list[str] = data.pop("depends_on", [])
    files: list[dict[str, Any]] = data.pop("files", [])
    with transaction.atomic():
        session = data.get("session")
        if session is not None:
            data.setdefault("iteration_created", session.current_iteration)
            data.setdefault("iteration_updated", session.current_iteration)
        task = instance_create(model=Task, data=data)
        _task_links_check(task=task, old_session_id=task.session_id)
        if depends_on:
            _dependencies_set(task=task, keys=depends_on)
        _files_set(task=task, files=files)
    return task


def task_update(*, task: Task, data: dict[str, Any], agent: str = "") -> Task:
    data = dict(data)
    depends_on: list[str] | None = data.pop("depends_on", None)
    files: list[dict[str, Any]] | None = data.pop("files", None)
    with transaction.atomic():
        if data.get("status", task.status) != task.status:
            # No way around the fence: a PATCH carries no claim, so only the holder's agent-bound token
            # changes a claimed task's status here (status/ takes the claim).
            _claim_fence(task=lock_rows(Task.objects.filter(pk=task.pk)).get(), claim=None)
        old_status, old_session_id = task.status, task.session_id
        old_key = task.key
        task = instance_update(instance=task, data=data)
        if task.key != old_key:  # invocations name their task by key too (AgentInvocation.task_key)
            AgentInvocation.objects.filter(task=task).update(task_key=task.key)
        if {"session", "parent"} & set(data):
            _task_links_check(task=task, old_session_id=old_session_id)
        if depends_on is not None:
            _dependencies_set(task=task, keys=depends_on)
        if files is not None:
            _files_set(task=task, files=files)
        if task.status != old_status:
            _task_status_event(task=task, old_status=old_status, agent=agent)
    return task


def task_delete(*, task: Task) -> None:
    """Delete a task with its attempts, files and own dependency edges. A task other tasks depend on
    is kept (seed 000's Restrict): 409 `has_dependents` naming them; delete or re-plan them first."""
    tasks_delete(tasks=[task])


def tasks_delete(*, tasks: list[Task]) -> None:
    """Delete these tasks together (the admin's bulk delete): only dependents outside the set keep
    them (409 `has_dependents` naming each task and its dependents)."""
    ids = [task.pk for task in tasks]
    with transaction.atomic():
        edges = (TaskDependency.objects.filter(depends_on_id__in=ids).exclude(task_id__in=ids)
                 .order_by("depends_on__key", "task__key").values_list("depends_on__key", "task__key"))
        dependents: dict[str, list[str]] = {}
        for key, dependent in edges:
            dependents.setdefault(key, []).append(dependent)
        if dependents:
            named = "; ".join(f"{', '.join(keys)} depend on {key}" for key, keys in dependents.items())
            first = next(iter(dependents))
            raise Conflict(f"Not deleted: {named}.", code="has_dependents",
                           details={"task": first, "dependents": dependents[first]} if len(dependents) == 1
                           else {"dependents": dependents})
        instances_delete(instances=tasks)


def _task_status_event(*, task: Task, old_status: str, agent: str) -> None:
    if task.session_id:
        _event(session_id=task.session_id, event_type="task_status_changed", task_key=task.key, agent=agent,
               message=f"{task.key}: {old_status} → {task.status}",
               data={"task": task.id, "from": old_status, "to": task.status,
                     "annotation": task.status_annotation})




def task_status_set(*, task: Task, status: str, annotation: str = "", agent: str = "", claim: int | None = None,
                    fenced: bool = True) -> Task:
    """UpdateTaskStatus: the status, its annotation and the times it implies. On a claimed task the
    caller acts under the current claim (`_claim_fence`) unless not `fenced` (a person in the
    console, a qualified review)."""
    with transaction.atomic():
        task = lock_rows(Task.objects.filter(pk=task.pk).select_related("session")).get()
        if fenced:
            _claim_fence(task=task, claim=claim)
        old_status = task.status
        now = timezone.now()
        changes: dict[str, Any] = {"status": status, "status_annotation": annotation}
        if task.session is not None:
            changes["iteration_updated"] = task.session.current_iteration
        if status == TaskStatus.IN_PROGRESS and task.started_at is None:
            changes["started_at"] = now
        if status in TASK_ENDED_STATUSES:
            changes |= {"completed_at": now, "claimed_by": "", "lease_expires_at": None}
        task = instance_update(instance=task, data=changes)
        _task_status_event(task=task, old_status=old_status, agent=agent)
    return task


def _claim_fence(*, task: Task, claim: int | None) -> None:
    """Fenced claims: a write on a claimed task (heartbeat, release, status, report) is made under
    the claim its caller holds, the `claim` value claim-task returned (`task` is locked). A value that
    is not the task's current claim (the lease expired and the task went back to the pool, or was
    claimed again) is 409 `stale_claim`: the late holder changes nothing. Without a value only the
    holder's agent-bound token acts (its agent name cannot be borrowed): 409 `claim_required`.
    The current value is never in an answer: it is what proves a caller holds the claim."""
    held = task.status == TaskStatus.IN_PROGRESS and bool(task.claimed_by)
    details = {"claimed_by": task.claimed_by, "status": task.status}
    if claim is not None:
        if not held or claim != task.claim:
            raise Conflict(f"Claim {claim} on {task.key} is no longer current: its lease expired and the task went "
                           "back to the pool or to another claim. Nothing was changed.", code="stale_claim",
                           details={**details, "claim": claim})
        return
    if held and current_scope().agent != task.claimed_by:
        raise Conflict(f"{task.key} is claimed by {task.claimed_by!r}: send the `claim` value claim-task returned.",
                       code="claim_required", details=details)


def _leases_expire(*, expired: QuerySet[Task]) -> int:
    """Return the tasks of `expired` (in progress, lease past) to the ready pool, each with a
    `lease_expired` event naming the agent that held it. Rows another transaction holds are skipped
    (their holder is acting on them; the next sweep sees them)."""
    tasks = list(lock_rows(expired, skip_locked=True))
    for task in tasks:
        holder, lease = task.claimed_by, task.lease_expires_at
        instance_update(instance=task, data={"status": TaskStatus.NOT_STARTED, "claimed_by": "",
                                             "assigned_agent": "", "lease_expires_at": None})
        if task.session_id:
            _event(session_id=task.session_id, event_type="lease_expired", task_key=task.key, agent=holder,
                   message=f"{holder or 'the holder'}'s lease on {task.key} expired: it is ready to claim again",
                   data={"task": task.id, "claim": task.claim, "lease_expires_at": lease.isoformat()})
    return len(tasks)


LEASE_SWEEP_BATCH = 200


def task_leases_expire(*, now: datetime | None = None) -> int:
    """Every task whose lease expired goes back to the ready pool by itself (the upkeep job
    `task_leases_expire` runs this on one host at a time); claim-task does the same for its session
    first, so a claim never waits for the sweep. Batches of LEASE_SWEEP_BATCH, one transaction each.
    Returns how many tasks were returned."""
    now = now or timezone.now()
    returned = 0
    while True:
        with transaction.atomic():
            batch = _leases_expire(expired=Task.objects.filter(status=TaskStatus.IN_PROGRESS, lease_expires_at__lt=now)
                                   .order_by("lease_expires_at", "pk")[:LEASE_SWEEP_BATCH])
        returned += batch
        if batch < LEASE_SWEEP_BATCH:
            return returned


class NothingToClaim(Conflict):
    """claim-task has no task for the caller: `details.reason` says why, machine-readably
    (`all_done`, `waiting`, `blocked`, `at_capacity`, `session_finished`; see selectors.claim_outlook)."""

    code = "nothing_to_claim"


def task_claim_next(*, session: Session, agent: str, lease_seconds: int) -> Task:
    """Atomically give `agent` the next task the plan lets start, or raise NothingToClaim saying why.

    The plan: the dependencies are completed or skipped (selectors.tasks_ready); at most the
    session's `max_concurrency` tasks are in progress; a `sequential` task (seed 000 TaskItemType)
    never runs beside another task of the session, so while one runs nothing is handed out and
    while others run only parallelizable tasks are. A finished session hands out nothing
    (`session_finished`). The session row is locked first: two claimers count the same tasks in
    progress, and the status is the one at claim time, not the caller's copy.
    """
    with transaction.atomic():
        limits = lock_rows(Session.objects.filter(pk=session.pk)).values("status", "max_concurrency").first()
        if limits is None:
            raise NotFound(f"Session {session.pk} does not exist.", details={"session": session.pk})
        if limits["status"] in FINISHED_SESSION_STATUSES:
            raise NothingToClaim(f"Session {session.pk} is {limits['status']}: it hands out no more tasks.",
                                 details={"reason": "session_finished", "session": session.pk,
                                          "status": limits["status"]})
        now = timezone.now()
        _leases_expire(expired=Task.objects.filter(session_id=session.pk, status=TaskStatus.IN_PROGRESS,
                                                   lease_expires_at__lt=now))
        running, sequential_running = selectors.tasks_running(session_id=session.pk, now=now)
        task = None
        if running < limits["max_concurrency"] and not sequential_running:
            candidates = selectors.tasks_ready(session_id=session.pk)
            if running:
                candidates = candidates.filter(task_type=TaskType.PARALLELIZABLE)
            task = lock_rows(candidates, skip_locked=True).first()
        if task is None:
            outlook = selectors.claim_outlook(session_id=session.pk, now=now,
                                              max_concurrency=limits["max_concurrency"])
            raise NothingToClaim(outlook["message"], details=outlook["details"])
        old_status = task.status
        task = instance_update(instance=task, data={
            "status": TaskStatus.IN_PROGRESS, "claimed_by": agent, "assigned_agent": agent,
            "lease_expires_at": now + timedelta(seconds=lease_seconds), "started_at": task.started_at or now,
            "iteration_count": task.iteration_count + 1, "claim": task.claim + 1})
        _event(session_id=session.pk, event_type="task_claimed", task_key=task.key, agent=agent,
               message=f"{agent} claimed {task.key}",
               data={"task": task.id, "from": old_status, "claim": task.claim,
                     "lease_expires_at": task.lease_expires_at.isoformat()})
    return task


def _held_task(*, task: Task, agent: str, claim: int | None) -> Task:
    task = lock_rows(Task.objects.filter(pk=task.pk)).get()
    _claim_fence(task=task, claim=claim)
    if task.status != TaskStatus.IN_PROGRESS or task.claimed_by != agent:
        raise Conflict(f"{task.key} is not claimed by {agent!r}.", code="not_claim_holder",
                       details={"claimed_by": task.claimed_by, "status": task.status})
    return task


def task_heartbeat(*, task: Task, agent: str, lease_seconds: int, claim: int | None = None) -> Task:
    """Extend the lease of a claimed task; only its holder may, under its current claim."""
    with transaction.atomic():
        task = _held_task(task=task, agent=agent, claim=claim)
        lease_expires_at = timezone.now() + timedelta(seconds=lease_seconds)
        return instance_update(instance=task, data={"lease_expires_at": lease_expires_at})


def task_release(*, task: Task, agent: str, reason: str = "", operator: bool = False,
                 claim: int | None = None) -> Task:
    """Give a claimed task back: not started again, assigned to nobody, claimable by anyone.

    Only the claim's holder may, unless `operator` (a person in the console, named by `agent`) takes
    the claim back from an agent that is stuck or gone: then any in-progress claim is released and
    the event names the holder it was taken from."""
    with transaction.atomic():
        if operator:
            task = lock_rows(Task.objects.filter(pk=task.pk)).get()
            if task.status != TaskStatus.IN_PROGRESS or not task.claimed_by:
                raise Conflict(f"{task.key} is not claimed.", code="not_claimed",
                               details={"claimed_by": task.claimed_by, "status": task.status})
        else:
            task = _held_task(task=task, agent=agent, claim=claim)
        holder = task.claimed_by
        task = instance_update(instance=task, data={"status": TaskStatus.NOT_STARTED, "claimed_by": "",
                                                    "assigned_agent": "", "lease_expires_at": None})
        if task.session_id:
            taken = f" (claimed by {holder})" if operator else ""
            _event(session_id=task.session_id, event_type="task_released", task_key=task.key, agent=agent,
                   message=f"{agent} released {task.key}{taken}" + (f": {reason}" if reason else ""),
                   data={"task": task.id, "reason": reason, **({"claimed_by": holder} if operator else {})})
    return task


def task_attempt_create(*, data: dict[str, Any]) -> TaskAttempt:
    """SubmitReport (and plain attempt creates): the attempt number is the task's next one unless
    given; the task row is locked first so concurrent reports get distinct numbers."""
    data = dict(data)
    with transaction.atomic():
        task = lock_rows(Task.objects.filter(pk=data["task"].pk).select_related("session")).get()
        data["task"] = task
        if not data.get("attempt_number"):
            last = TaskAttempt.objects.filter(task=task).aggregate(last=Max("attempt_number"))["last"]
            data["attempt_number"] = (last or 0) + 1
        if "session" not in data:
            data["session"] = task.session
        if "iteration_number" not in data and task.session is not None:
            data["iteration_number"] = task.session.current_iteration
        return _usage_row_create(model=TaskAttempt, data=data)


def task_report_submit(*, task: Task, data: dict[str, Any], claim: int | None = None) -> TaskAttempt:
    """SubmitReport: the task's next attempt, made under the current claim when the task is claimed."""
    with transaction.atomic():
        _claim_fence(task=lock_rows(Task.objects.filter(pk=task.pk)).get(), claim=claim)
        return task_attempt_create(data={**data, "task": task})


def task_attempt_update(*, attempt: TaskAttempt, data: dict[str, Any]) -> TaskAttempt:
    with transaction.atomic():
        return _usage_row_update(row=attempt, data=data)


def task_attempt_delete(*, attempt: TaskAttempt) -> None:
    with transaction.atomic():
        _usage_row_delete(row=attempt)


def task_review_submit(*, task: Task, review_report: str, verdict: str, agent: str = "",
                       complete: bool = False) -> TaskAttempt:
    """SubmitReview: the review and verdict go on the task's latest attempt. With `complete`, a
    `qualified` verdict also completes the task in the same transaction (as task_status_set does); a
    `failed` verdict leaves the task's status to the orchestrator."""
    with transaction.atomic():
        attempt = lock_rows(TaskAttempt.objects.filter(task=task).order_by("-attempt_number")).first()
        if attempt is None:
            raise Conflict(f"{task.key} has no report to review.", code="no_report", details={"task": task.pk})
        attempt = instance_update(instance=attempt, data={"review_report": review_report, "review_verdict": verdict,
                                                          "reviewed_at": timezone.now()})
        if complete and verdict == ReviewVerdict.QUALIFIED:
            task_status_set(task=task, status=TaskStatus.COMPLETED, agent=agent, fenced=False,
                            annotation=f"qualified at attempt {attempt.attempt_number}")
    return attempt


def question_answer(*, question: Question, data: dict[str, Any], agent: str = "") -> Question:
    """AnswerQuestion: the answer, its source, confidence and implication; status answered."""
    with transaction.atomic():
        question = instance_update(instance=question, data={
            **data, "status": QuestionStatus.ANSWERED, "answered_at": timezone.now()})
        _event(session_id=question.session_id, event_type="question_answered", agent=agent,
               message=f"{question.key} answered", data={"question": question.id, "key": question.key})
    return question


def feedback_batch_create(*, data: dict[str, Any]) -> FeedbackBatch:
    """A feedback batch with its items and attachments, one transaction."""
    data = dict(data)
    items: list[dict[str, Any]] = data.pop("items", [])
    attachments: list[dict[str, Any]] = data.pop("attachments", [])
    with transaction.atomic():
        data["session"] = data["iteration"].session
        batch = instance_create(model=FeedbackBatch, data=data)
        FeedbackItem.objects.bulk_create(FeedbackItem(batch=batch, **item) for item in items)
        for attachment in attachments:
            feedback_attachment_create(data={**attachment, "batch": batch})
    return batch


def feedback_batch_update(*, batch: FeedbackBatch, data: dict[str, Any]) -> FeedbackBatch:
    """A batch follows its iteration: moved to another iteration, it belongs to that one's session."""
    data = dict(data)
    with transaction.atomic():
        if "iteration" in data:
            data["session"] = data["iteration"].session
        return instance_update(instance=batch, data=data)


def feedback_attachment_create(*, data: dict[str, Any]) -> FeedbackAttachment:
    with transaction.atomic():
        return instance_create(model=FeedbackAttachment, data={**data, "size": len(data.get("content", b""))})


def feedback_attachment_update(*, attachment: FeedbackAttachment, data: dict[str, Any]) -> FeedbackAttachment:
    if "content" in data:
        data = {**data, "size": len(data["content"])}
    with transaction.atomic():
        return instance_update(instance=attachment, data=data)


def feedback_item_resolve(*, item: FeedbackItem) -> FeedbackItem:
    with transaction.atomic():
        if not item.is_resolved:
            item = instance_update(instance=item, data={"is_resolved": True, "resolved_at": timezone.now()})
    return item


def signal_create(*, data: dict[str, Any], agent: str = "") -> Signal:
    """A steering message to the orchestrator (pause, stop, steer, info), recorded in the ledger as
    sent (`signal_sent`) and, once polled, as processed (`signal_processed`). One recorded as already
    processed (Ralph V2 writes IsProcessed) is stamped processed now unless it says when."""
    if data.get("is_processed") and not data.get("processed_at"):
        data = {**data, "processed_at": timezone.now()}
    with transaction.atomic():
        signal = instance_create(model=Signal, data=data)
        _event(session_id=signal.session_id, event_type="signal_sent", agent=agent,
               message=f"{signal.type} signal sent" + (f": {signal.message[:200]}" if signal.message else ""),
               data={"signal": signal.id, "type": signal.type})
    return signal


def signal_poll(*, session: Session, agent: str = "") -> Signal | None:
    """PollSignal: the oldest unprocessed signal, marked processed in the same transaction.

    Allowed on a finished session too (unlike claiming a task): signals are a queue of messages to
    the orchestrator, not work. A `stop` or `info` sent while the run was ending is still delivered
    (to the orchestrator shutting down, or to the run that resumes the session) instead of being
    lost or left to surprise a later poller; polling changes no task and not the session's status.
    """
    with transaction.atomic():
        signal = lock_rows(Signal.objects.filter(session=session, is_processed=False).order_by("sent_at", "id"),
                           skip_locked=True).first()
        if signal is None:
            return None
        signal = instance_update(instance=signal, data={"is_processed": True, "processed_at": timezone.now(),
                                                        "processed_by": agent})
        # The poll is the loop's activity (a signal's own writes are not: see Signal).
        _event(session_id=session.pk, event_type="signal_processed", agent=agent,
               message=f"{signal.type} signal processed", data={"signal": signal.id, "type": signal.type})
    return signal


def session_resume(*, session: Session, agent: str = "", force: bool = False,
                   idle_seconds: int = selectors.DEFAULT_IDLE_SECONDS) -> dict[str, Any]:
    """Where an interrupted session stopped; the session is marked running again.

    Seed 001 resumes *interrupted* runs ("resume or start fresh"): a session still `running` that
    went quiet, or one that ended `failed`, `stopped` or `aborted` with work left. A `completed`
    session finished successfully; there is nothing to resume (start a new session): 409
    `session_completed`. A running session written to within `idle_seconds` is not interrupted:
    someone is driving it (or has just resumed it), so a second orchestrator gets 409
    `session_active` unless it insists with `force`.
    Receivers of `resume_requested` (the ledger: last checkpoint) add their dicts to the answer.
    """
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        if session.status == SessionStatus.COMPLETED:
            raise Conflict(f"Session {session.pk} completed successfully; start a new session instead.",
                           code="session_completed", details={"session": session.pk, "status": session.status})
        quiet_since = timezone.now() - timedelta(seconds=idle_seconds)
        if session.status == SessionStatus.RUNNING and session.last_activity_at >= quiet_since and not force:
            raise Conflict(f"Session {session.pk} was active at {session.last_activity_at.isoformat()}, within "
                           f"{idle_seconds} s: it is not interrupted (force: true resumes it anyway).",
                           code="session_active",
                           details={"session": session.pk, "last_activity_at": detail_time(session.last_activity_at),
                                    "idle_seconds": idle_seconds})
        current = (Task.objects.filter(session=session, status=TaskStatus.IN_PROGRESS)
                   .order_by(F("started_at").desc(nulls_last=True)).first())
        following = selectors.tasks_ready(session_id=session.pk).first()
        old_status = session.status
        session = instance_update(instance=session, data={"status": SessionStatus.RUNNING, "ended_at": None,
                                                          "last_activity_at": timezone.now()})
        point: dict[str, Any] = {
            "session": session.pk, "iteration": session.current_iteration, "state": session.state,
            "wave": session.current_wave, "current_task": current.key if current else None,
            "next_task": following.key if following else None,
        }
        for _receiver, answer in resume_requested.send(sender=Session, session_id=session.pk):
            if isinstance(answer, dict):
                point.update(answer)
        _event(session_id=session.pk, event_type="session_resumed", agent=agent,
               message=f"resumed at iteration {session.current_iteration}",
               data={"from": old_status, "current_task": point["current_task"], "next_task": point["next_task"]})
    return point


def session_finish(*, session: Session, status: str, exit_reason: str = "", summary: str | None = None,
                   agent: str = "") -> Session:
    """Record a session's outcome: its final status, why it ended, and when. Once: a finished
    session is a 409 `session_finished` (resume/ runs it again)."""
    if status == SessionStatus.RUNNING:
        raise InvalidInput("A finished session cannot be running.", details={"status": ["running"]})
    with transaction.atomic():
        session = lock_rows(Session.objects.filter(pk=session.pk)).get()
        if session.status in FINISHED_SESSION_STATUSES:
            raise _already_finished(session)
        if summary is not None:
            session = instance_update(instance=session, data={"summary": summary})
        return _session_end(session=session, status=status, exit_reason=exit_reason, ended_at=None, agent=agent)


def _already_finished(session: Session) -> Conflict:
    return Conflict(f"Session {session.pk} already finished ({session.status}); resume/ runs it again.",
                    code="session_finished",
                    details={"session": session.pk, "status": session.status,
                             "ended_at": detail_time(session.ended_at)})


def _session_end(*, session: Session, status: str, exit_reason: str, ended_at: Any, agent: str) -> Session:
    """A running session's final status, with its ended_at (now unless given) and its ledger event."""
    now = timezone.now()
    session = instance_update(instance=session, data={"status": status, "exit_reason": exit_reason,
                                                      "ended_at": ended_at or now, "last_activity_at": now})
    _event(session_id=session.pk, event_type="session_finished", agent=agent,
           message=f"finished: {status}" + (f" ({exit_reason})" if exit_reason else ""),
           data={"status": status, "exit_reason": exit_reason})
    return session


def _invocation_task_linked(*, data: dict[str, Any], session_id: str) -> dict[str, Any]:
    """`task` and `task_key` of an invocation name the same task, whichever of them a write sets.

    A task sets task_key to its key (a different non-blank task_key is a 400); a task_key alone
    (DevTeam names the task by key) links the session's task of that key, or none when the session
    has no such task; clearing the task without naming a key clears task_key.
    """
    task = data.get("task")
    if task is not None:
        given = data.get("task_key") or task.key
        if given != task.key:
            message = f"task_key {given!r} is not the key of the task ({task.key!r})."
            raise InvalidInput(message, details={"task_key": [message]})
        return {**data, "task_key": task.key}
    if "task_key" in data:
        key = data["task_key"]
        return {**data, "task": Task.objects.filter(session_id=session_id, key=key).first() if key else None}
    if "task" in data:
        return {**data, "task_key": ""}
    return data


def agent_invocation_create(*, data: dict[str, Any]) -> AgentInvocation:
    with transaction.atomic():
        data = _invocation_task_linked(data=data, session_id=data["session"].pk)
        return _usage_row_create(model=AgentInvocation, data=data)


def agent_invocation_update(*, invocation: AgentInvocation, data: dict[str, Any]) -> AgentInvocation:
    """Also the `complete` verb (response, status, duration, tokens, cost): totals move by the delta.
    A new task (or task_key) keeps the other one consistent (see _invocation_task_linked)."""
    with transaction.atomic():
        invocation = lock_rows(AgentInvocation.objects.filter(pk=invocation.pk)).get()
        session = data.get("session")
        data = _invocation_task_linked(data=data, session_id=session.pk if session else invocation.session_id)
        if data.get("status") in FINISHED_INVOCATION_STATUSES and not data.get("completed_at"):
            data = {**data, "completed_at": invocation.completed_at or timezone.now()}
        return _usage_row_update(row=invocation, data=data)


def agent_invocation_delete(*, invocation: AgentInvocation) -> None:
    with transaction.atomic():
        _usage_row_delete(row=invocation)
