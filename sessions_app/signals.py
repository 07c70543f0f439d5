"""Domain signals sessions_app sends inside its transactions.

Other apps listen (the ledger records them as audit events); sessions_app imports no other app.

`orchestration_event` keyword arguments:
    session_id: str             the session the change belongs to
    event_type: str             e.g. "session_state_changed", "task_status_changed", "task_claimed",
                                "task_released", "signal_sent", "signal_processed", "question_answered",
                                "session_resumed", "session_finished"
    task_key: str               "" when the change is not about a task
    agent: str                  who made the change, "" when unknown
    message: str                one human line
    data: dict                  the change itself (old/new values, ids)
"""

from django.dispatch import Signal

orchestration_event = Signal()

# Sent inside the transaction when an attempt or agent invocation reports a provider call, changes
# it or goes. kwargs: source ("attempt" or "invocation"), source_id, item (the call: session_id,
# request_id, model, agent, task_key, operation, input_tokens, output_tokens, cost_usd (None: not
# sent, to be priced), recorded_at; None when the row is deleted). The ledger records it in its token
# usage, counted once per request id, and answers the call's cost (priced when it was not sent).
usage_reported = Signal()

# Sent by the resume service to gather what other apps know about where a session stopped.
# kwargs: session_id. Each receiver returns a dict merged into the resume point (the ledger
# answers {"last_checkpoint": {...} or None}); sessions_app itself knows nothing of checkpoints.
resume_requested = Signal()

# Sent by the delete service inside its transaction, before the session row goes. kwargs:
# session_ids, reason. The ledger removes the sessions' events through its audited retention path
# (a retention record in the chain); the database's foreign key refuses a delete nobody purged for.
sessions_deleting = Signal()
