"""Small builders for ledger tests (ORM rows; the API tests post their own bodies)."""

from datetime import datetime
from decimal import Decimal
from typing import Any

from ledger_app.models import LedgerEvent
from sessions_app.models import Session


def make_session(**fields: Any) -> Session:
    return Session.objects.create(**fields)


def make_event(session: Session, index: int = 0, **fields: Any) -> LedgerEvent:
    values: dict[str, Any] = {"type": "task_started", "message": f"event {index}", "task_key": f"task-{index}"}
    return LedgerEvent.objects.create(session=session, **{**values, **fields})


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def usd(text: str) -> Decimal:
    return Decimal(text)
