"""POST /api/v1/claude-code/hooks/ and /loops/: Claude Code's hooks recorded and its Ralph loop decided."""

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from conversations_app.models import Message, Observation, Run
from ledger_app.models import TokenUsage
from ralphsite.agents.claude_code.context import session_start_context
from ralphsite.core.models import TokenPermission, TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Iteration, LoopRun, Question, Session, Signal
from tests.api_mixins import assert_error_shape
from tests.claude_code_transcript import (
    PROJECT,
    assistant_entries,
    payload,
    text,
    tool_result_entry,
    tool_use,
    user_entry,
)

pytestmark = pytest.mark.django_db

CLAUDE = "5f0c8a8e-3c0e-4d55-9d1e-0c1a2b3c4d5e"
HOOKS, LOOPS = "/api/v1/claude-code/hooks/", "/api/v1/claude-code/loops/"


def hook(api: APIClient, event: str, *, entries: list[dict[str, Any]] = (), offset: int = 0,
         next_offset: int | None = None, session_id: str = CLAUDE, status: int = 200, **fields: Any) -> dict[str, Any]:
    body = {"event": event, "payload": payload(event, session_id, **fields),
            "transcript": {"offset": offset, "next_offset": offset + 100 * len(entries) if next_offset is None
                           else next_offset, "entries": list(entries)}}
    response = api.post(HOOKS, body, format="json")
    assert response.status_code == status, response.content
    return response.json()


def start_loop(api: APIClient, **fields: Any) -> dict[str, Any]:
    body = {"project_path": PROJECT, "prompt": "Fix the next failing test.", "max_iterations": 5,
            "completion_promise": "ALL GREEN", "claude_session_id": CLAUDE, **fields}
    response = api.post(LOOPS, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def a_turn() -> list[dict[str, Any]]:
    return [user_entry("Fix it"), *assistant_entries("msg_turn", text("Working on it."))]


def test_it_records_the_session_its_conversation_and_each_calls_usage_once(api: APIClient) -> None:
    started = hook(api, "SessionStart", source="startup")
    session = Session.objects.get(key=CLAUDE)
    assert (started["session"], session.project_path, session.command) == (session.pk, PROJECT, "claude-code")
    assert started["loop"] is None
    entries = [user_entry("List the files"),
               *assistant_entries("msg_1", text("Let me look."), tool_use("toolu_1", "Bash", command="ls")),
               tool_result_entry("toolu_1", "README.md\nsetup.py"),
               *assistant_entries("msg_2", text("Two files."), usage={"input_tokens": 7, "output_tokens": 3})]
    for _ in range(2):  # the same request twice stores nothing twice
        hook(api, "Stop", entries=entries, stop_hook_active=False, last_assistant_message="Two files.")
    messages = list(Message.objects.filter(run__chat__session=session).order_by("sequence_number"))
    assert [(m.role, m.content) for m in messages] == [
        ("user", "List the files"), ("assistant", "Let me look."), ("assistant", ""), ("assistant", "Two files.")]
    assert messages[2].tool_calls == [{"id": "toolu_1", "name": "Bash", "arguments": {"command": "ls"},
                                       "status": "completed", "result": "README.md\nsetup.py"}]
    usage = {row.request_id: row for row in TokenUsage.objects.filter(session=session)}
    assert set(usage) == {"msg_1", "msg_2"}
    # Their own source: DevTeam's token_usage, which its views read, never held them (issue #26).
    assert {row.source for row in usage.values()} == {"run"}  # the conversation run whose calls they are
    first = usage["msg_1"]
    assert (first.input_tokens, first.output_tokens, first.cached_read_tokens, first.cached_write_tokens,
            first.model, first.iteration) == (100, 20, 5000, 1000, "claude-sonnet-4-5-20250929", 1)
    # The default price list: claude-sonnet-4-5 at 3 / 15 / 0.30 / 3.75 USD per million tokens.
    assert first.cost_usd == Decimal("0.005850") and usage["msg_2"].cost_usd == Decimal("0.000066")
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output) == (107, 23)
    assert session.total_cost_usd == Decimal("0.005916")
    # Each call is booked against the session's run: its answer carries the sums, as its conversation page shows.
    run = Run.objects.get(chat__session=session)
    assert {(row.source, row.source_id) for row in usage.values()} == {("run", run.pk)}
    assert api.get(f"/api/v1/runs/{run.pk}/").json()["usage"] == {
        "booked": True, "tokens": 130, "input_tokens": 107, "output_tokens": 23, "cost_usd": "0.005916", "calls": 2}


def test_it_joins_a_tool_result_sent_in_a_later_call_to_its_call(api: APIClient) -> None:
    hook(api, "PostToolUse", entries=assistant_entries("msg_1", tool_use("toolu_9", "Read", file_path="/a")))
    hook(api, "Stop", entries=[tool_result_entry("toolu_9", "no such file", is_error=True)], offset=100)
    [caller] = Message.objects.filter(role="assistant")
    assert caller.tool_calls[0] | {} == {"id": "toolu_9", "name": "Read", "arguments": {"file_path": "/a"},
                                         "status": "failed", "result": "no such file"}


def test_it_keeps_each_tool_use_as_a_searchable_observation_once(api: APIClient) -> None:
    uses = [("PostToolUse", "toolu_1", "Bash", {"command": "pytest -q"}, {"stdout": "3 passed"}),
            ("PostToolUse", "toolu_2", "Read", {"file_path": "/src/parser.py"}, {"content": "def parse(): ..."}),
            ("PostToolUseFailure", "toolu_3", "Bash", {"command": "make lint"}, None)]
    for _ in range(2):
        for event, tool_id, name, tool_input, response in uses:
            extra = {"tool_response": response} if response else {"error": "exit 2: ruff found 3 errors"}
            hook(api, event, tool_use_id=tool_id, tool_name=name, tool_input=tool_input, **extra)
    observed = {o.tool_name + ":" + o.type: o.content for o in Observation.objects.all()}
    assert observed == {"Bash:bash": "Bash: pytest -q\n→ 3 passed",
                        "Read:tool_use": "Read: /src/parser.py\n→ def parse(): ...",
                        "Bash:error": "Bash: make lint\n→ exit 2: ruff found 3 errors"}
    found = api.get("/api/v1/search/", {"q": "ruff", "kind": "observation"}).json()
    assert [hit["subtype"] for hit in found["results"]] == ["error"]


def test_it_ignores_entries_it_does_not_know(api: APIClient) -> None:
    junk = [{"type": "queue-operation", "operation": "enqueue", "content": "Go"}, {"type": "last-prompt"},
            {"type": "attachment", "uuid": "a1", "attachment": {"type": "hook_blocking_error"}},
            {"type": "summary", "summary": "x"}, {"type": "file-history-snapshot"}, {"type": "assistant"},
            {"type": "user", "uuid": "u1", "message": "not an object"}, {"no": "type"},
            {"type": "assistant", "uuid": "u2", "message": {"id": 5, "content": [{"type": "thinking"}], "usage": "x"}}]
    junk += assistant_entries("0b7a1d2e-synthetic", text("No response requested."), model="<synthetic>",
                              usage={"input_tokens": 0, "output_tokens": 0})
    assert hook(api, "PreCompact", entries=junk, trigger="auto")["output"] == {}
    assert not Message.objects.exists() and not TokenUsage.objects.exists()


def test_it_records_the_stop_hook_feedback_as_the_next_user_message(api: APIClient) -> None:
    feedback = {**user_entry("Stop hook feedback:\nFix the next failing test."), "isMeta": True}
    hook(api, "Stop", entries=[feedback])
    assert list(Message.objects.values_list("role", "content")) == [("user", feedback["message"]["content"])]


def test_it_keeps_the_largest_usage_of_an_api_message_written_as_several_entries(api: APIClient) -> None:
    early = assistant_entries("msg_s", text("a"), usage={"input_tokens": 9, "output_tokens": 1})
    final = assistant_entries("msg_s", tool_use("toolu_s", "Bash", command="ls"),
                              usage={"input_tokens": 9, "output_tokens": 40})
    hook(api, "Stop", entries=[*early, *final])
    assert TokenUsage.objects.values_list("input_tokens", "output_tokens").get() == (9, 40)


def test_it_prices_a_model_it_has_no_price_for_at_zero_and_keeps_its_tokens(api: APIClient) -> None:
    hook(api, "Stop", entries=assistant_entries("msg_x", text("hi"), model="someone-elses-model"))
    row = TokenUsage.objects.get()
    assert (row.input_tokens, row.cost_usd) == (100, Decimal(0))


def test_a_session_that_ended_runs_again_when_claude_code_resumes_it(api: APIClient) -> None:
    hook(api, "SessionStart", source="startup")
    hook(api, "SessionEnd", reason="other")
    session = Session.objects.get(key=CLAUDE)
    assert (session.status, session.exit_reason) == ("stopped", "Claude Code session ended (other)")
    hook(api, "SessionStart", source="resume", cwd=f"{PROJECT}/src")  # a subdirectory is the same project
    session.refresh_from_db()
    assert session.status == "running" and session.project_path == PROJECT


def test_a_completed_session_stays_completed_and_still_records(api: APIClient) -> None:
    start_loop(api)
    hook(api, "Stop", entries=a_turn(), last_assistant_message="<promise>ALL GREEN</promise>")
    hook(api, "UserPromptSubmit", prompt="one more thing", entries=[user_entry("one more thing")], offset=200)
    assert Session.objects.get(key=CLAUDE).status == "completed"
    assert Message.objects.filter(content="one more thing").exists()


# -- the loop -------------------------------------------------------------------------------------

def stop(api: APIClient, offset: int, message: str = "Working on it.") -> dict[str, Any]:
    return hook(api, "Stop", entries=a_turn(), offset=offset, next_offset=offset + 50, stop_hook_active=True,
                last_assistant_message=message)


def test_a_loop_continues_with_its_prompt_then_the_steer_once_then_completes_on_its_promise(api: APIClient) -> None:
    hook(api, "SessionStart", source="startup")
    started = start_loop(api)
    assert (started["state"], started["iteration"], started["claude_session_id"]) == ("running", 0, CLAUDE)
    first = stop(api, 0)
    assert first["output"] == {"decision": "block", "reason": "Fix the next failing test."}
    assert (first["loop"]["state"], first["loop"]["iteration"]) == ("running", 1)
    session = Session.objects.get(key=CLAUDE)
    Signal.objects.create(session=session, type="steer", message="Look at the parser first.")
    assert stop(api, 50)["output"] == {"decision": "block", "reason": "Look at the parser first."}
    assert Signal.objects.get().is_processed
    assert stop(api, 100)["output"]["reason"] == "Fix the next failing test."  # the steer was used once
    done = stop(api, 150, "All tests pass. <promise>ALL GREEN</promise>")
    assert done["output"] == {} and (done["loop"]["state"], done["loop"]["iteration"]) == ("completed", 4)
    session.refresh_from_db()
    assert (session.status, session.exit_reason) == ("completed", "completion promise met")
    assert session.current_iteration == 4
    iterations = list(Iteration.objects.filter(session=session).order_by("number"))
    assert [i.completed_at is not None for i in iterations] == [True] * 4
    assert iterations[-1].review_content.endswith("<promise>ALL GREEN</promise>")
    assert Observation.objects.filter(type="success", session=session).count() == 1


def test_the_same_stop_twice_decides_once(api: APIClient) -> None:
    start_loop(api)
    assert stop(api, 0) == stop(api, 0)
    assert LoopRun.objects.get().iterations == 1
    assert Session.objects.get(key=CLAUDE).current_iteration == 2


def test_each_turns_usage_is_in_its_iteration(api: APIClient) -> None:
    start_loop(api)
    hook(api, "Stop", entries=assistant_entries("msg_a", text("one")), next_offset=10)
    hook(api, "Stop", entries=assistant_entries("msg_b", text("two")), offset=10, next_offset=20)
    assert dict(TokenUsage.objects.values_list("request_id", "iteration")) == {"msg_a": 1, "msg_b": 2}
    rows = api.get("/api/v1/token-usage/", {"iteration": 2}).json()["results"]
    assert [(row["request_id"], row["iteration"]) for row in rows] == [("msg_b", 2)]


def test_a_subagents_stop_decides_nothing_and_its_own_transcript_counts_its_usage_only(api: APIClient) -> None:
    start_loop(api)
    body = {"event": "SubagentStop", "payload": payload("SubagentStop", CLAUDE, agent_id="a1", stop_hook_active=False,
                                                        last_assistant_message="Counted."),
            "transcript": {"offset": 0, "next_offset": 40, "subagent": True,
                           "entries": [user_entry("Count."), *assistant_entries("msg_agent", text("Counted."))]}}
    for _ in range(2):  # sent again: counted once
        answer = api.post(HOOKS, body, format="json")
        assert answer.status_code == 200, answer.content
        assert (answer.json()["output"], answer.json()["loop"]["iteration"]) == ({}, 0)
    assert list(TokenUsage.objects.values_list("request_id", "iteration")) == [("msg_agent", 1)]
    assert not Message.objects.exists()  # the subagent's words are its own transcript's
    assert LoopRun.objects.get().iterations == 0


def test_a_loop_stops_at_its_iteration_limit(api: APIClient) -> None:
    start_loop(api, max_iterations=2)
    assert stop(api, 0)["output"]["decision"] == "block"
    last = stop(api, 50)
    assert last["output"] == {} and last["loop"]["state"] == "stopped"
    assert Session.objects.get(key=CLAUDE).exit_reason == "iteration limit reached"


def test_the_operators_stop_ends_the_loop_at_the_next_turn(api: APIClient) -> None:
    start_loop(api)
    Signal.objects.create(session=Session.objects.get(key=CLAUDE), type="stop", message="enough")
    answer = stop(api, 0)
    assert answer["output"] == {} and answer["loop"]["state"] == "stopped"
    assert Signal.objects.get().is_processed
    assert Session.objects.get(key=CLAUDE).status == "stopped"


def test_a_pause_holds_the_loop_until_a_resume_signal(api: APIClient) -> None:
    start_loop(api)
    session = Session.objects.get(key=CLAUDE)
    pause = Signal.objects.create(session=session, type="pause")
    for _ in range(2):
        held = stop(api, 0)
        assert held["output"] == {} and held["loop"]["state"] == "paused" and held["loop"]["wait_seconds"] == 5
    assert LoopRun.objects.get().iterations == 0
    Signal.objects.filter(pk=pause.pk).update(is_processed=True)  # polled: a pause holds until a resume
    assert stop(api, 0)["loop"]["state"] == "paused"
    assert api.post("/api/v1/signals/", {"session": session.pk, "type": "resume"}, format="json").status_code == 201
    assert stop(api, 0)["output"]["decision"] == "block"


def test_a_pause_past_the_loops_pause_timeout_goes_on(api: APIClient) -> None:
    start_loop(api, pause_timeout_seconds=60)
    Signal.objects.create(session=Session.objects.get(key=CLAUDE), type="pause",
                          sent_at=timezone.now() - timedelta(seconds=61))
    assert stop(api, 0)["output"]["decision"] == "block"
    resume = Signal.objects.get(type="resume")  # the loop lifted the pause itself, as a resume
    assert resume.sent_by == "claude-code (pause timeout)" and "60 s" in resume.message


def test_a_loop_started_without_a_session_joins_the_projects_next_claude_session(api: APIClient) -> None:
    started = start_loop(api, claude_session_id=None)
    assert started["claude_session_id"] is None
    hook(api, "SessionStart", source="startup")
    assert LoopRun.objects.get().session.key == CLAUDE
    assert stop(api, 0)["output"]["decision"] == "block"


def test_a_pending_loop_joins_a_session_that_already_exists(api: APIClient) -> None:
    hook(api, "SessionStart", source="startup")
    start_loop(api, claude_session_id="")
    assert stop(api, 0)["output"]["decision"] == "block"
    assert Session.objects.filter(project_path=PROJECT).count() == 1
    assert LoopRun.objects.get().session.key == CLAUDE


def test_a_pending_loop_is_not_taken_by_a_late_record_of_another_session(api: APIClient) -> None:
    start_loop(api, claude_session_id=None)
    hook(api, "SessionEnd", session_id="0d0e0f10-aaaa-4bbb-8ccc-000000000001", reason="other")
    assert LoopRun.objects.get().session.key == ""
    hook(api, "UserPromptSubmit", prompt="go")
    assert LoopRun.objects.get().session.key == CLAUDE


# -- SessionStart's context -------------------------------------------------------------------------

def test_session_start_gives_back_steers_questions_tasks_and_memory_within_its_budget(api: APIClient) -> None:
    hook(api, "SessionStart", source="startup")
    session = Session.objects.get(key=CLAUDE)
    Signal.objects.create(session=session, type="steer", message="Prefer small commits.")
    Question.objects.create(session=session, key="q1", category="technical", text="Which database?",
                            status="answered", answer="PostgreSQL")
    for index in range(40):
        Observation.objects.create(session=session, type="error", tool_name="Bash", content=f"failure {index} " * 60)
    context = hook(api, "SessionStart", source="resume")["output"]["hookSpecificOutput"]["additionalContext"]
    assert "Prefer small commits." in context and "Which database? → PostgreSQL" in context
    assert "failure" in context and len(context) <= 6000
    cut = session_start_context(session=session, budget=1000)
    assert len(cut) <= 1000 and cut.endswith("cut to fit the context budget]") and "Prefer small commits." in cut


# -- tokens and refusals ------------------------------------------------------------------------------

def _client(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


def test_a_project_token_records_its_projects_hooks_only(user) -> None:
    project = _client(api_token_create(user=user, scope=TokenScope.PROJECT, project_path=PROJECT).secret)
    hook(project, "SessionStart", cwd=f"{PROJECT}/src", source="startup")
    assert Session.objects.get(key=CLAUDE).project_path == PROJECT
    elsewhere = {"event": "Stop", "payload": payload("Stop", CLAUDE, cwd="/elsewhere")}
    assert_error_shape(project.post(HOOKS, elsewhere, format="json"), 403, "project_out_of_scope")
    # A session key is unique within its project only (docs/security.md, "No existence oracles"): another project's
    # hook of the same Claude Code session id records a session of its own, as for an id nobody holds; it neither
    # learns of the first project's session (a 403 `session_out_of_scope` told it) nor reaches it.
    other = _client(api_token_create(user=user, scope=TokenScope.PROJECT, project_path="/home/dev/other").secret)
    body = {"event": "Stop", "payload": payload("Stop", CLAUDE, cwd="/home/dev/other")}
    assert other.post(HOOKS, body, format="json").status_code == 200
    assert dict(Session.objects.filter(key=CLAUDE).values_list("project_path", "current_iteration")) == {
        PROJECT: 1, "/home/dev/other": 1}
    reader = _client(api_token_create(user=user, scope=TokenScope.PROJECT, project_path=PROJECT,
                                      permission=TokenPermission.READ).secret)
    assert_error_shape(reader.post(HOOKS, {"event": "Stop", "payload": payload("Stop", CLAUDE)}, format="json"), 403,
                       "permission_denied")


@pytest.mark.parametrize(("body", "code"), [
    ({"event": "Stop", "payload": {"cwd": PROJECT}}, "invalid_hook_payload"),
    ({"event": "Stop", "payload": payload("Stop", CLAUDE, cwd=7)}, "invalid_hook_payload"),
    ({"event": "Stop", "payload": payload("SessionStart", CLAUDE)}, "invalid_hook_payload"),
    ({"event": "Stop", "payload": payload("Stop", CLAUDE, cwd="relative/dir")}, "invalid_project_path"),
    ({"event": "Stop", "payload": payload("Stop", "01ARZ3NDEKTSV4RRFFQ69G5FAV")}, "invalid_session_id"),
    ({"event": "Stop", "payload": [1]}, "validation_error"),
    ({"event": "Stop!", "payload": payload("Stop", CLAUDE)}, "validation_error"),
    ({"event": "Stop", "payload": payload("Stop", CLAUDE), "transcript": {"offset": 9, "next_offset": 3}},
     "validation_error"),
    ({"event": "Stop", "payload": payload("Stop", CLAUDE), "extra": 1}, "validation_error"),
])
def test_it_refuses_a_bad_hook_with_a_400_and_its_code(api: APIClient, body: dict[str, Any], code: str) -> None:
    assert_error_shape(api.post(HOOKS, body, format="json"), 400, code)


@pytest.mark.parametrize(("fields", "code"), [
    ({"max_iterations": 0}, "validation_error"), ({"prompt": ""}, "validation_error"),
    ({"project_path": "here"}, "validation_error"), ({"claude_session_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
                                                          "invalid_session_id"),
])
def test_it_refuses_a_bad_loop_with_a_400_and_its_code(api: APIClient, fields: dict[str, Any], code: str) -> None:
    body = {"project_path": PROJECT, "prompt": "p", **fields}
    assert_error_shape(api.post(LOOPS, body, format="json"), 400, code)


def test_a_stop_hook_asks_the_same_queries_after_one_turn_or_many_and_a_held_one_asks_fewer(api: APIClient) -> None:
    """The Stop hook is the loop's heartbeat: its queries do not grow with the turns, signals and messages
    before it; a held turn (a Pause) reads the holding signal once and records nothing."""
    start_loop(api, max_iterations=20)
    counts = []
    for turn in range(6):
        with CaptureQueriesContext(connection) as queries:
            assert stop(api, 50 * turn)["output"]["decision"] == "block"
        counts.append(len(queries))
    # The first turn also opens the session's conversation; every later one asks the same 40 (the hook's whole
    # work: the token, the session, the transcript slice, the usage, the loop's decision and its record).
    assert counts[1:] == [40] * 5, counts
    Signal.objects.create(session=Session.objects.get(key=CLAUDE), type="pause")
    with CaptureQueriesContext(connection) as held:
        assert stop(api, 300)["loop"]["state"] == "paused"
    assert len(held) == 23, [query["sql"] for query in held.captured_queries]  # the holding pause read once
