"""The ledger's answers to sessions_app's domain signals (sessions_app never imports ledger_app)."""

from decimal import Decimal
from typing import Any

from ledger_app import services
from sessions_app.signals import orchestration_event, resume_requested, sessions_deleting, usage_reported

AUDIT_CATEGORY = "orchestration"


def record_orchestration_event(sender: Any, *, session_id: str, event_type: str, task_key: str = "",
                               agent: str = "", message: str = "", data: dict[str, Any] | None = None,
                               **kwargs: Any) -> None:
    """Append the audit event inside the sender's transaction: if it fails, the change rolls back."""
    services.event_append(session_id=session_id, type=event_type, category=AUDIT_CATEGORY, task_key=task_key,
                          agent=agent, message=message, data=data or {})


def answer_resume_request(sender: Any, *, session_id: str, **kwargs: Any) -> dict[str, Any]:
    from ledger_app.api.serializers import CheckpointSerializer

    checkpoint = services.checkpoint_last(session_id=session_id)
    return {"last_checkpoint": dict(CheckpointSerializer(checkpoint).data) if checkpoint else None}


def purge_deleted_sessions_events(sender: Any, *, session_ids: list[str], reason: str, **kwargs: Any) -> None:
    services.ledger_events_purge(session_ids=session_ids, reason=reason)


def record_reported_usage(sender: Any, *, source: str, source_id: str, item: dict[str, Any] | None,
                          **kwargs: Any) -> Decimal | None:
    return services.usage_replace(source=source, source_id=source_id, item=item)


def connect() -> None:
    orchestration_event.connect(record_orchestration_event, dispatch_uid="ledger_orchestration_event")
    resume_requested.connect(answer_resume_request, dispatch_uid="ledger_resume_requested")
    sessions_deleting.connect(purge_deleted_sessions_events, dispatch_uid="ledger_sessions_deleting")
    usage_reported.connect(record_reported_usage, dispatch_uid="ledger_usage_reported")
