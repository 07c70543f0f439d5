"""Read queries for orchestration state."""

from django.db.models import QuerySet

from sessions_app.models import (
    AcceptanceCriterion,
    Bug,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Feature,
    Interview,
    InterviewQuestion,
    LoopRun,
    ProgressSummary,
    Session,
    SessionPhase,
    SessionStateEntry,
)


def session_list() -> QuerySet[Session]:
    return Session.objects.all()


# -- DevTeam state, quality, context and interview tables (seed 003); loop runs (seed 004) -----------
# Their representations name related rows by id only, so the lists need no joins.


def session_state_list() -> QuerySet[SessionStateEntry]:
    return SessionStateEntry.objects.all()


def session_phase_list() -> QuerySet[SessionPhase]:
    return SessionPhase.objects.all()


def progress_summary_list() -> QuerySet[ProgressSummary]:
    return ProgressSummary.objects.all()


def bug_list() -> QuerySet[Bug]:
    return Bug.objects.all()


def escalation_list() -> QuerySet[Escalation]:
    return Escalation.objects.all()


def acceptance_criterion_list() -> QuerySet[AcceptanceCriterion]:
    return AcceptanceCriterion.objects.all()


def feature_list() -> QuerySet[Feature]:
    return Feature.objects.all()


def context_budget_list() -> QuerySet[ContextBudget]:
    return ContextBudget.objects.all()


def context_snapshot_list() -> QuerySet[ContextSnapshot]:
    return ContextSnapshot.objects.all()


def interview_list() -> QuerySet[Interview]:
    return Interview.objects.all()


def interview_question_list() -> QuerySet[InterviewQuestion]:
    return InterviewQuestion.objects.all()


def loop_run_list() -> QuerySet[LoopRun]:
    return LoopRun.objects.all()
