"""Questions, human feedback and steering signals: what passes between a loop and the people steering it."""

from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Subquery, Value
from django.db.models.functions import Concat
from django.utils import timezone

from ralphsite.core.access import acting
from ralphsite.core.errors import Conflict, detail_time
from ralphsite.core.services import instance_create, instance_update
from sessions_app.ledger import ledger
from sessions_app.models import (
    FINISHED_SESSION_STATUSES,
    QUESTION_STATUS_LIFECYCLE,
    SIGNAL_LIFECYCLE,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Question,
    QuestionStatus,
    Session,
    Signal,
    SignalStage,
    signal_stage,
)
from sessions_app.services.base import lock_rows, session_open_check


def question_create(*, data: dict[str, Any]) -> Question:
    """CreateQuestion: asked in the session's current iteration unless the caller says otherwise."""
    data = dict(data)
    with transaction.atomic():
        session_open_check(session_id=data["session"].pk, verb="ask a question")
        if "iteration_number" not in data:
            data["iteration_number"] = (Session.objects.filter(pk=data["session"].pk)
                                        .values_list("current_iteration", flat=True).get())
        return instance_create(model=Question, data=data)


def question_update(*, question: Question, data: dict[str, Any], actor: str = "") -> Question:
    """A plain update: the status follows QUESTION_STATUS_LIFECYCLE (409 `invalid_transition`); one that answers
    the question (status answered) answers it as answer/ does (question_answer: who answered, the event)."""
    data = dict(data)
    with transaction.atomic():
        question = lock_rows(Question.objects.filter(pk=question.pk)).get()
        session_open_check(session_id=question.session_id, verb="update a question")
        if "status" in data:
            QUESTION_STATUS_LIFECYCLE.check(current=question.status, new=data["status"],
                                            subject=f"Question {question.key}")
        if data.get("status") == QuestionStatus.ANSWERED and question.status != QuestionStatus.ANSWERED:
            answer = {name: data.pop(name) for name in ANSWER_FIELDS if name in data}
            data.pop("status")
            question = instance_update(instance=question, data=data)
            return question_answer(question=question, data=answer, actor=actor)
        return instance_update(instance=question, data=data)


ANSWER_FIELDS = ("answer", "answer_source", "answer_confidence", "answer_implication")
# What the `question_answered` event keeps of an answer (and of the one a replacing answer replaced).
ANSWER_RECORD_FIELDS = (*ANSWER_FIELDS, "answered_by")


def question_answer(*, question: Question, data: dict[str, Any], agent: str = "", actor: str = "",
                    replace: bool = False) -> Question:
    """AnswerQuestion: the answer, its source, confidence and implication; status answered. A question is
    answered once: a second answer is a 409 `already_answered` unless it says `replace`, and then the
    replaced answer is kept in the `question_answered` event. `answered_by` is who acts (`acting`: the
    request's token, or the `actor` a door names, the admin's person); the source names them when not given."""
    answered_by = acting(actor)
    data = {**data, "answered_by": answered_by, "answer_source": data.get("answer_source") or answered_by}
    with transaction.atomic():
        question = lock_rows(Question.objects.filter(pk=question.pk)).get()
        session_open_check(session_id=question.session_id, verb="answer a question")
        replaced = None
        if question.status == QuestionStatus.ANSWERED:
            if not replace:
                raise Conflict(f"{question.key} is already answered; send `replace: true` to replace the answer.",
                               code="already_answered",
                               details={"question": question.key, "answered_at": detail_time(question.answered_at)})
            replaced: dict[str, Any] = {name: getattr(question, name) for name in ANSWER_RECORD_FIELDS}
            replaced["answered_at"] = detail_time(question.answered_at)
        QUESTION_STATUS_LIFECYCLE.check(current=question.status, new=QuestionStatus.ANSWERED,
                                        subject=f"Question {question.key}")
        question = instance_update(instance=question, data={
            **data, "status": QuestionStatus.ANSWERED, "answered_at": timezone.now()})
        ledger().event_append(session_id=question.session_id, event_type="question_answered",
                              agent=agent or answered_by,
                              message=f"{question.key} answered by {answered_by or 'an unnamed caller'}"
                                      + (" again (replaced)" if replaced else ""),
                              data={"question": question.id, "key": question.key,
                                    **{name: getattr(question, name) for name in ANSWER_RECORD_FIELDS},
                                    **({"replaced": replaced} if replaced else {})})
    return question


def feedback_batch_create(*, data: dict[str, Any]) -> FeedbackBatch:
    """A feedback batch with its items and attachments, one transaction."""
    data = dict(data)
    items: list[dict[str, Any]] = data.pop("items", [])
    attachments: list[dict[str, Any]] = data.pop("attachments", [])
    with transaction.atomic():
        data["session"] = data["iteration"].session
        batch = instance_create(model=FeedbackBatch, data=data)
        FeedbackItem.objects.bulk_create(FeedbackItem(batch=batch, **item) for item in items)
        for attachment in attachments:
            feedback_attachment_create(data={**attachment, "batch": batch})
    return batch


def feedback_batch_update(*, batch: FeedbackBatch, data: dict[str, Any]) -> FeedbackBatch:
    """A batch follows its iteration: moved to another iteration, it belongs to that one's session."""
    data = dict(data)
    with transaction.atomic():
        if "iteration" in data:
            data["session"] = data["iteration"].session
        return instance_update(instance=batch, data=data)


def feedback_attachment_create(*, data: dict[str, Any]) -> FeedbackAttachment:
    with transaction.atomic():
        return instance_create(model=FeedbackAttachment, data={**data, "size": len(data.get("content", b""))})


def feedback_attachment_update(*, attachment: FeedbackAttachment, data: dict[str, Any]) -> FeedbackAttachment:
    if "content" in data:
        data = {**data, "size": len(data["content"])}
    with transaction.atomic():
        return instance_update(instance=attachment, data=data)


def feedback_item_resolve(*, item: FeedbackItem) -> FeedbackItem:
    with transaction.atomic():
        if not item.is_resolved:
            item = instance_update(instance=item, data={"is_resolved": True, "resolved_at": timezone.now()})
    return item


def signal_create(*, data: dict[str, Any], actor: str = "") -> Signal:
    """A steering message to the orchestrator (pause, resume, stop, steer, info), recorded in the ledger as
    sent (`signal_sent`) and, once polled, as processed (`signal_processed`). `sent_by` is who acts (`acting`:
    the request's token, or the `actor` a door names, the admin's person). One recorded as already processed
    (Ralph V2 writes IsProcessed) is stamped processed now unless it says when."""
    sent_by = acting(actor)
    data = {**data, "sent_by": sent_by}
    if data.get("is_processed") and not data.get("processed_at"):
        data["processed_at"] = timezone.now()
    with transaction.atomic():
        session_open_check(session_id=data["session"].pk, verb="send a signal")
        signal = instance_create(model=Signal, data=data)
        ledger().event_append(session_id=signal.session_id, event_type="signal_sent", agent=sent_by,
                              message=f"{signal.type} signal sent" + (f" by {sent_by}" if sent_by else "")
                                      + (f": {signal.message[:200]}" if signal.message else ""),
                              data={"signal": signal.id, "type": signal.type, "sent_by": sent_by})
    return signal


def signal_update(*, signal: Signal, data: dict[str, Any]) -> Signal:
    """A plain update: a signal follows SIGNAL_LIFECYCLE (409 `invalid_transition`: a processed or expired one
    stays so); one marked processed here is stamped now unless it says when."""
    with transaction.atomic():
        signal = lock_rows(Signal.objects.filter(pk=signal.pk)).get()
        if "is_processed" in data:
            expired = signal.expired_at is not None
            SIGNAL_LIFECYCLE.check(current=signal_stage(is_processed=signal.is_processed, expired=expired),
                                   new=signal_stage(is_processed=data["is_processed"], expired=expired),
                                   subject=f"Signal {signal.pk}")
            if data["is_processed"] and not signal.is_processed and not data.get("processed_at"):
                data = {**data, "processed_at": timezone.now()}
        return instance_update(instance=signal, data=data)


def signals_expire(*, session_id: str, reason: str, agent: str) -> None:
    """A session ending with signals not yet polled (a Stop or Pause pressed while the run was ending):
    each expires with the reason (SIGNAL_LIFECYCLE: unprocessed → expired) and a `signal_expired` event,
    so no operator's signal is left unanswered without that being recorded and shown."""
    now = timezone.now()
    for signal in lock_rows(Signal.objects.filter(session_id=session_id, is_processed=False, expired_at__isnull=True)
                            .order_by("sent_at", "id")):
        SIGNAL_LIFECYCLE.check(current=signal_stage(is_processed=signal.is_processed, expired=False),
                               new=SignalStage.EXPIRED, subject=f"Signal {signal.pk}")
        instance_update(instance=signal, data={"expired_at": now, "expired_reason": reason[:200]})
        ledger().event_append(session_id=session_id, event_type="signal_expired", agent=agent,
                              message=f"{signal.type} signal from {signal.sent_by or 'an unnamed sender'} expired "
                                      f"unpolled: {reason}",
                              data={"signal": signal.id, "type": signal.type, "sent_by": signal.sent_by,
                                    "reason": reason})


def signals_recorded_after_the_end_expire(*, signal_ids: list[str]) -> int:
    """Of these signals, those recorded unpolled in a session that had already ended (an import of a tool's
    history) expire as a session's end expires its own: at its `ended_at`, its status the reason (no event:
    the end was not recorded here). Returns how many."""
    ended = Session.objects.filter(pk=OuterRef("session_id"))
    return (Signal.objects.filter(pk__in=signal_ids, is_processed=False, expired_at__isnull=True,
                                  session__status__in=FINISHED_SESSION_STATUSES, session__ended_at__isnull=False)
            .update(expired_at=Subquery(ended.values("ended_at")[:1]),
                    expired_reason=Concat(Value("session "), Subquery(ended.values("status")[:1])),
                    updated_at=timezone.now()))


def signal_poll(*, session: Session, agent: str = "") -> Signal | None:
    """PollSignal: the oldest unprocessed signal, marked processed in the same transaction.

    Allowed on a finished session too (unlike claiming a task), though there is nothing left to take:
    the signals still unprocessed when it ended expired with it (signals_expire), and a finished
    session takes no new one. Polling changes no task and not the session's status.
    """
    with transaction.atomic():
        signal = lock_rows(Signal.objects.filter(session=session, is_processed=False, expired_at__isnull=True)
                           .order_by("sent_at", "id"), skip_locked=True).first()
        if signal is None:
            return None
        return signal_take(signal=signal, agent=agent)


def signal_take(*, signal: Signal, agent: str = "") -> Signal:
    """Mark an unprocessed signal processed by `agent`, with its `signal_processed` event (in the caller's
    transaction, the signal's row locked by it): poll-signal takes the oldest, the Claude Code loop the Steer it
    uses, the Stop it obeys and the Pause that ended."""
    signal = instance_update(instance=signal, data={"is_processed": True, "processed_at": timezone.now(),
                                                    "processed_by": agent})
    # The poll is the loop's activity (a signal's own writes are not: see Signal).
    ledger().event_append(session_id=signal.session_id, event_type="signal_processed", agent=agent,
                          message=f"{signal.type} signal processed", data={"signal": signal.id, "type": signal.type})
    return signal
