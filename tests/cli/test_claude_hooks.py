"""`ralph hook`, `ralph loop start` and `ralph claude init` as Claude Code runs them (subprocesses), against the live
gunicorn: the transcript read from where the last call stopped, the spool while the server is down (delivered once on
the next call), the offline Stop decision, and a project set up twice without a second token."""

import json
import os
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from ralphsite.agents.cli import hooks
from tests.claude_code_transcript import assistant_entries, text, tool_use, user_entry
from tests.cli.conftest import RALPH
from tests.live_gunicorn import LiveGunicorn
from tests.ralphsite.test_live_server import _request


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Project:
    """A temporary Claude Code project: its transcript file and `ralph` run as its hooks are."""

    def __init__(self, root: Path, server: LiveGunicorn) -> None:
        self.root, self.server = root, server
        self.claude_session = str(uuid.uuid4())
        self.transcript = root / "transcript.jsonl"
        self.transcript.write_text("")
        self.url = server.url

    def write(self, *entries: dict[str, Any]) -> None:
        with self.transcript.open("a") as transcript:
            for entry in entries:
                transcript.write(json.dumps(entry) + "\n")

    def ralph(self, *args: str, stdin: str = "", url: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {name: value for name, value in os.environ.items() if not name.startswith(("RALPH_", "CLAUDE_"))}
        env |= {"RALPH_URL": url or self.url, "RALPH_TOKEN": self.server.token, "CLAUDE_PROJECT_DIR": str(self.root)}
        return subprocess.run([str(RALPH), *args], input=stdin, capture_output=True, text=True, timeout=60, env=env,
                              cwd=self.root)

    def hook(self, event: str, *, url: str | None = None, **fields: Any) -> tuple[dict[str, Any], str]:
        payload = {"session_id": self.claude_session, "transcript_path": str(self.transcript), "cwd": str(self.root),
                   "hook_event_name": event, **fields}
        done = self.ralph("hook", event, "--budget", "20", stdin=json.dumps(payload), url=url)
        assert done.returncode == 0, done.stderr
        return (json.loads(done.stdout) if done.stdout.strip() else {}), done.stderr

    def api(self, path: str) -> Any:
        status, _headers, body = _request(self.server, "GET", path)
        assert status == 200, body
        return json.loads(body)

    def session(self) -> dict[str, Any]:
        [session] = self.api(f"/api/v1/sessions/?key={self.claude_session}")["results"]
        return session

    def usage(self) -> list[tuple[str, int]]:
        rows = self.api(f"/api/v1/token-usage/?session={self.session()['id']}&page_size=100")["results"]
        return sorted((row["request_id"], row["input_tokens"]) for row in rows)

    @property
    def spooled(self) -> list[Path]:
        return sorted((self.root / ".ralph" / "claude-code" / "spool").glob("*.json"))


@pytest.fixture
def project(tmp_path: Path, gunicorn_server: LiveGunicorn) -> Project:
    assert RALPH.exists(), f"{RALPH} is missing: `make install-dev` installs the console script"
    return Project(tmp_path, gunicorn_server)


def test_a_hook_records_the_new_transcript_entries_and_stop_answers_the_loop(project: Project) -> None:
    project.transcript.unlink()  # Claude Code writes it after SessionStart
    context, _ = project.hook("SessionStart", source="startup")
    assert "Ralph Site session" in context["hookSpecificOutput"]["additionalContext"]
    started = project.ralph("loop", "start", "Make the tests pass.", "--max-iterations", "3",
                            "--completion-promise", "GREEN", "--claude-session", project.claude_session)
    assert started.returncode == 0, started.stderr
    assert "Make the tests pass." in started.stdout
    bash = tool_use("toolu_1", "Bash", command="pytest")
    project.write(user_entry("Make the tests pass."), *assistant_entries("msg_1", text("Running them."), bash))
    project.hook("PostToolUse", tool_name="Bash", tool_use_id="toolu_1", tool_input={"command": "pytest"},
                 tool_response={"stdout": "1 failed"})
    project.write(*assistant_entries("msg_2", text("One fails."), usage={"input_tokens": 5, "output_tokens": 1}))
    answer, _ = project.hook("Stop", stop_hook_active=False, last_assistant_message="One fails.")
    assert answer == {"decision": "block", "reason": "Make the tests pass."}
    assert project.usage() == [("msg_1", 100), ("msg_2", 5)]  # each call once, though read over two hooks
    assert project.session()["current_iteration"] == 2
    local = json.loads((project.root / ".ralph" / "claude-code" / "loop.json").read_text())
    assert (local["iteration"], local["state"]) == (1, "running")
    done, _ = project.hook("Stop", stop_hook_active=True, last_assistant_message="<promise>GREEN</promise>")
    assert done == {} and project.session()["status"] == "completed"


def test_with_the_server_down_records_wait_in_the_spool_and_are_delivered_once(project: Project) -> None:
    down = f"http://127.0.0.1:{_closed_port()}"
    project.write(user_entry("Go"), *assistant_entries("msg_a", text("Working.")))
    answer, _ = project.hook("UserPromptSubmit", url=down, prompt="Go")
    assert answer == {} and len(project.spooled) == 1
    project.write(*assistant_entries("msg_b", text("Still working.")))
    project.hook("PostToolUse", url=down, tool_name="Read", tool_use_id="toolu_r", tool_input={"file_path": "/x"})
    assert len(project.spooled) == 2
    project.hook("Stop", stop_hook_active=False, last_assistant_message="Still working.")  # the server is back
    assert project.spooled == []
    assert project.usage() == [("msg_a", 100), ("msg_b", 100)]
    assert project.session()["user_request"] == "Go"
    project.hook("SessionEnd", reason="other")
    assert project.usage() == [("msg_a", 100), ("msg_b", 100)]


def test_with_the_server_down_the_stop_hook_decides_from_the_local_loop_copy(project: Project) -> None:
    started = project.ralph("loop", "start", "Next step.", "--max-iterations", "2", "--claude-session",
                            project.claude_session)
    assert started.returncode == 0, started.stderr
    down = f"http://127.0.0.1:{_closed_port()}"
    assert project.hook("Stop", url=down, last_assistant_message="step 1")[0] == {
        "decision": "block", "reason": "Next step."}
    assert project.hook("Stop", url=down, last_assistant_message="step 2")[0] == {}  # the iteration limit
    local = json.loads((project.root / ".ralph" / "claude-code" / "loop.json").read_text())
    assert (local["iteration"], local["state"]) == (2, "stopped")
    assert len(project.spooled) == 2


def test_a_hook_never_breaks_claude_code(project: Project) -> None:
    for stdin in ("not json", "[1, 2]", json.dumps({"session_id": 5, "cwd": str(project.root)})):
        done = project.ralph("hook", "Stop", stdin=stdin)
        assert (done.returncode, done.stdout) == (0, "")
    assert "ralph hook Stop" in project.ralph("hook", "Stop", stdin="not json").stderr


def test_claude_init_sets_the_project_up_once(project: Project) -> None:
    for _ in range(2):
        done = project.ralph("claude", "init")
        assert done.returncode == 0, done.stderr
    local = json.loads((project.root / ".claude" / "settings.local.json").read_text())
    assert local["env"]["RALPH_URL"] == project.url and local["env"]["RALPH_TOKEN"].startswith("ralph_")
    assert {event: len(groups) for event, groups in local["hooks"].items()} == {
        event: 1 for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop",
                               "SubagentStop", "PreCompact", "SessionEnd")}
    assert local["hooks"]["Stop"][0]["hooks"][0] == {"type": "command", "timeout": 3600,
                                                     "command": f"'{RALPH.resolve()}' hook Stop --budget 3595"}
    assert "token kept" in done.stdout  # the second run
    mcp = json.loads((project.root / ".mcp.json").read_text())["mcpServers"]["ralph-site"]
    assert mcp["url"] == project.url + "/mcp/" and "RALPH_TOKEN" not in json.dumps(mcp)
    headers = project.ralph("claude", "mcp-headers")
    # The project's own token, not the environment's (Claude Code starts the helper in the project).
    assert json.loads(headers.stdout) == {"Authorization": f"Token {local['env']['RALPH_TOKEN']}"}
    tokens = project.api("/api/v1/tokens/?page_size=100")["results"]
    assert [t["project_path"] for t in tokens if t["scope"] == "project"].count(str(project.root)) == 1
    assert ".claude/settings.local.json" in (project.root / ".gitignore").read_text()
    assert (project.root / ".claude" / "commands" / "ralph-loop.md").read_text().count("loop start") == 2


def test_a_paused_stop_hook_asks_again_until_the_pause_ends(project: Project) -> None:
    """The Pause outlives the loop's one-second pause timeout while the hook waits: asked again, the server takes it
    and the loop goes on (had the first ask come after the second, it goes on at once: the same answer)."""
    started = project.ralph("loop", "start", "Go on.", "--pause-timeout", "1", "--claude-session",
                            project.claude_session)
    assert started.returncode == 0, started.stderr
    session = project.session()["id"]
    status, _, body = _request(project.server, "POST", "/api/v1/signals/", headers={"Content-Type": "application/json"},
                               body=json.dumps({"session": session, "type": "pause", "message": ""}))
    assert status == 201, body
    assert project.hook("Stop", last_assistant_message="step 1")[0] == {"decision": "block", "reason": "Go on."}
    [pause] = project.api(f"/api/v1/signals/?session={session}")["results"]
    assert (pause["is_processed"], pause["processed_by"]) == (True, "claude-code (pause timeout)")


def test_the_stop_hook_waits_for_the_turns_last_entry_to_reach_the_transcript(tmp_path: Path, monkeypatch) -> None:
    """Claude Code appends its transcript every 100 ms: the entry saying the last message may come after the Stop
    hook started. Here it arrives at the hook's first wait (in process: no clock involved)."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps(user_entry("Go")) + "\n")
    late = assistant_entries("msg_late", text("All done."))

    def entry_arrives(_seconds: float) -> None:
        transcript.write_text(transcript.read_text() + "".join(json.dumps(entry) + "\n" for entry in late))

    monkeypatch.setattr(hooks.time, "sleep", entry_arrives)
    state = hooks.HookState(tmp_path)
    payload = {"session_id": "s", "transcript_path": str(transcript), "last_assistant_message": "All done."}
    [record], _ = state.spool_records("Stop", payload)
    entries = json.loads(record.read_text())["transcript"]["entries"]
    assert [entry["type"] for entry in entries] == ["user", "assistant"]
    # Another event does not wait for it.
    monkeypatch.setattr(hooks.time, "sleep", lambda _seconds: pytest.fail("waited"))
    hooks.HookState(tmp_path / "other").spool_records("PostToolUse", payload)


def test_loop_continue_takes_the_pause_and_leaves_the_steer(project: Project) -> None:
    started = project.ralph("loop", "start", "Go on.", "--claude-session", project.claude_session)
    assert started.returncode == 0, started.stderr
    session = project.session()["id"]
    for kind, message in (("steer", "Parser first."), ("pause", "")):
        status, _, body = _request(project.server, "POST", "/api/v1/signals/",
                                   headers={"Content-Type": "application/json"},
                                   body=json.dumps({"session": session, "type": kind, "message": message}))
        assert status == 201, body
    assert project.ralph("loop", "continue", "--session", project.claude_session).returncode == 0
    signals = {s["type"]: s["is_processed"] for s in project.api(f"/api/v1/signals/?session={session}")["results"]}
    assert signals == {"steer": False, "pause": True}
    assert project.ralph("loop", "continue", "--session", project.claude_session).returncode == 3
    assert project.hook("Stop", last_assistant_message="x")[0] == {"decision": "block", "reason": "Parser first."}
