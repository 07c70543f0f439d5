"""A Ralph loop in the real Claude Code CLI, headless against the scripted Messages API, in a project set up by
`ralph claude init`, recorded by the live server through `ralph hook`: steered mid-loop and completed by its
promise; and stopped by the operator. Each test is one CLI run (a few seconds)."""

from decimal import Decimal

import pytest

from tests.claude_code.cli import MODEL
from tests.claude_code.messages_stub import RecordedRequest, Usage
from tests.claude_code.project import ALLOWED_TOOLS, ClaudeProject, mcp_tool
from tests.claude_code.script import (
    API,
    Iteration,
    bash,
    cost_of,
    every,
    first_requests_of_iterations,
    price_list,
    promise,
    recorded,
    script_of,
    stop_feedback,
    tool,
    turn,
    usage_fields,
)

pytestmark = pytest.mark.smoke

PROMPT = "Make progress.txt say done, one step a turn."
STEER = "Say steered first."
PROMISE = "ALL DONE"


def _loop_start(project: ClaudeProject, *, max_iterations: int) -> None:
    """From the shell, before Claude Code starts, with the project token: the loop joins the next session."""
    project.ralph("loop", "start", PROMPT, "--max-iterations", str(max_iterations), "--completion-promise", PROMISE,
                  token=project.project_token())


def _signal(project: ClaudeProject, claude_session: str, kind: str, message: str = ""):
    """An operator's signal, sent through the API while the CLI waits for the stub's answer."""
    def send(request: RecordedRequest) -> None:
        operator = project.operator()
        try:
            operator.ok("POST", f"{API}/signals/", {"session": claude_session, "type": kind, "message": message},
                        expect=201)
        finally:
            operator.close()
    return send


def test_it_runs_a_steered_loop_to_its_completion_promise(project: ClaudeProject) -> None:
    claude_session = "3f1c8a52-7d4e-4b1a-9a57-0c2f6e1d9b01"
    _loop_start(project, max_iterations=5)
    iterations = [
        Iteration((turn("msg_loop_1a", Usage(1200, 80, 300, 0), "Checking the tree.",
                        bash("echo step-1 > progress.txt && cat progress.txt")),
                   turn("msg_loop_1b", Usage(1500, 40, 0, 1200), "",
                        tool(mcp_tool("set_state"), session=claude_session, key="phase", value="build")),
                   turn("msg_loop_1c", Usage(1600, 30, 0, 1500), "Step 1 done."))),
        # The operator steers while the second turn runs: the Stop hook that ends it takes the Steer.
        Iteration((turn("msg_loop_2a", Usage(1700, 60, 0, 1600), "", bash("cat progress.txt"),
                        before=_signal(project, claude_session, "steer", STEER)),
                   turn("msg_loop_2b", Usage(1800, 25, 0, 1700), "Step 2 done."))),
        Iteration((turn("msg_loop_3a", Usage(1900, 70, 0, 1800), "", bash("echo steered")),
                   turn("msg_loop_3b", Usage(2000, 20, 0, 1900), f"Done. {promise(PROMISE)}"))),
    ]
    project.stub.load(script_of(iterations))

    _, run = project.loop(PROMPT, session_id=claude_session)

    result = run.result()
    assert (run.status, result["is_error"], result["result"]) == (0, False, f"Done. {promise(PROMISE)}"), run.stderr
    assert project.stub.turns_used == 7
    requests = project.stub.turn_requests()
    told = [request.last_user_text() for request in first_requests_of_iterations(requests, iterations)]
    assert told[1:] == [stop_feedback(PROMPT), stop_feedback(STEER)]
    assert (project.root / "progress.txt").read_text() == "step-1\n"

    operator = project.operator()
    state = every(operator, "session-state", session=claude_session)
    assert [(entry["key"], entry["value"]) for entry in state] == [("phase", "build")]  # the MCP tool's write

    seen = recorded(operator, claude_session)
    assert (seen.session["status"], seen.session["command"]) == ("completed", "claude-code")
    [loop_run] = seen.loop_runs
    assert (loop_run["status"], loop_run["iterations"], loop_run["task"]) == ("success", 3, PROMPT)
    assert [(row["number"], row["completed_at"] is not None) for row in seen.iterations] == [
        (1, True), (2, True), (3, True)]
    assert seen.iterations[-1]["review_content"] == f"Done. {promise(PROMISE)}"

    # Usage: one row per API message, its tokens exactly, priced from the shipped list, in its iteration.
    prices = price_list(operator)
    by_request = seen.usage_by_request()
    scripted = {turn.message_id: (number, turn.usage) for number, iteration in enumerate(iterations, 1)
                for turn in iteration.turns}
    assert set(by_request) == set(scripted)
    for message_id, (number, usage) in scripted.items():
        row = by_request[message_id]
        assert {name: row[name] for name in usage_fields(usage)} == usage_fields(usage), message_id
        assert Decimal(row["cost_usd"]) == cost_of(usage, prices), message_id
        assert (row["model"], row["iteration"]) == ("claude-sonnet-4-5", number), message_id
    total_cost = sum((cost_of(usage, prices) for _, usage in scripted.values()), Decimal(0))
    assert (seen.session["total_tokens_input"], seen.session["total_tokens_output"]) == (
        sum(usage.input_tokens for _, usage in scripted.values()),
        sum(usage.output_tokens for _, usage in scripted.values()))
    assert Decimal(seen.session["total_cost_usd"]) == total_cost

    # The conversation: what each iteration was told, the assistant's words, its tool calls with the results the
    # CLI sent back to the model.
    results = {use_id: text for request in requests for use_id, text in request.tool_results().items()}
    [bash_1, set_state], [bash_2], [bash_3] = ([use for turn in iteration.turns for use in turn.tool_uses]
                                               for iteration in iterations)
    assert (results[bash_1.id], results[bash_2.id], results[bash_3.id]) == ("step-1", "step-1", "steered")
    assert '"phase"' in results[set_state.id]
    conversation = [(message["role"], message["content"],
                     [(call["id"], call["name"], call.get("status"), call.get("result"))
                      for call in message["tool_calls"] or []])
                    for message in seen.messages]

    def called(use):
        return [(use.id, use.name, "completed", results[use.id])]

    assert conversation == [
        ("user", PROMPT, []),
        ("assistant", "Checking the tree.", []),
        ("assistant", "", called(bash_1)),
        ("assistant", "", called(set_state)),
        ("assistant", "Step 1 done.", []),
        ("user", stop_feedback(PROMPT), []),
        ("assistant", "", called(bash_2)),
        ("assistant", "Step 2 done.", []),
        ("user", stop_feedback(STEER), []),
        ("assistant", "", called(bash_3)),
        ("assistant", f"Done. {promise(PROMISE)}", []),
    ]

    # Memory: an observation per tool use, and the loop's success.
    observed = sorted((row["type"], row["tool_name"]) for row in seen.observations)
    assert observed == sorted([("bash", "Bash"), ("tool_use", mcp_tool("set_state")), ("bash", "Bash"),
                               ("bash", "Bash"), ("success", "ralph-loop")])
    operator.close()


def test_it_stops_at_the_operators_stop(project: ClaudeProject) -> None:
    claude_session = "9b2d4e61-3c5f-4a8e-8f1b-6d7e2a9c0f42"
    _loop_start(project, max_iterations=10)
    iterations = [
        Iteration((turn("msg_stop_1", Usage(500, 10), "Step 1 done."),)),
        # The operator stops the loop during the second turn, as docs/agents.md shows: it ends at that turn's Stop.
        Iteration((turn("msg_stop_2", Usage(600, 12), "Step 2 done.",
                        before=lambda request: project.ralph("signal", "send", "stop", "", "--session",
                                                             claude_session)),)),
        Iteration((turn("msg_stop_3", Usage(700, 14), "Never asked for."),)),
    ]
    project.stub.load(script_of(iterations))

    _, run = project.loop(PROMPT, session_id=claude_session)

    assert (run.status, run.result()["result"]) == (0, "Step 2 done."), run.stderr
    assert project.stub.turns_used == 2
    operator = project.operator()
    seen = recorded(operator, claude_session)
    assert seen.session["status"] == "stopped"
    [loop_run] = seen.loop_runs
    assert (loop_run["status"], loop_run["iterations"]) == ("stopped", 2)
    assert set(seen.usage_by_request()) == {"msg_stop_1", "msg_stop_2"}
    assert [signal["is_processed"] for signal in every(operator, "signals", session=claude_session)] == [True]
    operator.close()


def test_it_goes_on_after_the_clis_turn_cap_when_the_session_resumes(project: ClaudeProject) -> None:
    """The CLI has no limit on consecutive Stop-hook blocks; `--max-turns` is its only cap, and it ends the run
    right after a Stop hook blocked (that block's prompt is never sent). The loop stays running in Ralph Site,
    and the resumed session goes on with it."""
    claude_session = "c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f"
    _loop_start(project, max_iterations=10)
    project.stub.load([turn("msg_cap_1", Usage(300, 10), "Step 1 done."),
                       turn("msg_cap_2", Usage(400, 11), "Step 2 done.")])
    capped = project.claude("-p", PROMPT, "--session-id", claude_session, "--max-turns", "2", "--output-format",
                            "json", "--model", MODEL, "--allowed-tools", *ALLOWED_TOOLS)
    assert (capped.status, capped.result()["subtype"], project.stub.turns_used) == (1, "error_max_turns", 2)

    operator = project.operator()
    [loop_run] = recorded(operator, claude_session).loop_runs
    assert (loop_run["status"], loop_run["iterations"]) == ("running", 2)

    project.stub.load([turn("msg_cap_3", Usage(500, 12), f"Done. {promise(PROMISE)}")])
    resumed = project.claude("-p", "Go on.", "--resume", claude_session, "--output-format", "json", "--model", MODEL,
                             "--allowed-tools", *ALLOWED_TOOLS)
    assert (resumed.status, resumed.result()["result"]) == (0, f"Done. {promise(PROMISE)}"), resumed.stderr
    seen = recorded(operator, claude_session)
    [loop_run] = seen.loop_runs
    assert (loop_run["status"], loop_run["iterations"], seen.session["status"]) == ("success", 3, "completed")
    assert set(seen.usage_by_request()) == {"msg_cap_1", "msg_cap_2", "msg_cap_3"}
    operator.close()


def test_it_starts_a_loop_with_the_slash_command_init_wrote(project: ClaudeProject) -> None:
    """`/ralph-loop "PROMPT" --max-iterations N --completion-promise TEXT` in the session starts the loop there."""
    claude_session = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    project.stub.load([turn("msg_slash_1", Usage(700, 30), "Step 1 done."),
                       turn("msg_slash_2", Usage(800, 31), f"Done. {promise(PROMISE)}")])

    _, run = project.loop(f'/ralph-loop "{PROMPT}" --max-iterations 3 --completion-promise "{PROMISE}"',
                          session_id=claude_session)

    assert (run.status, run.result()["result"]) == (0, f"Done. {promise(PROMISE)}"), run.stderr
    first, second = project.stub.turn_requests()
    assert "Ralph loop" in first.last_user_text() and PROMPT in first.last_user_text()
    assert second.last_user_text() == stop_feedback(PROMPT)
    operator = project.operator()
    seen = recorded(operator, claude_session)
    [loop_run] = seen.loop_runs
    assert (loop_run["status"], loop_run["iterations"], loop_run["task"], loop_run["max_iterations"]) == (
        "success", 2, PROMPT, 3)
    assert seen.session["status"] == "completed"
    operator.close()


def test_a_subagent_s_stop_decides_nothing_and_its_calls_are_counted(project: ClaudeProject) -> None:
    """A subagent (the Agent tool) ends with SubagentStop: the loop does not take it for a turn and the subagent is
    never fed the prompt; its API calls, which Claude Code writes to the subagent's own transcript, are counted in
    the session's usage and cost, in the iteration they ran in."""
    claude_session = "d4e5f6a7-b8c9-4d0e-8f1a-2b3c4d5e6f70"
    _loop_start(project, max_iterations=5)
    delegate = tool("Agent", description="Count", prompt="Say the count.", subagent_type="general-purpose")
    iterations = [
        Iteration((turn("msg_sub_main_1a", Usage(900, 40), "Delegating.", delegate),
                   turn("msg_sub_agent_1", Usage(400, 20, 0, 100), "Counted: 3."),  # the subagent's one call
                   turn("msg_sub_main_1b", Usage(1000, 30), "Step 1 done."))),
        Iteration((turn("msg_sub_main_2", Usage(1100, 25), f"Done. {promise(PROMISE)}"),)),
    ]
    project.stub.load(script_of(iterations))

    run = project.claude("-p", PROMPT, "--session-id", claude_session, "--output-format", "json", "--model", MODEL,
                         "--allowed-tools", *ALLOWED_TOOLS, "Agent")

    assert (run.status, run.result()["result"]) == (0, f"Done. {promise(PROMISE)}"), run.stderr
    _, agent, main_1b, main_2 = project.stub.turn_requests()
    assert "Agent" not in {tool["name"] for tool in agent.body["tools"]}  # the subagent's own call
    assert main_1b.tool_results()[delegate.id].startswith("Counted: 3.")  # the CLI adds the agent's id and usage
    assert main_2.last_user_text() == stop_feedback(PROMPT)  # the loop's next turn came after the main agent's Stop
    operator = project.operator()
    seen = recorded(operator, claude_session)
    [loop_run] = seen.loop_runs
    assert (loop_run["status"], loop_run["iterations"]) == ("success", 2)
    prices = price_list(operator)
    by_request = seen.usage_by_request()
    assert {message_id: row["iteration"] for message_id, row in by_request.items()} == {
        "msg_sub_main_1a": 1, "msg_sub_agent_1": 1, "msg_sub_main_1b": 1, "msg_sub_main_2": 2}
    usages = [t.usage for t in script_of(iterations)]
    assert {name: by_request["msg_sub_agent_1"][name] for name in usage_fields(usages[1])} == usage_fields(usages[1])
    assert Decimal(seen.session["total_cost_usd"]) == sum((cost_of(usage, prices) for usage in usages), Decimal(0))
    assert seen.session["total_tokens_input"] == sum(usage.input_tokens for usage in usages)
    # The subagent's words stay in its own transcript: the session's conversation holds its result only.
    assert "Counted: 3." not in [message["content"] for message in seen.messages]
    operator.close()
