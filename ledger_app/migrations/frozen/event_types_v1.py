"""The ledger's event type rule in the database (v1, frozen; issue #26 "a database CHECK where the backend can
state it"): a type seed 001 or 003 lists or the ledger's audit writes, a custom one in the `x-` namespace, or
`ledger_purged` without a session (the retention record the ledger writes about itself). The domain holds the
same rule (`ledger_app.models.events.event_rule_problems`); a later list is a new version and a migration.

* PostgreSQL: CHECK constraint `ledgerevent_type_known`, added NOT VALID: every new row is checked, the rows
  already there are not scanned (the ledger is append-only and hash-chained: its history is not rewritten).
* SQLite: a BEFORE INSERT trigger of that name. A CHECK would rebuild the table, copying every event of a big
  ledger and refusing the copy at the first event stored before the rule (history the chain hashes, which can
  be neither dropped nor rewritten without re-linking the chain); the ledger already refuses UPDATE, so an
  INSERT trigger states the same rule for every row that can still be written. A later migration that makes
  SQLite rebuild the events table must create it again (`create`).
"""

from typing import Any

TABLE = "ledger_app_ledgerevent"
NAME = "ledgerevent_type_known"
KNOWN_TYPES = (
    'run_started', 'run_finished', 'task_started', 'task_finished', 'phase_entered', 'backend_call_started',
    'backend_call_finished', 'validator_started', 'validator_finished', 'budget_degrade_applied',
    'checkpoint_created', 'issue_recorded', 'session_started', 'session_ended', 'phase_changed', 'agent_started',
    'agent_completed', 'agent_failed', 'model_escalated', 'model_deescalated', 'gate_passed', 'gate_failed',
    'bug_council_activated', 'bug_council_completed', 'interview_started', 'interview_question',
    'interview_completed', 'research_started', 'research_finding', 'research_completed', 'task_completed',
    'task_failed', 'error_occurred', 'warning_issued', 'abandonment_detected', 'abandonment_prevented',
    'session_state_changed', 'task_status_changed', 'task_claimed', 'task_released', 'lease_expired', 'signal_sent',
    'signal_processed', 'signal_expired', 'question_answered', 'session_resumed', 'session_finished',
)
LEDGER_PURGED = "ledger_purged"
_LISTED = ", ".join(f"'{name}'" for name in KNOWN_TYPES)
# ^x-[a-z0-9][a-z0-9_.-]{0,60}$ (ledger_app.models.events.CUSTOM_EVENT_TYPE): SQLite's GLOB says it without a
# function of the application's, so the file stays writable by any SQLite client.
_CUSTOM = {
    "postgresql": "{type} ~ '^x-[a-z0-9][a-z0-9_.-]{{0,60}}$'",
    "sqlite": "({type} GLOB 'x-[a-z0-9]*' AND {type} NOT GLOB 'x-*[^a-z0-9_.-]*' AND length({type}) <= 63)",
}


def rule(vendor: str, row: str = "") -> str:
    """The condition a row's type meets (`row`: `NEW.` in a trigger)."""
    type_, session = f"{row}type", f"{row}session_id"
    return (f"({type_} IN ({_LISTED}) OR {_CUSTOM[vendor].format(type=type_)} "
            f"OR ({type_} = '{LEDGER_PURGED}' AND {session} IS NULL))")


def _statements(vendor: str, *, create: bool) -> list[str]:
    if vendor == "postgresql":
        if not create:
            return [f"ALTER TABLE {TABLE} DROP CONSTRAINT IF EXISTS {NAME}"]
        # Pending deferred trigger events (an earlier step of this migrate) would make ALTER TABLE fail.
        return ["SET CONSTRAINTS ALL IMMEDIATE",
                f"ALTER TABLE {TABLE} ADD CONSTRAINT {NAME} CHECK {rule(vendor)} NOT VALID"]
    if vendor == "sqlite":
        if not create:
            return [f"DROP TRIGGER IF EXISTS {NAME}"]
        return [f"DROP TRIGGER IF EXISTS {NAME}",
                f"""CREATE TRIGGER {NAME} BEFORE INSERT ON {TABLE} WHEN NOT {rule(vendor, "NEW.")}
                    BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: {NAME} (a known or x- event type)'); END"""]
    raise NotImplementedError(f"the event type rule is not written for {vendor}")


def create(apps: Any, schema_editor: Any) -> None:
    for statement in _statements(schema_editor.connection.vendor, create=True):
        schema_editor.execute(statement, params=None)


def drop(apps: Any, schema_editor: Any) -> None:
    for statement in _statements(schema_editor.connection.vendor, create=False):
        schema_editor.execute(statement, params=None)
