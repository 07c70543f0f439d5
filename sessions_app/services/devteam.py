"""DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004)."""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from ralphsite.core.activity import sessions_touch
from ralphsite.core.errors import Conflict, InvalidInput, NotFound
from ralphsite.core.fields import BIGINT_MAX
from ralphsite.core.services import instance_create, instance_delete, instance_update
from sessions_app.models import (
    AcceptanceCriterion,
    Bug,
    BugStatus,
    ContextBudget,
    ContextSnapshot,
    ContextStatus,
    Feature,
    FindingType,
    Interview,
    InterviewQuestion,
    InterviewStatus,
    LoopRun,
    LoopRunStatus,
    ResearchFinding,
    ResearchSession,
)
from sessions_app.models.context import validate_context_thresholds
from sessions_app.services.base import stamp_on_change

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


def bug_create(*, data: dict[str, Any]) -> Bug:
    with transaction.atomic():
        return instance_create(model=Bug, data=stamp_on_change(
            data, previous=BugStatus.OPEN, field="status", value=BugStatus.RESOLVED, stamp="resolved_at"))


def bug_update(*, bug: Bug, data: dict[str, Any]) -> Bug:
    with transaction.atomic():
        return instance_update(instance=bug, data=stamp_on_change(
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
    return stamp_on_change(data, previous=previous_passes, field="passes", value=True, stamp="verified_at")


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
        return instance_create(model=Interview, data=stamp_on_change(
            data, previous=InterviewStatus.IN_PROGRESS, field="status", value=InterviewStatus.COMPLETED,
            stamp="completed_at"))


def interview_update(*, interview: Interview, data: dict[str, Any]) -> Interview:
    with transaction.atomic():
        return instance_update(instance=interview, data=stamp_on_change(
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
    """Count one more iteration of a running loop; refused (409) past max_iterations (None: no limit)."""
    return _loop_run_transition(loop_run_id=loop_run_id,
                                allowed=Q(max_iterations__isnull=True) | Q(iterations__lt=F("max_iterations")),
                                changes={"iterations": F("iterations") + 1})


def loop_run_finish(*, loop_run_id: str, status: str, snapshot_path: str | None = None) -> LoopRun:
    """End a running loop with its outcome (success, failed or stopped)."""
    changes: dict[str, Any] = {"status": status, "ended_at": timezone.now()}
    if snapshot_path is not None:
        changes["snapshot_path"] = snapshot_path
    return _loop_run_transition(loop_run_id=loop_run_id, allowed=Q(), changes=changes)
