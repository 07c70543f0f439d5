"""Rows of the DevTeam tables for the sessions_app tests, made through the ORM."""

from sessions_app.models import (
    Bug,
    ContextBudget,
    ContextSnapshot,
    Escalation,
    Interview,
    InterviewQuestion,
    LoopRun,
    ProgressSummary,
    Session,
    SessionPhase,
    SessionStateEntry,
)


def devteam_session(key: str = "devteam") -> Session:
    session, _ = Session.objects.get_or_create(key=key, defaults={"command": "/devteam:implement"})
    return session


def devteam_interview(key: str = "devteam") -> Interview:
    return Interview.objects.create(session=devteam_session(key), interview_type="feature")


# Seed 003: deleting a session deletes these rows (ralph-mem loop runs too).
SESSION_CASCADED_MODELS = [SessionStateEntry, SessionPhase, ProgressSummary, Bug, Escalation, ContextBudget,
                           ContextSnapshot, Interview, InterviewQuestion, LoopRun]


def devteam_rows(key: str) -> None:
    """One row of every table that cascades from a session, for the session with this key."""
    session = devteam_session(key)
    SessionStateEntry.objects.create(session=session, key="phase", value="coding")
    SessionPhase.objects.create(session=session, phase_type="coding")
    ProgressSummary.objects.create(session=session, summary_text="half done")
    Bug.objects.create(session=session, description="crash")
    Escalation.objects.create(session=session, from_model="haiku", to_model="sonnet", reason="failures")
    ContextBudget.objects.create(session=session, model="opus", context_limit=1000)
    ContextSnapshot.objects.create(session=session, snapshot_type="auto")
    InterviewQuestion.objects.create(interview=devteam_interview(key), question_key="k", question_text="t",
                                     sequence=1)
    LoopRun.objects.create(session=session, task="t")
