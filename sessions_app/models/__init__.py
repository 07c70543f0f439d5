from sessions_app.models.iterations import Iteration
from sessions_app.models.loops import LoopRun, LoopRunStatus
from sessions_app.models.sessions import (
    CircuitBreakerState,
    CommandType,
    ExecutionMode,
    OrchestratorState,
    Session,
    SessionStatus,
)

__all__ = [
    "CircuitBreakerState",
    "CommandType",
    "ExecutionMode",
    "Iteration",
    "LoopRun",
    "LoopRunStatus",
    "OrchestratorState",
    "Session",
    "SessionStatus",
]

# DevTeam quality, context, interview and state tables (seed 003).
from sessions_app.models.context import (
    ContextAction,
    ContextBudget,
    ContextSnapshot,
    ContextStatus,
    SnapshotType,
)
from sessions_app.models.devteam_state import (
    PhaseType,
    ProgressSummary,
    SessionPhase,
    SessionStateEntry,
)
from sessions_app.models.interviews import (
    Interview,
    InterviewQuestion,
    InterviewStatus,
    InterviewType,
    QuestionType,
)
from sessions_app.models.quality import (
    AcceptanceCriterion,
    Bug,
    BugComplexity,
    BugStatus,
    CriterionCategory,
    DiagnosisMethod,
    Escalation,
    Feature,
    Urgency,
    VerificationMethod,
)

__all__ += [
    "AcceptanceCriterion",
    "Bug",
    "BugComplexity",
    "BugStatus",
    "ContextAction",
    "ContextBudget",
    "ContextSnapshot",
    "ContextStatus",
    "CriterionCategory",
    "DiagnosisMethod",
    "Escalation",
    "Feature",
    "Interview",
    "InterviewQuestion",
    "InterviewStatus",
    "InterviewType",
    "PhaseType",
    "ProgressSummary",
    "QuestionType",
    "SessionPhase",
    "SessionStateEntry",
    "SnapshotType",
    "Urgency",
    "VerificationMethod",
]
