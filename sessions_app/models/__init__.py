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
