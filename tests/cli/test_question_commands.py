"""Questions from a shell loop: `ralph question ask|list|answer`, through the same API routes as MCP and REST."""

import pytest

from ralphsite.core.models import SeedRow, TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Question, Session
from tests.cli.conftest import RalphRunner

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_question_is_asked_listed_and_answered_by_key_with_the_token_as_the_answerer(ralph: RalphRunner,
                                                                                        user) -> None:
    session = Session.objects.create(key="sprint-3", command="c", command_type="plan")
    asked = ralph("question", "ask", "Q-TECH-001", "Integers or decimals for money?", RALPH_SESSION="sprint-3")
    assert (asked.status, asked.stdout) == (0, "Q-TECH-001\n")
    listed = ralph("question", "list", "--status", "unanswered", RALPH_SESSION="sprint-3")
    assert listed.stdout == "Q-TECH-001 unanswered: Integers or decimals for money?\n"

    planner = api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk, agent="planner")
    answered = ralph("question", "answer", "Q-TECH-001", "Decimals, in cents", "--source", "the seed",
                     RALPH_SESSION="sprint-3", RALPH_TOKEN=planner.secret)
    assert (answered.status, answered.stdout) == (0, "Q-TECH-001 answered\n")
    question = Question.objects.get(session=session, key="Q-TECH-001")
    assert (question.answer, question.answer_source, question.answered_by) == ("Decimals, in cents", "the seed",
                                                                               "planner")
    # A second answer is refused unless it replaces the first, as on every other door.
    again = ralph("question", "answer", "Q-TECH-001", "Integers", RALPH_SESSION="sprint-3")
    assert again.status == 2 and "already_answered" in again.stderr
    assert ralph("question", "answer", "Q-TECH-001", "Integers", "--replace", RALPH_SESSION="sprint-3").status == 0
    assert Question.objects.get(pk=question.pk).answer == "Integers"


def test_listing_no_question_is_exit_3_and_an_unknown_key_is_refused(ralph: RalphRunner) -> None:
    Session.objects.create(key="empty", command="c", command_type="plan")
    none = ralph("question", "list", RALPH_SESSION="empty")
    assert (none.status, none.stdout, none.stderr) == (3, "", "ralph: no_questions: no question\n")
    unknown = ralph("question", "answer", "Q-NOPE", "x", RALPH_SESSION="empty")
    assert unknown.status == 2 and "not_found" in unknown.stderr


def test_a_session_is_named_by_the_servers_rule_never_the_first_of_several(ralph: RalphRunner) -> None:
    """Found by the attacker's pass: the CLI named a session by `?key=` and took the first row, so a global token
    over two projects with a session `run-42` each worked in either. Now the server names it, as on every door:
    409 `ambiguous_key`, and a seed tool's id (a Ralph V2 GUID) names its session."""
    widgets = Session.objects.create(key="run-42", project_path="/srv/widgets")
    Session.objects.create(key="run-42", project_path="/srv/gadgets")
    ambiguous = ralph("question", "ask", "Q-1", "Which one?", RALPH_SESSION="run-42")
    assert ambiguous.status == 2 and "ambiguous_key" in ambiguous.stderr
    assert not Question.objects.exists()
    guid = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    SeedRow.objects.create(kind="ralph", source_table="Sessions", source_key=guid,
                           object_model="sessions_app.session", object_id=widgets.pk)
    assert ralph("question", "ask", "Q-1", "This one?", RALPH_SESSION=guid).status == 0
    assert Question.objects.get().session_id == widgets.pk
    unknown = ralph("question", "list", RALPH_SESSION="run-404")
    assert (unknown.status, unknown.stderr) == (2, "ralph: not_found: No session with key 'run-404'.\n")
