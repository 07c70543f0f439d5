"""The ledger's implementation of sessions_app's port (`sessions_app.ledger.Ledger`), installed by
`LedgerAppConfig.ready()`: sessions_app calls it and never imports ledger_app."""

from decimal import Decimal
from typing import Any

from ledger_app import services
from ledger_app.api.serializers import CheckpointSerializer
from sessions_app.ledger import Ledger, UsageSource

AUDIT_CATEGORY = "orchestration"


class SessionsLedger(Ledger):
    def event_append(self, *, session_id: str, event_type: str, message: str, data: dict[str, Any],
                     task_key: str = "", agent: str = "") -> None:
        services.event_append(session_id=session_id, type=event_type, category=AUDIT_CATEGORY, task_key=task_key,
                              agent=agent, message=message, data=data)

    def usage_replace(self, *, source: UsageSource, source_id: str, item: dict[str, Any] | None) -> Decimal | None:
        return services.usage_replace(source=source, source_id=source_id, item=item)

    def checkpoint_last(self, *, session_id: str) -> dict[str, Any] | None:
        checkpoint = services.checkpoint_last(session_id=session_id)
        return dict(CheckpointSerializer(checkpoint).data) if checkpoint else None

    def events_purge(self, *, session_ids: list[str], reason: str) -> None:
        services.ledger_events_purge(session_ids=session_ids, reason=reason)
