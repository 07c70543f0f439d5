"""Claude Code's transcript (the session's JSONL file) read into what Ralph Site records: messages, tool results
and each API call's usage. Pure and tolerant: an entry of a type it does not know, or of a shape it does not
expect, is skipped, never an error.

The shape read: each line an object with `type` (`user`, `assistant`; others such as `summary` or
`file-history-snapshot` are skipped), `uuid`, `timestamp`, and `message` {`role`, `content`: a string or a list of
blocks `text` / `tool_use` {id, name, input} / `tool_result` {tool_use_id, content, is_error} / `thinking`}; an
assistant message also has `id` (the API message id: the usage request id), `model` and `usage`
{input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens}. Claude Code (2.1.112) writes
one assistant message as several entries (one per content block), each with the same `message.id` and usage (an
early one may still hold the stream's first output count: the largest is kept). A user entry with `isMeta` is a
message the API received too ("Stop hook feedback:\n<reason>", the loop's next prompt): recorded as a user message.
Entries without a `uuid` (`queue-operation`, `last-prompt`), `attachment` entries and the assistant entries Claude
Code writes itself (model `<synthetic>`, e.g. "No response requested." on a resume) are skipped.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

SYNTHETIC_MODEL = "<synthetic>"
TOOL_RESULT_MAX_CHARS = 20_000  # a tool's output kept with its call (files read whole can be huge)
_USAGE_FIELDS = {  # transcript usage field → TokenUsage field
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_input_tokens": "cached_read_tokens",
    "cache_creation_input_tokens": "cached_write_tokens",
}


@dataclass(frozen=True)
class TranscriptMessage:
    uuid: str
    role: str  # user or assistant
    content: str
    tool_calls: list[dict[str, Any]]
    timestamp: datetime | None


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    content: str
    is_error: bool


@dataclass(frozen=True)
class CallUsage:
    request_id: str
    model: str
    tokens: dict[str, int]  # in TokenUsage's field names
    timestamp: datetime | None


@dataclass
class TranscriptBatch:
    messages: list[TranscriptMessage] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    usages: dict[str, CallUsage] = field(default_factory=dict)  # by request id, in order of first appearance

    @property
    def last_assistant_text(self) -> str:
        return next((m.content for m in reversed(self.messages) if m.role == "assistant" and m.content), "")


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _text_of(content: Any) -> str:
    """A tool result's or message's text: a string, or the text of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block["text"] for block in content
                         if isinstance(block, dict) and isinstance(block.get("text"), str))
    return ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _usage(message: dict[str, Any], timestamp: datetime | None) -> CallUsage | None:
    request_id, usage = message.get("id"), message.get("usage")
    if not isinstance(request_id, str) or not request_id or not isinstance(usage, dict):
        return None
    tokens = {name: value for source, name in _USAGE_FIELDS.items()
              if isinstance(value := usage.get(source), int) and not isinstance(value, bool) and value >= 0}
    model = message.get("model") if isinstance(message.get("model"), str) else ""
    return CallUsage(request_id=request_id[:200], model=model[:100] or "unknown", tokens=tokens, timestamp=timestamp)


def _merged(first: CallUsage, later: CallUsage) -> CallUsage:
    """Entries of one API message repeat its usage; a later one may carry more output (streamed): the largest."""
    names = first.tokens.keys() | later.tokens.keys()
    return CallUsage(request_id=first.request_id, model=first.model, timestamp=first.timestamp,
                     tokens={name: max(first.tokens.get(name, 0), later.tokens.get(name, 0)) for name in names})


def transcript_read(entries: list[Any]) -> TranscriptBatch:
    batch = TranscriptBatch()
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
            continue
        message, uuid = entry.get("message"), entry.get("uuid")
        if not isinstance(message, dict) or not isinstance(uuid, str) or not uuid:
            continue
        timestamp = _timestamp(entry.get("timestamp"))
        blocks = _blocks(message.get("content"))
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))
        if entry["type"] == "assistant" and message.get("model") == SYNTHETIC_MODEL:
            continue  # written by Claude Code itself (e.g. on --resume after its turn cap): no API call, no message
        if entry["type"] == "assistant":
            calls = [{"id": str(b.get("id", ""))[:200], "name": str(b.get("name", ""))[:200],
                      "arguments": b.get("input") if isinstance(b.get("input"), dict) else {}, "status": "pending"}
                     for b in blocks if b.get("type") == "tool_use" and b.get("id")]
            if text or calls:
                batch.messages.append(TranscriptMessage(uuid[:100], "assistant", text, calls, timestamp))
            usage = _usage(message, timestamp)
            if usage is not None:
                known = batch.usages.get(usage.request_id)
                batch.usages[usage.request_id] = usage if known is None else _merged(known, usage)
            continue
        batch.tool_results += [
            ToolResult(tool_use_id=str(b["tool_use_id"])[:200], is_error=b.get("is_error") is True,
                       content=_text_of(b.get("content"))[:TOOL_RESULT_MAX_CHARS])
            for b in blocks if b.get("type") == "tool_result" and b.get("tool_use_id")]
        if text:
            batch.messages.append(TranscriptMessage(uuid[:100], "user", text, [], timestamp))
    return batch
