"""The event type rule in the database (issue #26): an event written past the services (the ORM, as an operator's
shell or a bug would) is refused unless its type is known, an `x-` custom one, or the ledger's own `ledger_purged`
without a session: PostgreSQL's CHECK, SQLite's BEFORE INSERT trigger (`frozen.event_types_v1`). The migration
reverses and re-applies with the append-only triggers in place and the events stored before it kept."""

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction

from ledger_app.append_only import TRIGGER_NAMES, installed_triggers
from ledger_app.chain_verify import chain_verify
from ledger_app.migrations.frozen.event_types_v1 import NAME
from ledger_app.models import LedgerEvent
from tests.ledger_app.factories import make_event, make_session

ACCEPTED = ["agent_completed", "session_finished", "x-ok", "x-my.tool_event", "x-a-b_c", "x-" + "a" * 61]
REFUSED = ["bogus", "AgentCompleted", "x-", "x-Upper", "x-.dot", "x-a b", "x-a!", "x-" + "a" * 62, "x-ü", ""]


def _refused(**fields: str | None) -> bool:
    try:
        with transaction.atomic():
            LedgerEvent.objects.create(**fields)
    except IntegrityError as error:
        assert NAME in str(error), error
        return True
    return False


@pytest.mark.django_db
def test_the_database_refuses_an_event_type_the_rule_does_not_allow() -> None:
    session = make_session()
    assert [kind for kind in ACCEPTED if _refused(session=session, type=kind)] == []
    assert [kind for kind in REFUSED if not _refused(session=session, type=kind)] == []
    assert not _refused(session=None, type="ledger_purged")  # the ledger's own record, without a session
    assert _refused(session=session, type="ledger_purged")
    assert LedgerEvent.objects.count() == len(ACCEPTED) + 1


@pytest.mark.django_db(transaction=True)
def test_the_migration_reverses_and_reapplies_with_the_ledger_s_triggers_and_rows_kept() -> None:
    session = make_session()
    kept = make_event(session)
    call_command("migrate", "ledger_app", "0019", verbosity=0)
    before_rule = make_event(session, type="bogus-from-before")  # nothing stopped it then
    assert NAME not in installed_triggers(connection)

    call_command("migrate", "ledger_app", verbosity=0)
    assert TRIGGER_NAMES[connection.vendor] <= installed_triggers(connection)
    assert _refused(session=session, type="bogus")
    assert set(LedgerEvent.objects.values_list("pk", flat=True)) == {kept.pk, before_rule.pk}  # history kept
    report = chain_verify()
    assert report.intact and report.events == 2, report.problem
