from ledger_app.models.chain import LedgerChainHead, RetentionRange
from ledger_app.models.checkpoints import (
    Baseline,
    Checkpoint,
    CheckpointRestore,
    CheckType,
    Rollback,
    RollbackTrigger,
    RollbackType,
)
from ledger_app.models.events import (
    CUSTOM_EVENT_TYPE,
    EVENT_NON_NEGATIVE,
    EVENT_TYPES,
    LEDGER_PURGED,
    LedgerEvent,
    event_rule_problems,
    event_type_canonical,
    event_type_is_valid,
    event_type_message,
)
from ledger_app.models.issues import Issue
from ledger_app.models.quality import DeadLetter, DeadLetterStatus, ErrorLog, ErrorType, Gate, GateResult
from ledger_app.models.retention import RetentionRun
from ledger_app.models.usage import PRICED_TOKEN_FIELDS, ModelPrice, TokenUsage, UsageDay, UsageSource, UsageSums

__all__ = [
    "CUSTOM_EVENT_TYPE",
    "EVENT_NON_NEGATIVE",
    "EVENT_TYPES",
    "LEDGER_PURGED",
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
    "LedgerChainHead",
    "LedgerEvent",
    "ModelPrice",
    "RetentionRange",
    "RetentionRun",
    "Rollback",
    "RollbackTrigger",
    "RollbackType",
    "TokenUsage",
    "UsageDay",
    "UsageSource",
    "UsageSums",
    "event_rule_problems",
    "event_type_canonical",
    "event_type_is_valid",
    "event_type_message",
]
