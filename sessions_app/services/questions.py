"""Questions, human feedback and steering signals: what passes between a loop and the people steering it."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from ralphsite.core.errors import Conflict, detail_time
from ralphsite.core.services import instance_create, instance_update
from sessions_app.ledger import ledger
from sessions_app.models import (
    QUESTION_STATUS_LIFECYCLE,
    SIGNAL_LIFECYCLE,
    FeedbackAttachment,
    FeedbackBatch,
    FeedbackItem,
    Question,
    QuestionStatus,
    Session,
    Signal,
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


def question_update(*, question: Question, data: dict[str, Any]) -> Question:
    """A plain update: the status follows QUESTION_STATUS_LIFECYCLE (409 `invalid_transition`); answering is
    answer/'s (question_answer)."""
    with transaction.atomic():
        question = lock_rows(Question.objects.filter(pk=question.pk)).get()
        session_open_check(session_id=question.session_id, verb="update a question")
        if "status" in data:
            QUESTION_STATUS_LIFECYCLE.check(current=question.status, new=data["status"],
                                            subject=f"Question {question.key}")
        return instance_update(instance=question, data=data)


ANSWER_FIELDS = ("answer", "answer_source", "answer_confidence", "answer_implication")


def question_answer(*, question: Question, data: dict[str, Any], agent: str = "", replace: bool = False) -> Question:
    """AnswerQuestion: the answer, its source, confidence and implication; status answered. A question is
    answered once: a second answer is a 409 `already_answered` unless it says `replace`, and then the
    replaced answer is kept in the `question_answered` event."""
    with transaction.atomic():
        question = lock_rows(Question.objects.filter(pk=question.pk)).get()
        session_open_check(session_id=question.session_id, verb="answer a question")
        replaced = None
        if question.status == QuestionStatus.ANSWERED:
            if not replace:
                raise Conflict(f"{question.key} is already answered; send `replace: true` to replace the answer.",
                               code="already_answered",
                               details={"question": question.key, "answered_at": detail_time(question.answered_at)})
            replaced: dict[str, Any] = {name: getattr(question, name) for name in ANSWER_FIELDS}
            replaced["answered_at"] = detail_time(question.answered_at)
        QUESTION_STATUS_LIFECYCLE.check(current=question.status, new=QuestionStatus.ANSWERED,
                                        subject=f"Question {question.key}")
        question = instance_update(instance=question, data={
            **data, "status": QuestionStatus.ANSWERED, "answered_at": timezone.now()})
        ledger().event_append(session_id=question.session_id, event_type="question_answered", agent=agent,
                              message=f"{question.key} answered" + (" again (replaced)" if replaced else ""),
                              data={"question": question.id, "key": question.key,
                                    **{name: getattr(question, name) for name in ANSWER_FIELDS},
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


def signal_create(*, data: dict[str, Any], agent: str = "") -> Signal:
    """A steering message to the orchestrator (pause, stop, steer, info), recorded in the ledger as
    sent (`signal_sent`) and, once polled, as processed (`signal_processed`). One recorded as already
    processed (Ralph V2 writes IsProcessed) is stamped processed now unless it says when."""
    if data.get("is_processed") and not data.get("processed_at"):
        data = {**data, "processed_at": timezone.now()}
    with transaction.atomic():
        session_open_check(session_id=data["session"].pk, verb="send a signal")
        signal = instance_create(model=Signal, data=data)
        ledger().event_append(session_id=signal.session_id, event_type="signal_sent", agent=agent,
                              message=f"{signal.type} signal sent"
                                      + (f": {signal.message[:200]}" if signal.message else ""),
                              data={"signal": signal.id, "type": signal.type})
    return signal


def signal_update(*, signal: Signal, data: dict[str, Any]) -> Signal:
    """A plain update: a processed signal stays processed (SIGNAL_LIFECYCLE: 409 `invalid_transition`);
    one marked processed here is stamped now unless it says when."""
    with transaction.atomic():
        signal = lock_rows(Signal.objects.filter(pk=signal.pk)).get()
        if "is_processed" in data:
            SIGNAL_LIFECYCLE.check(current=signal_stage(signal.is_processed), new=signal_stage(data["is_processed"]),
                                   subject=f"Signal {signal.pk}")
            if data["is_processed"] and not signal.is_processed and not data.get("processed_at"):
                data = {**data, "processed_at": timezone.now()}
        return instance_update(instance=signal, data=data)


def signal_poll(*, session: Session, agent: str = "") -> Signal | None:
    """PollSignal: the oldest unprocessed signal, marked processed in the same transaction.

    Allowed on a finished session too (unlike claiming a task): signals are a queue of messages to
    the orchestrator, not work. A `stop` or `info` sent while the run was ending is still delivered
    (to the orchestrator shutting down, or to the run that resumes the session) instead of being
    lost or left to surprise a later poller; polling changes no task and not the session's status.
    """
    with transaction.atomic():
        signal = lock_rows(Signal.objects.filter(session=session, is_processed=False).order_by("sent_at", "id"),
                           skip_locked=True).first()
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
