"""The server goes down in the middle of a Ralph loop in the real Claude Code CLI: `ralph hook` spools every record,
the Stop hook decides each turn alone (the local loop copy, the shared rule) and the loop still ends on its promise;
once the server is back, the project's next Claude Code session delivers the spool, and Ralph Site holds the
whole first session once: the same records sent again change nothing.

This module has a server of its own (the session's live server must stay up for the other modules)."""

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.benchmarks.server import BenchServer
from tests.claude_code.messages_stub import MessagesStub, RecordedRequest, Usage
from tests.claude_code.project import ClaudeProject, new_project
from tests.claude_code.script import (
    API,
    Iteration,
    Recorded,
    bash,
    first_requests_of_iterations,
    promise,
    recorded,
    script_of,
    stop_feedback,
    turn,
    usage_fields,
)

pytestmark = pytest.mark.smoke

PROMPT = "Count one step a turn."
PROMISE = "COUNTED"
SPOOL = Path(".ralph") / "claude-code" / "spool"


@pytest.fixture(scope="module")
def server() -> Iterator[BenchServer]:
    with BenchServer(workers=1, threads=4, app="ralphsite.wsgi:application") as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, claude_cli: Path, messages_stub: MessagesStub, server: BenchServer) -> ClaudeProject:
    """The conftest's project, against this module's own server."""
    return new_project(tmp_path, server_url=f"http://127.0.0.1:{server.port}", admin_token=server.admin_token(),
                       stub=messages_stub)


def _spooled(project: ClaudeProject) -> list[Path]:
    return sorted((project.root / SPOOL).glob("*.json"))


def _snapshot(seen: Recorded) -> dict[str, object]:
    """What must not change when the records come again."""
    return {"session": {name: seen.session[name] for name in ("status", "current_iteration", "total_tokens_input",
                                                              "total_tokens_output", "total_cost_usd")},
            "loop_runs": [(row["status"], row["iterations"]) for row in seen.loop_runs],
            "iterations": [(row["number"], row["completed_at"]) for row in seen.iterations],
            "usage": sorted((row["request_id"], row["iteration"], row["cost_usd"]) for row in seen.usage),
            "messages": [(row["id"], row["role"], row["content"], row["tool_calls"]) for row in seen.messages],
            "observations": sorted((row["id"], row["type"]) for row in seen.observations)}


@pytest.mark.long
def test_it_finishes_the_loop_offline_and_delivers_the_spool_once(project: ClaudeProject, server: BenchServer,
                                                                   tmp_path: Path) -> None:
    claude_session = "5e0a7c13-8b2f-4d6e-a1c9-3f4b5d6e7a80"
    project.ralph("loop", "start", PROMPT, "--max-iterations", "5", "--completion-promise", PROMISE,
                  token=project.project_token())

    def server_down(request: RecordedRequest) -> None:
        server.stop_process()

    iterations = [
        Iteration((turn("msg_down_1a", Usage(900, 50, 100, 0), "", bash("echo one")),
                   turn("msg_down_1b", Usage(1000, 20, 0, 900), "Step 1 done."))),
        # The server stops while the second turn's first answer is on its way: every hook from here is spooled.
        Iteration((turn("msg_down_2a", Usage(1100, 55, 0, 1000), "", bash("echo two"), before=server_down),
                   turn("msg_down_2b", Usage(1200, 21, 0, 1100), "Step 2 done."))),
        Iteration((turn("msg_down_3", Usage(1300, 22, 0, 1200), f"Counted. {promise(PROMISE)}"),)),
    ]
    project.stub.load(script_of(iterations))

    _, run = project.loop(PROMPT, session_id=claude_session)

    # Offline, the Stop hook went on with the prompt, then ended the loop on the promise.
    assert (run.status, run.result()["result"]) == (0, f"Counted. {promise(PROMISE)}"), run.stderr
    assert project.stub.turns_used == 5
    told = [request.last_user_text()
            for request in first_requests_of_iterations(project.stub.turn_requests(), iterations)]
    assert told[1:] == [stop_feedback(PROMPT), stop_feedback(PROMPT)]
    spooled = _spooled(project)
    assert spooled, "the hooks spooled nothing while the server was down"
    kept = tmp_path / "spool-copy"
    shutil.copytree(project.root / SPOOL, kept)

    server.start_process()
    # The project's next session delivers the spool, oldest first, before its own records.
    project.stub.load([turn("msg_next_1", Usage(10, 2), "Hello again.")])
    _, next_run = project.loop("Hello")
    assert next_run.status == 0, next_run.stderr
    assert _spooled(project) == []
    assert not (project.root / SPOOL / "refused").exists()

    operator = project.operator()
    seen = recorded(operator, claude_session)
    assert seen.session["status"] == "completed"
    [loop_run] = seen.loop_runs
    assert (loop_run["status"], loop_run["iterations"]) == ("success", 3)
    assert [row["number"] for row in seen.iterations] == [1, 2, 3]
    by_request = seen.usage_by_request()
    scripted = {turn.message_id: (number, turn.usage) for number, iteration in enumerate(iterations, 1)
                for turn in iteration.turns}
    assert {message_id: ({name: row[name] for name in usage_fields(Usage(0, 0))}, row["iteration"])
            for message_id, row in by_request.items()} == {
        message_id: (usage_fields(usage), number) for message_id, (number, usage) in scripted.items()}
    assert sorted(row["type"] for row in seen.observations) == ["bash", "bash", "success"]
    assert [message["content"] for message in seen.messages if message["role"] == "user"] == [
        PROMPT, stop_feedback(PROMPT), stop_feedback(PROMPT)]

    # Every record again, as a client whose answers were lost would send them: nothing changes.
    before = _snapshot(seen)
    token = project.project_token()
    for path in sorted(kept.glob("*.json")):
        again = project.operator()
        again.token = token
        again.ok("POST", f"{API}/claude-code/hooks/", json.loads(path.read_text()))
        again.close()
    assert _snapshot(recorded(operator, claude_session)) == before
    operator.close()
