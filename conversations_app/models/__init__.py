from conversations_app.models.chats import (
    TOOL_CALLS,
    Chat,
    ChatTag,
    Message,
    MessageRole,
    Run,
    RunStatus,
    SyncStatus,
    ToolCallStatus,
)
from conversations_app.models.memory import GlobalPattern, Observation, ObservationType, PatternType
from conversations_app.models.sync import SyncEntity, SyncMapping

__all__ = [
    "TOOL_CALLS",
    "Chat",
    "ChatTag",
    "GlobalPattern",
    "Message",
    "MessageRole",
    "Observation",
    "ObservationType",
    "PatternType",
    "Run",
    "RunStatus",
    "SyncEntity",
    "SyncMapping",
    "SyncStatus",
    "ToolCallStatus",
]
