"""Text from standard input: `-` for a text argument reads it whole (a shell loop pipes a log in; one command-line
argument holds at most 128 KiB on Linux), and what the API requires is the API's to refuse, not argparse's."""

import json

import pytest

from ledger_app.models import LedgerEvent
from sessions_app.models import Question, Session
from tests.cli.conftest import RalphRunner

pytestmark = pytest.mark.django_db(transaction=True)
LOG = "\n".join(f"line {n}: ok" for n in range(20_000))  # ~250,000 characters: past one argument's limit


def test_a_piped_log_or_question_is_stored_whole(ralph: RalphRunner) -> None:
    session = Session.objects.create(key="pipes", command="c", command_type="implement")
    assert len(LOG) > 128 * 1024
    appended = ralph("event", "x-log", "--message", "-", input=LOG, RALPH_SESSION="pipes")
    assert appended.status == 0, appended.stderr
    assert LedgerEvent.objects.get(session=session).message == LOG
    asked = ralph("question", "ask", "Q-LOG-001", "-", input="Why does line 3 fail?", RALPH_SESSION="pipes")
    assert asked.status == 0, asked.stderr
    assert Question.objects.get(session=session).text == "Why does line 3 fail?"
    answered = ralph("question", "answer", "Q-LOG-001", "-", input=LOG, RALPH_SESSION="pipes")
    assert answered.status == 0, answered.stderr
    assert Question.objects.get(session=session).answer == LOG


def test_an_event_without_a_type_is_refused_by_the_server_as_rest_refuses_it(ralph: RalphRunner) -> None:
    Session.objects.create(key="untyped", command="c", command_type="implement")
    refused = ralph("event", "--json", "--message", "no type", RALPH_SESSION="untyped")
    assert refused.status == 2, refused.stderr
    assert json.loads(refused.stderr) == {"code": "validation_error", "message": "type: This field is required.",
                                          "details": {"type": ["This field is required."]}}
    assert not LedgerEvent.objects.exists()
