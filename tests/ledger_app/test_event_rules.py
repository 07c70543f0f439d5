"""An event's own rules (its type known or `x-` custom, its counts and duration not negative) live in the domain:
the append services refuse what breaks them with REST's code and messages, whoever calls them."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent, event_type_message
from ledger_app.services import event_append, event_append_one, events_append
from ralphsite.core.errors import InvalidInput
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db

BROKEN = [
    {"type": "made_up"},
    {"type": ""},
    *({"type": "x-note", name: -1} for name in ("tokens_in", "tokens_out", "tokens_total", "duration_ms")),
]


@pytest.mark.parametrize("body", BROKEN, ids=lambda body: "-".join(f"{k}={v}" for k, v in body.items()))
def test_the_append_services_refuse_what_rest_refuses_in_its_words(api: APIClient, body: dict[str, Any]) -> None:
    session = make_session(key="rules")
    reply = api.post("/api/v1/events/", {"session": session.pk, **body}, format="json")
    assert reply.status_code == 400, reply.content[:300]
    rest = reply.json()["code"], reply.json()["details"]
    [result] = events_append(items=[{"session_id": session.pk, **body}])
    assert (result.status, result.code, result.errors) == ("invalid", *rest)
    for append in (lambda: event_append_one(item={"session_id": session.pk, **body}),
                   lambda: event_append(session_id=session.pk, **body)):
        with pytest.raises(InvalidInput) as refused:
            append()
        assert (refused.value.code, refused.value.details) == rest
    assert not LedgerEvent.objects.filter(session=session).exists()


def test_the_services_take_a_type_alias_in_its_canonical_spelling() -> None:
    session = make_session(key="alias")
    event = event_append(session_id=session.pk, type="AgentCompleted")
    assert LedgerEvent.objects.get(pk=event.pk).type == "agent_completed"


def test_the_services_refuse_a_custom_type_with_a_trailing_newline_as_the_database_does() -> None:
    """REST trims it; a door that does not (MCP, the import) reaches the rule, which must say no before the
    database's own rule (ledger 0020) would answer with an IntegrityError."""
    session = make_session(key="newline")
    with pytest.raises(InvalidInput) as refused:
        event_append(session_id=session.pk, type="x-note\n")
    assert refused.value.details == {"type": [event_type_message("x-note\n")]}
    assert not LedgerEvent.objects.filter(session=session).exists()
