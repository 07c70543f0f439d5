"""Every operation that changes orchestration state: one function per domain verb, one transaction."""

from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ralphsite.errors import NotFound
from ralphsite.services import instance_create, instance_update
from sessions_app.models import Session
from sessions_app.signals import orchestration_event, usage_recorded

# Written only by services that account usage, never by clients.
SESSION_TOTAL_FIELDS = ("total_tokens_input", "total_tokens_output", "total_cost_usd")


def session_create(*, data: dict[str, Any]) -> Session:
    with transaction.atomic():
        return instance_create(model=Session, data=data)


def session_update(*, session: Session, data: dict[str, Any]) -> Session:
    with transaction.atomic():
        old_state = session.state
        session = instance_update(instance=session, data={**data, "last_activity_at": timezone.now()})
        if "state" in data and data["state"] != old_state:
            orchestration_event.send(
                sender=Session, session_id=session.id, event_type="session_state_changed", task_key="",
                agent="", message=f"state {old_state} → {session.state}",
                data={"from": old_state, "to": session.state},
            )
    return session


def session_delete(*, session: Session) -> None:
    with transaction.atomic():
        session.delete()


def session_usage_add(*, session_id: str, tokens_input: int = 0, tokens_output: int = 0,
                      cost_usd: Decimal | int = 0) -> None:
    """Add one usage-bearing row's tokens and cost to its session's totals.

    An UPDATE with F() expressions: concurrent writers never lose an increment. Call it inside the
    transaction that writes the row, so the totals always equal the sum of the rows.
    """
    if not (tokens_input or tokens_output or cost_usd):
        return
    updated = Session.objects.filter(pk=session_id).update(
        total_tokens_input=F("total_tokens_input") + tokens_input,
        total_tokens_output=F("total_tokens_output") + tokens_output,
        total_cost_usd=F("total_cost_usd") + Decimal(cost_usd),
        token_count=F("token_count") + tokens_input + tokens_output,
        last_activity_at=timezone.now(),
    )
    if not updated:
        raise NotFound(f"Session {session_id} does not exist.", details={"session": session_id})
    usage_recorded.send(sender=Session, session_id=session_id, tokens_input=tokens_input,
                        tokens_output=tokens_output, cost_usd=Decimal(cost_usd))
