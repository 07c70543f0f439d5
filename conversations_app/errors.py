"""Seed 002's error codes, as the `code` of the errors services raise."""

from ralphsite.core.errors import InvalidInput, NotFound

CHAT_NOT_FOUND = "ACODE-CONV-DATA-001"
RUN_NOT_FOUND = "ACODE-CONV-DATA-002"
MESSAGE_NOT_FOUND = "ACODE-CONV-DATA-003"
FOREIGN_KEY_VIOLATION = "ACODE-CONV-DATA-004"
MIGRATION_FAILED = "ACODE-CONV-DATA-005"

NOT_FOUND_CODES = {"chat": CHAT_NOT_FOUND, "run": RUN_NOT_FOUND, "message": MESSAGE_NOT_FOUND}


def not_found(entity: str, entity_id: str) -> NotFound:
    """404 for a chat/run/message addressed by the URL (or a missing one in a bulk request)."""
    return NotFound(f"{entity.capitalize()} {entity_id} does not exist.", code=NOT_FOUND_CODES[entity],
                    details={entity: entity_id})


def missing_parent(entity: str, entity_id: str) -> InvalidInput:
    """400: a body names a parent that does not exist (a run for a missing chat, a message for a missing run)."""
    return InvalidInput(f"{entity.capitalize()} {entity_id} does not exist.", code=FOREIGN_KEY_VIOLATION,
                        details={entity: [f"{entity.capitalize()} {entity_id} does not exist."]})
