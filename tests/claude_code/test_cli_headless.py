"""The pinned CLI itself, headless against the Messages stub, with no server of ours: what the loop tests
build on (the stub speaks the API as the CLI needs; a Stop hook's block becomes the next user message) and
what the hooks rely on (the transcript's shape, the CLI's handling of consecutive Stop-hook blocks). A newer
CLI that changes any of it fails here first, saying what changed."""

import json
import sys
from pathlib import Path

import pytest

from tests.claude_code.cli import MODEL, ClaudeRun, headless_env, run_claude, transcripts
from tests.claude_code.messages_stub import MessagesStub, ToolUse, Turn, Usage

pytestmark = pytest.mark.smoke

# A Stop hook that blocks the first N stops (N from its argument), counting in a file beside it, and keeps
# every input it was given.
BLOCKING_HOOK = """
import json, pathlib, sys
here = pathlib.Path(sys.argv[0]).parent
payload = json.load(sys.stdin)
with open(here / "hook-inputs.jsonl", "a") as inputs:
    inputs.write(json.dumps(payload) + "\\n")
count = sum(1 for _ in open(here / "hook-inputs.jsonl"))
if count <= int(sys.argv[1]):
    print(json.dumps({"decision": "block", "reason": f"continue, block {count}"}))
"""


def _stop_hook(project: Path, blocks: int) -> None:
    hook = project / "stop_hook.py"
    hook.write_text(BLOCKING_HOOK)
    command = f"{sys.executable} {hook} {blocks}"
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))


def _hook_inputs(project: Path) -> list[dict]:
    return [json.loads(line) for line in (project / "hook-inputs.jsonl").read_text().splitlines()]


def _run(stub: MessagesStub, home: Path, project: Path, *extra: str) -> ClaudeRun:
    env = headless_env(stub_url=stub.url, home=home)
    return run_claude(["-p", "Say hello", "--output-format", "json", "--model", MODEL, "--allowed-tools", "Bash",
                       *extra], cwd=project, env=env)


def _entries(home: Path) -> list[dict]:
    [transcript] = transcripts(home)
    return [json.loads(line) for line in transcript.read_text().splitlines()]


def test_it_runs_a_bash_call_and_writes_one_transcript_entry_per_content_block(
        messages_stub: MessagesStub, claude_home: Path, project_dir: Path) -> None:
    messages_stub.load([
        Turn(message_id="msg_h1", usage=Usage(100, 20, 30, 40), text="Let me look.",
             tool_uses=(ToolUse("toolu_h1", "Bash", {"command": "echo hello-from-bash"}),)),
        Turn(message_id="msg_h2", usage=Usage(200, 25, 0, 140), text="Done."),
    ])
    run = _run(messages_stub, claude_home, project_dir)

    result = run.result()
    assert (run.status, result["is_error"], result["result"], result["num_turns"]) == (0, False, "Done.", 2)
    assert messages_stub.turns_used == 2
    second = messages_stub.turn_requests()[1]
    assert second.tool_results() == {"toolu_h1": "hello-from-bash"}
    assert second.body["stream"] is True

    assistant = [entry for entry in _entries(claude_home) if entry["type"] == "assistant"]
    # Text and tool use of one message: two entries, one message id, one usage.
    assert [(entry["message"]["id"], [block["type"] for block in entry["message"]["content"]])
            for entry in assistant] == [("msg_h1", ["text"]), ("msg_h1", ["tool_use"]), ("msg_h2", ["text"])]
    assert len({entry["uuid"] for entry in assistant}) == 3
    usage_by_message = {(entry["message"]["id"],
                         tuple(entry["message"]["usage"][name] for name in Usage.__dataclass_fields__))
                        for entry in assistant}
    assert usage_by_message == {("msg_h1", (100, 20, 30, 40)), ("msg_h2", (200, 25, 0, 140))}


def test_it_sends_a_stop_hooks_reason_as_the_next_user_message(
        messages_stub: MessagesStub, claude_home: Path, project_dir: Path) -> None:
    _stop_hook(project_dir, blocks=1)
    messages_stub.load([Turn(message_id="msg_s1", usage=Usage(10, 2), text="First."),
                        Turn(message_id="msg_s2", usage=Usage(20, 3), text="Second.")])
    run = _run(messages_stub, claude_home, project_dir)

    assert (run.status, run.result()["result"]) == (0, "Second.")
    assert messages_stub.requests[-1].last_user_text() == "Stop hook feedback:\ncontinue, block 1"
    inputs = _hook_inputs(project_dir)
    assert [(hook["hook_event_name"], hook["stop_hook_active"], hook["last_assistant_message"]) for hook in inputs] \
        == [("Stop", False, "First."), ("Stop", True, "Second.")]
    [transcript] = transcripts(claude_home)
    assert {hook["transcript_path"] for hook in inputs} == {str(transcript)}
    assert {hook["session_id"] for hook in inputs} == {run.result()["session_id"]}


def test_it_sets_no_limit_on_consecutive_stop_hook_blocks_but_max_turns(
        messages_stub: MessagesStub, claude_home: Path, project_dir: Path) -> None:
    """12 blocks in a row run 13 turns; with `--max-turns 4` the run ends after the 4th turn's Stop hook
    blocked (that block's reason is never sent), as `error_max_turns`."""
    _stop_hook(project_dir, blocks=12)
    messages_stub.load([Turn(message_id=f"msg_b{n}", usage=Usage(10, 2), text=f"turn {n}") for n in range(13)])
    run = _run(messages_stub, claude_home, project_dir)
    assert (run.status, run.result()["num_turns"], messages_stub.turns_used) == (0, 13, 13)

    (project_dir / "hook-inputs.jsonl").unlink()
    messages_stub.load([Turn(message_id=f"msg_m{n}", usage=Usage(10, 2), text=f"turn {n}") for n in range(13)])
    capped = _run(messages_stub, claude_home, project_dir, "--max-turns", "4")
    assert (capped.status, capped.result()["subtype"], messages_stub.turns_used) == (1, "error_max_turns", 4)
    assert len(_hook_inputs(project_dir)) == 4
