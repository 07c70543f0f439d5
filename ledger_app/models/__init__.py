from ledger_app.models.checkpoints import (
    Baseline,
    Checkpoint,
    CheckpointRestore,
    CheckType,
    Rollback,
    RollbackTrigger,
    RollbackType,
)
from ledger_app.models.events import EVENT_TYPES, LedgerEvent, event_type_is_valid
from ledger_app.models.issues import Issue
from ledger_app.models.quality import DeadLetter, DeadLetterStatus, ErrorLog, ErrorType, Gate, GateResult
from ledger_app.models.retention import RetentionRun
from ledger_app.models.usage import PRICED_TOKEN_FIELDS, ModelPrice, TokenUsage

__all__ = [
    "EVENT_TYPES",
    "PRICED_TOKEN_FIELDS",
    "Baseline",
    "CheckType",
    "Checkpoint",
    "CheckpointRestore",
    "DeadLetter",
    "DeadLetterStatus",
    "ErrorLog",
    "ErrorType",
    "Gate",
    "GateResult",
    "Issue",
    "LedgerEvent",
    "ModelPrice",
    "RetentionRun",
    "Rollback",
    "RollbackTrigger",
    "RollbackType",
    "TokenUsage",
    "event_type_is_valid",
]
