"""`ralph hook <Event>`: one Claude Code hook, posted to `/api/v1/claude-code/hooks/` with the transcript's new entries.

Never blocks or breaks Claude Code: whatever fails, it exits 0 (a message on stderr) and prints either the server's
answer or a safe one. Its state lives in the project (`.ralph/claude-code/`, kept out of git by `ralph claude init`):

* `sessions/<claude session id>.json`: the transcript's byte offset the last call stopped at (and
  `sessions/<claude session id>-agent-<agent id>.json`, a subagent's own transcript's, read at its SubagentStop);
* `spool/`: every record is written here first, then sent, oldest first, and removed once the server took it (or
  refused it: moved to `spool/refused/`, never re-sent): with the server down a record waits for the next call;
  nothing is lost, and a record sent twice is stored once by the server;
* `loop.json`: the local copy of the project's Ralph loop (`ralph loop start`), so that with the server down the
  Stop hook decides the turn alone, with the same rule (`ralphsite.core.ralph_loop`).

A paused loop (the server answers `loop.state` `paused` and `wait_seconds`) is asked again until Continue or the
hook's own time budget (`--budget`, under the timeout `ralph claude init` gives the hook) runs out: then it lets the
agent stop (the loop stays paused on the server; `claude --continue` resumes the session).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ralphsite.agents.cli.client import Api, Refused, Unreachable, path_of
from ralphsite.core.ralph_loop import LoopSpec, TurnAction, loop_turn_decide, stop_hook_output

STATE_DIR = Path(".ralph") / "claude-code"
HOOKS_PATH = path_of("claude-code", "hooks")
MAX_ENTRIES_PER_RECORD = 2000
MAX_BYTES_PER_RECORD = 8 * 1024 * 1024
MAX_ENTRY_BYTES = 256 * 1024  # a bigger entry (a huge file read) is sent without its text
REQUEST_TIMEOUT_MAX = 15.0


def project_dir(payload: dict[str, Any]) -> Path:
    """Claude Code's project directory (CLAUDE_PROJECT_DIR, which it sets for hooks), else the hook's cwd."""
    return Path(os.environ.get("CLAUDE_PROJECT_DIR") or str(payload.get("cwd") or ".")).resolve()


def _json_write(path: Path, value: Any) -> None:
    """Written whole or not at all (a crash mid-write leaves the old file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    os.replace(partial, path)


def _json_read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _shrunk(entry: dict[str, Any], size: int) -> dict[str, Any]:
    """An entry too big to send, without its text: its identity, usage and tool calls stay."""
    message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    marker = {"type": "text", "text": f"[transcript entry of {size} bytes: its text was not sent]"}
    blocks = [marker]
    for block in message.get("content") if isinstance(message.get("content"), list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            blocks.append({"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": {}})
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            blocks.append({"type": "tool_result", "tool_use_id": block.get("tool_use_id"),
                           "is_error": block.get("is_error"), "content": marker["text"]})
    kept = {name: message[name] for name in ("id", "role", "model", "usage") if name in message}
    return {name: entry[name] for name in ("type", "uuid", "parentUuid", "timestamp") if name in entry} | {
        "message": {**kept, "content": blocks}}


def transcript_slices(path: str, offset: int) -> Iterator[dict[str, Any]]:
    """The transcript's complete lines from `offset`, parsed, in slices a request carries; a line that is not JSON
    is skipped, an unfinished last line left for the next call. A file shorter than the offset (a new transcript at
    the same path) is read from its start."""
    try:
        with open(path, "rb") as transcript:
            transcript.seek(0, os.SEEK_END)
            if transcript.tell() < offset:
                offset = 0
            transcript.seek(offset)
            data = transcript.read()
    except OSError:
        return
    position, entries, size = offset, [], 0
    start = 0
    while (end := data.find(b"\n", start)) != -1:
        line = data[start:end]
        start = end + 1
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if isinstance(entry, dict):
            if len(line) > MAX_ENTRY_BYTES:
                entry = _shrunk(entry, len(line))
            entries.append(entry)
            size += min(len(line), MAX_ENTRY_BYTES)
        if len(entries) >= MAX_ENTRIES_PER_RECORD or size >= MAX_BYTES_PER_RECORD:
            yield {"offset": position, "next_offset": offset + start, "entries": entries}
            position, entries, size = offset + start, [], 0
    yield {"offset": position, "next_offset": offset + start, "entries": entries}


TURN_WAIT_SECONDS = 2.0
TURN_POLL_SECONDS = 0.05


def _says(entry: dict[str, Any], text: str) -> bool:
    message = entry.get("message") if entry.get("type") == "assistant" else None
    blocks = message.get("content") if isinstance(message, dict) else None
    return isinstance(blocks, list) and any(
        isinstance(block, dict) and isinstance(block.get("text"), str) and block["text"].strip()
        and text.endswith(block["text"].strip()) for block in blocks)


def _turn_slices(path: str, offset: int, last_assistant_message: Any) -> list[dict[str, Any]]:
    """The transcript's new slices. At a Stop, the turn's last assistant entry may not be in the file yet (Claude
    Code 2.1.112 appends its queue every 100 ms, and nothing flushes it before the Stop hook): read again, briefly,
    until the entry saying `last_assistant_message` is there, so the turn's usage is recorded in its own iteration."""
    wanted = last_assistant_message.strip() if isinstance(last_assistant_message, str) else ""
    give_up = time.monotonic() + TURN_WAIT_SECONDS
    while True:
        slices = list(transcript_slices(path, offset))
        if not wanted or time.monotonic() >= give_up or any(
                _says(entry, wanted) for part in slices for entry in part["entries"]):
            return slices
        time.sleep(TURN_POLL_SECONDS)


class HookState:
    """The project's hook state: offsets per Claude Code session, the spool, the local loop copy."""

    def __init__(self, project: Path) -> None:
        self.root = project / STATE_DIR
        self.spool = self.root / "spool"

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One hook of the project at a time reads the transcript and sends the spool (tools run in parallel)."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _offset_path(self, claude_session: str) -> Path:
        return self.root / "sessions" / f"{''.join(c for c in claude_session if c.isalnum() or c in '-_')}.json"

    def spool_records(self, event: str, payload: dict[str, Any]) -> tuple[list[Path], int]:
        """The hook's records (the payload with the transcript's new entries), spooled, and the transcript offset
        after them (the offset kept moves there)."""
        claude_session = str(payload.get("session_id") or "")
        offset_path = self._offset_path(claude_session)
        offset = (_json_read(offset_path) or {}).get("offset", 0)
        transcript = payload.get("transcript_path")
        # No transcript yet (SessionStart and the first UserPromptSubmit come before Claude Code writes it): the
        # record carries no entries.
        awaited = payload.get("last_assistant_message") if event == "Stop" else None
        slices = (_turn_slices(transcript, offset, awaited) if isinstance(transcript, str) and transcript else []
                  ) or [{"offset": offset, "next_offset": offset, "entries": []}]
        subagent = self._subagent_records(claude_session, payload) if event == "SubagentStop" else None
        records = subagent[0] if subagent else []
        for number, part in enumerate(slices):
            last = number == len(slices) - 1
            # Only the last slice is the event itself; the ones before carry the backlog of the transcript.
            records.append({"event": event if last else "TranscriptBacklog", "payload": payload if last else {
                **payload, "hook_event_name": "TranscriptBacklog"}, "transcript": part})
        paths = []
        for number, record in enumerate(records):
            path = self.spool / f"{time.time_ns():020d}-{os.getpid()}-{number:04d}.json"
            _json_write(path, record)
            paths.append(path)
        _json_write(offset_path, {"offset": slices[-1]["next_offset"]})
        if subagent:
            _json_write(subagent[1], {"offset": subagent[2]})
        return paths, slices[-1]["next_offset"]

    def _subagent_records(self, claude_session: str, payload: dict[str, Any]
                          ) -> tuple[list[dict[str, Any]], Path, int] | None:
        """At a SubagentStop: the subagent's own transcript (`agent_transcript_path`; Claude Code keeps it apart from
        the session's) since the last call, as records marked `subagent` (the server records their usage, not their
        messages), the offset file of that transcript and the offset after them. None: no subagent transcript."""
        path, agent = payload.get("agent_transcript_path"), payload.get("agent_id")
        if not (isinstance(path, str) and path and isinstance(agent, str) and agent):
            return None
        offset_path = self._offset_path(f"{claude_session}-agent-{agent}")
        offset = (_json_read(offset_path) or {}).get("offset", 0)
        slices = _turn_slices(path, offset, payload.get("last_assistant_message"))
        records = [{"event": "SubagentStop", "payload": payload, "transcript": {**part, "subagent": True}}
                   for part in slices if part["entries"]]
        return records, offset_path, slices[-1]["next_offset"] if slices else offset

    def flush(self, api: Api) -> dict[Path, dict[str, Any]]:
        """Send the spool oldest first, until the server cannot be reached; the answers by record."""
        answers: dict[Path, dict[str, Any]] = {}
        for path in sorted(self.spool.glob("*.json")):
            record = _json_read(path)
            if record is None:
                path.unlink(missing_ok=True)
                continue
            try:
                answers[path] = api.call("POST", HOOKS_PATH, record).data
            except Refused as refusal:
                if refusal.status >= 500:
                    break  # the server's trouble, not the record's: it is sent again next time
                print(f"ralph hook: the server refused a record ({refusal}); kept in {self.spool / 'refused'}",
                      file=sys.stderr)
                (self.spool / "refused").mkdir(exist_ok=True)
                os.replace(path, self.spool / "refused" / path.name)
                continue
            except Unreachable:
                break
            path.unlink(missing_ok=True)
        return answers

    # -- the local loop copy --

    @property
    def loop_path(self) -> Path:
        return self.root / "loop.json"

    def loop(self) -> dict[str, Any] | None:
        loop = _json_read(self.loop_path)
        return loop if isinstance(loop, dict) else None

    def loop_write(self, loop: dict[str, Any]) -> None:
        _json_write(self.loop_path, loop)

    def loop_sync(self, state: dict[str, Any] | None) -> None:
        """The server's view of the loop, where it is the local copy's loop."""
        loop = self.loop()
        if loop is not None and state and state.get("id") == loop.get("id"):
            self.loop_write({**loop, "iteration": state["iteration"], "state": state["state"]})


def offline_stop(state: HookState, payload: dict[str, Any]) -> dict[str, Any]:
    """The Stop decision with the server down: the local loop copy and the shared rule (no operator signals)."""
    loop = state.loop()
    if loop is None or loop.get("state") not in ("running", "paused"):
        return {}
    if loop.get("claude_session_id") not in (None, payload.get("session_id")):
        return {}
    spec = LoopSpec(prompt=loop["prompt"], max_iterations=loop.get("max_iterations"),
                    completion_promise=loop.get("completion_promise"))
    iteration = int(loop.get("iteration", 0)) + 1
    last = payload.get("last_assistant_message")
    decision = loop_turn_decide(loop=spec, iteration=iteration, last_assistant_message=last if isinstance(last, str)
                                else "", steer=None, stop_requested=False, paused=False)
    ending = {TurnAction.COMPLETE: "completed", TurnAction.STOP: "stopped"}.get(decision.action, "running")
    state.loop_write({**loop, "iteration": iteration, "state": ending})
    return stop_hook_output(decision)


def hook_answer(*, event: str, payload: dict[str, Any], api: Api, budget: float) -> dict[str, Any]:
    """What the hook prints: the server's answer to this hook, or, when it cannot answer, the safe one."""
    deadline = time.monotonic() + budget
    state = HookState(project_dir(payload))
    with state.locked():
        mine, next_offset = state.spool_records(event, payload)
        answers = state.flush(api)
        answer = answers.get(mine[-1])
        for reply in answers.values():
            state.loop_sync(reply.get("loop") if isinstance(reply, dict) else None)
    if answer is None:
        return offline_stop(state, payload) if event == "Stop" else {}
    while event == "Stop" and (answer.get("loop") or {}).get("state") == "paused":
        wait = float(answer["loop"].get("wait_seconds") or 5)
        if time.monotonic() + wait >= deadline:
            return {}  # out of time while paused: let the agent stop; the loop stays paused
        time.sleep(wait)
        # The same Stop again, with no new entries: the server knows it by its transcript position.
        again = {"event": event, "payload": payload,
                 "transcript": {"offset": next_offset, "next_offset": next_offset, "entries": []}}
        try:
            answer = api.call("POST", HOOKS_PATH, again).data
        except (Refused, Unreachable) as error:
            print(f"ralph hook: asking again while paused: {error}", file=sys.stderr)
            continue
        state.loop_sync(answer.get("loop"))
    output = answer.get("output")
    return output if isinstance(output, dict) else {}


def hook_main(*, event: str, url: str, token: str, budget: float) -> int:
    """Read the hook's JSON on stdin, answer on stdout; always exit 0."""
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the hook's input is not a JSON object")
        api = Api(url=url, token=token, timeout=max(1.0, min(REQUEST_TIMEOUT_MAX, budget - 1)))
        try:
            output = hook_answer(event=event, payload=payload, api=api, budget=budget)
        finally:
            api.close()
    except Exception as error:  # a hook never breaks Claude Code: say why on stderr, answer nothing
        print(f"ralph hook {event}: {type(error).__name__}: {error}", file=sys.stderr)
        return 0
    if output:
        print(json.dumps(output, ensure_ascii=False))
    return 0
