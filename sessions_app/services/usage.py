"""Usage: a session's token and cost totals, and the rows that report provider calls (task attempts'
and agent invocations' writes record each call in the ledger's token usage)."""

from decimal import Decimal
from typing import Any, TypeVar

from django.db import transaction
from django.db.models import F, Value
from django.utils import timezone

from ralphsite.core.activity import sessions_touch
from ralphsite.core.errors import InvalidInput, NotFound
from ralphsite.core.fields import BIGINT_MAX
from ralphsite.core.money import usd_max
from ralphsite.core.services import instance_create, instance_delete, instance_update
from sessions_app.ledger import ledger
from sessions_app.models import FINISHED_INVOCATION_STATUSES, AgentInvocation, Session, Task, TaskAttempt
from sessions_app.services.base import lock_rows

# Written only by services that account usage, never by clients.
SESSION_TOTAL_FIELDS = ("total_tokens_input", "total_tokens_output", "total_cost_usd")


def _usage_totals_add(*, session_id: str, tokens_input: int, tokens_output: int, cost_usd: Decimal) -> int:
    """The totals UPDATE (F() expressions, so concurrent writers never lose an increment); the number of
    rows it changed (0: no session, or an overflow). Money is exact on both backends: SQLite adds whole
    micro-dollars (integers), PostgreSQL numeric (`ralphsite.core.money.MoneyField`)."""
    tokens = tokens_input + tokens_output
    return Session.objects.filter(
        pk=session_id, total_tokens_input__lte=BIGINT_MAX - max(tokens_input, 0),
        total_tokens_output__lte=BIGINT_MAX - max(tokens_output, 0), token_count__lte=BIGINT_MAX - max(tokens, 0),
        total_cost_usd__lte=usd_max() - max(cost_usd, Decimal(0)),
    ).update(
        total_tokens_input=F("total_tokens_input") + tokens_input,
        total_tokens_output=F("total_tokens_output") + tokens_output, token_count=F("token_count") + tokens,
        total_cost_usd=F("total_cost_usd") + Value(cost_usd, output_field=Session._meta.get_field("total_cost_usd")),
        last_activity_at=timezone.now(),
    )


def session_usage_add(*, session_id: str, tokens_input: int = 0, tokens_output: int = 0,
                      cost_usd: Decimal | int = 0) -> None:
    """Add one usage-bearing row's tokens and cost to its session's totals; the same UPDATE moves the
    session's activity (a write without usage only moves that).

    An UPDATE with F() expressions: concurrent writers never lose an increment. Call it inside the
    transaction that writes the row, so the totals always equal the sum of the rows.
    """
    if not (tokens_input or tokens_output or cost_usd):
        sessions_touch([session_id])  # no usage, still the session's activity
        return
    cost_usd = Decimal(cost_usd)
    # Only a total that fits its column is written (positive deltas are bounded, in the same UPDATE):
    # an overflow is the client's 400, never the database's error.
    updated = _usage_totals_add(session_id=session_id, tokens_input=tokens_input, tokens_output=tokens_output,
                                cost_usd=cost_usd)
    if not updated and Session.objects.filter(pk=session_id).exists():
        raise InvalidInput(f"The usage would overflow the totals of session {session_id}.", code="usage_overflow",
                           details={"session": session_id, "tokens_input": tokens_input,
                                    "tokens_output": tokens_output, "cost_usd": str(cost_usd)})
    if not updated:
        raise NotFound(f"Session {session_id} does not exist.", details={"session": session_id})


UsageRow = TypeVar("UsageRow", TaskAttempt, AgentInvocation)


def _usage_item(row: TaskAttempt | AgentInvocation) -> dict[str, Any]:
    """The provider call this row reports, as the ledger's token usage records it; a cost the client
    did not send (`is_estimated`) is None, for the ledger to price."""
    attempt = isinstance(row, TaskAttempt)
    return {"session_id": row.session_id, "request_id": row.request_id, "model": row.model, "agent": row.agent,
            "task_key": row.task.key if attempt else row.task_key, "operation": "attempt" if attempt else "invocation",
            "input_tokens": row.tokens_input or 0, "output_tokens": row.tokens_output or 0,  # null: none reported
            "cost_usd": None if row.is_estimated else Decimal(row.cost_usd),
            "recorded_at": (row.started_at or row.created_at) if attempt else row.started_at}


def _usage_report(*, row: UsageRow, item: dict[str, Any] | None) -> UsageRow:
    """Tell the ledger the call this row reports (None: the row is gone); its token usage is the one
    book of calls and moves the session totals. A cost the client did not send is the one the
    ledger priced, written back to the row."""
    priced = ledger().usage_replace(source="attempt" if isinstance(row, TaskAttempt) else "invocation",
                                    source_id=row.pk, item=item)
    if item is not None and row.is_estimated and priced is not None and priced != row.cost_usd:
        type(row).objects.filter(pk=row.pk).update(cost_usd=priced)
        row.cost_usd = priced
    return row


_TOKEN_FIELDS = ("tokens_input", "tokens_output")


def _cost_sent(data: dict[str, Any], *, row: TaskAttempt | AgentInvocation | None = None) -> dict[str, Any]:
    """A write's `cost_usd`: one sent (0 included) is the row's cost. None, or none sent with a create
    or with an update that changes the row's tokens (a cost sent before was for other tokens), the
    ledger prices the row's call (`is_estimated`; an estimated row is priced again whenever its call
    changes, its model included). An update changing no tokens keeps how the cost is made."""
    cost = data.get("cost_usd")
    if "cost_usd" not in data and row is not None and all(
            data.get(name, getattr(row, name)) == getattr(row, name) for name in _TOKEN_FIELDS):
        return data
    if cost is None:  # the row keeps its cost until the ledger answers the priced one (_usage_report)
        return {**{name: value for name, value in data.items() if name != "cost_usd"}, "is_estimated": True}
    return {**data, "is_estimated": False}


# Rows carrying tokens/cost: their writes record the call in the same transaction.
def usage_row_create(*, model: type[UsageRow], data: dict[str, Any]) -> UsageRow:
    row = instance_create(model=model, data=_cost_sent(data))
    return _usage_report(row=row, item=_usage_item(row))


def usage_row_update(*, row: UsageRow, data: dict[str, Any]) -> UsageRow:
    old_usage = _usage_item(row)
    row = instance_update(instance=row, data=_cost_sent(data, row=row))
    new_usage = _usage_item(row)
    if new_usage != old_usage:
        row = _usage_report(row=row, item=new_usage)
    return row


def usage_row_delete(*, row: UsageRow) -> None:
    _usage_report(row=row, item=None)
    instance_delete(instance=row)


def _invocation_task_linked(*, data: dict[str, Any], session_id: str) -> dict[str, Any]:
    """`task` and `task_key` of an invocation name the same task, whichever of them a write sets.

    A task sets task_key to its key (a different non-blank task_key is a 400); a task_key alone
    (DevTeam names the task by key) links the session's task of that key, or none when the session
    has no such task; clearing the task without naming a key clears task_key.
    """
    task = data.get("task")
    if task is not None:
        given = data.get("task_key") or task.key
        if given != task.key:
            message = f"task_key {given!r} is not the key of the task ({task.key!r})."
            raise InvalidInput(message, details={"task_key": [message]})
        return {**data, "task_key": task.key}
    if "task_key" in data:
        key = data["task_key"]
        return {**data, "task": Task.objects.filter(session_id=session_id, key=key).first() if key else None}
    if "task" in data:
        return {**data, "task_key": ""}
    return data


def agent_invocation_create(*, data: dict[str, Any]) -> AgentInvocation:
    with transaction.atomic():
        data = _invocation_task_linked(data=data, session_id=data["session"].pk)
        return usage_row_create(model=AgentInvocation, data=data)


def agent_invocation_update(*, invocation: AgentInvocation, data: dict[str, Any]) -> AgentInvocation:
    """Also the `complete` verb (response, status, duration, tokens, cost): totals move by the delta.
    A new task (or task_key) keeps the other one consistent (see _invocation_task_linked)."""
    with transaction.atomic():
        invocation = lock_rows(AgentInvocation.objects.filter(pk=invocation.pk)).get()
        session = data.get("session")
        data = _invocation_task_linked(data=data, session_id=session.pk if session else invocation.session_id)
        if data.get("status") in FINISHED_INVOCATION_STATUSES and not data.get("completed_at"):
            data = {**data, "completed_at": invocation.completed_at or timezone.now()}
        return usage_row_update(row=invocation, data=data)


def agent_invocation_delete(*, invocation: AgentInvocation) -> None:
    with transaction.atomic():
        usage_row_delete(row=invocation)
