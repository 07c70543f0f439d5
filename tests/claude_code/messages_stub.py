"""A scripted stand-in for the Anthropic Messages API on loopback, for the real Claude Code CLI.

The CLI is pointed at it with `ANTHROPIC_BASE_URL` (see tests/claude_code/cli.py). Each agent-loop request
(`POST /v1/messages` carrying the Bash tool) gets the next `Turn` of the test's script, streamed as the API
streams (SSE) or whole when the CLI asks without `stream`; every other request the CLI makes on the side
(title and topic generation with the small model, `/v1/messages/count_tokens`, anything else) gets a
harmless answer and spends no turn. Every request is recorded for the test's assertions.

What the pinned CLI (2.1.112) writes to its transcript (`$CLAUDE_CONFIG_DIR/projects/<cwd, every
non-alphanumeric character as '-'>/<session id>.jsonl`, the hooks' `transcript_path`), one JSON object a line:

* `queue-operation` (enqueue/dequeue of the prompt) and, last, `last-prompt`: no `uuid`.
* `user`: the prompt (`message.content` a string); a tool's result (`content` a list of
  `{"type": "tool_result", "tool_use_id", "content", "is_error"}`, plus `toolUseResult`); after a Stop-hook
  block, `isMeta: true` with the string "Stop hook feedback:\n<reason>" (also the API's next user message).
* `attachment` (`skill_listing`, `hook_blocking_error`, …).
* `assistant`: one entry per content block. A message with text and a tool use is two entries with their own
  `uuid` and the same `message.id` (this stub's `Turn.message_id`) and the same `message.usage`
  (`input_tokens`, `output_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`, and more);
  `requestId` at the top level is the response's `request-id` header, not the message id. Usage counts once
  per message id.

Each entry with a `uuid` also has `parentUuid`, `timestamp`, `sessionId`, `cwd`, `version`. When the hooks
run: at SessionStart and UserPromptSubmit the file does not exist yet; at PostToolUse it holds the tool_use
but not yet its tool_result (which the hook's input carries); at Stop the turn's last assistant entry is in.
"""

import itertools
import json
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-sonnet-4-5"
SIDE_TEXT = "ok"


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def as_api(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens}


@dataclass(frozen=True)
class ToolUse:
    id: str  # the API's `toolu_…` id; the CLI answers it with a tool_result of the same id
    name: str  # "Bash", or an MCP tool as the CLI names it: "mcp__<server>__<tool>"
    input: dict[str, Any]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: str  # "turn" (an agent-loop request, answered by the script), "side", "count_tokens" or "other"
    turn: int | None  # the index of the script turn that answered it

    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    def last_user_text(self) -> str:
        """The text of the last user message (its text blocks joined): what the CLI sent as the new input."""
        for message in reversed(self.messages()):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    def tool_results(self) -> dict[str, str]:
        """tool_use id → the text of its tool_result, from every user message of the request."""
        results: dict[str, str] = {}
        for message in self.messages():
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = _text_of(block.get("content"))
        return results


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.get("text", "") for block in content
                         if isinstance(block, dict) and block.get("type") == "text")
    return ""


@dataclass(frozen=True)
class Turn:
    """One assistant message of the script: text, tool uses, the usage the API reports and the message id the
    CLI writes into its transcript. `before` runs when the turn is asked for, before it is answered (with the
    request), so a test acts at an exact point of the loop (sends a Steer, stops the server) without waiting."""

    message_id: str
    usage: Usage
    text: str = ""
    tool_uses: tuple[ToolUse, ...] = ()
    model: str = MODEL
    before: Callable[[RecordedRequest], None] | None = None

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tool_uses else "end_turn"

    def content(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": self.text}] if self.text else []
        blocks += [{"type": "tool_use", "id": use.id, "name": use.name, "input": use.input} for use in self.tool_uses]
        return blocks

    def message(self) -> dict[str, Any]:
        return {"id": self.message_id, "type": "message", "role": "assistant", "model": self.model,
                "content": self.content(), "stop_reason": self.stop_reason, "stop_sequence": None,
                "usage": self.usage.as_api()}


def sse_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The Messages API's stream of one message: its usage in message_start save the output tokens (1 there,
    as the API sends), the content blocks as deltas, the output tokens in message_delta."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            first, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": first}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": usage["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def is_turn_request(body: Any) -> bool:
    """An agent-loop request: the one that offers the agent its tools (Bash among them). The CLI's side
    requests (title, topic, quota checks) offer no tools."""
    tools = body.get("tools") if isinstance(body, dict) else None
    return bool(tools) and any(tool.get("name") == "Bash" for tool in tools)


@dataclass
class MessagesStub:
    """The server; a context manager. `script` is the turns in order; `requests` what came, in order."""

    script: list[Turn] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # a turn's `before` that failed, with its traceback
    _next_turn: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _side_ids: Iterator[int] = field(default_factory=itertools.count)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def load(self, turns: list[Turn]) -> None:
        """A new script for the next CLI run (the record of the previous one is cleared)."""
        with self._lock:
            self.script, self.requests, self.errors, self._next_turn = list(turns), [], [], 0

    @property
    def turns_used(self) -> int:
        return self._next_turn

    def turn_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.kind == "turn"]

    def __enter__(self) -> "MessagesStub":
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="messages-stub", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def answer(self, method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any, bool]:
        """(status, JSON body or message, stream?) for one request, recorded first."""
        route = path.split("?", 1)[0]
        if method == "POST" and route == "/v1/messages/count_tokens":
            self._record(method, path, headers, body, "count_tokens", None)
            return 200, {"input_tokens": 1}, False
        if method != "POST" or route != "/v1/messages":
            self._record(method, path, headers, body, "other", None)
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": "not in the stub"}}, False
        stream = bool(body.get("stream"))
        if not is_turn_request(body):
            self._record(method, path, headers, body, "side", None)
            side = Turn(message_id=f"msg_side_{next(self._side_ids):04d}", usage=Usage(1, 1), text=SIDE_TEXT,
                        model=body.get("model", MODEL))
            return 200, side.message(), stream
        with self._lock:
            index = self._next_turn
            if index >= len(self.script):
                self._record(method, path, headers, body, "turn", None)
                # A 400 is final for the CLI (no retry): the run ends and the test sees the script overrun.
                return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": f"the stub's script has {index} turns"}}, False
            self._next_turn += 1
            turn = self.script[index]
            request = self._record(method, path, headers, body, "turn", index)
        if turn.before is not None:
            try:
                turn.before(request)
            except Exception:  # the test's own action failed: end the run at once (a 400), say why in `errors`
                self.errors.append(traceback.format_exc())
                return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": f"turn {index}'s before failed"}}, False
        return 200, turn.message(), stream

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any, kind: str,
                turn: int | None) -> RecordedRequest:
        request = RecordedRequest(method, path, headers, body, kind, turn)
        self.requests.append(request)
        return request


def _handler_for(stub: MessagesStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the API

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = raw.decode("utf-8", "replace")
            status, payload, stream = stub.answer(method, self.path, dict(self.headers), body)
            if stream:
                data = "".join(f"event: {name}\ndata: {json.dumps(event)}\n\n" for name, event in sse_events(payload))
                self._send(status, "text/event-stream", data.encode())
            else:
                self._send(status, "application/json", json.dumps(payload).encode())

        def _send(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", "req_stub")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # the test's output stays quiet
            pass

    return Handler
