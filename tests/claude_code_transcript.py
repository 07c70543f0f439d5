"""Claude Code transcript entries and hook payloads as the CLI writes them, for the hook tests."""

import uuid
from typing import Any

PROJECT = "/home/dev/shop"
MODEL = "claude-sonnet-4-5-20250929"


def user_entry(text: str, *, parent: str | None = None) -> dict[str, Any]:
    return {"type": "user", "uuid": str(uuid.uuid4()), "parentUuid": parent, "timestamp": "2026-11-28T05:00:00.000Z",
            "message": {"role": "user", "content": text}}


def assistant_entries(message_id: str, *blocks: dict[str, Any], usage: dict[str, int] | None = None,
                      model: str = MODEL) -> list[dict[str, Any]]:
    """One API message as Claude Code writes it: one entry per content block, each with the message's id and usage."""
    usage = usage or {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 1000,
                      "cache_read_input_tokens": 5000}
    return [{"type": "assistant", "uuid": str(uuid.uuid4()), "timestamp": "2026-11-28T05:00:01.000Z",
             "message": {"id": message_id, "role": "assistant", "model": model, "content": [block], "usage": usage}}
            for block in blocks]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


def tool_result_entry(tool_id: str, output: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"type": "user", "uuid": str(uuid.uuid4()), "timestamp": "2026-11-28T05:00:02.000Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output,
                                                     "is_error": is_error}]}}


def payload(event: str, session_id: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": session_id, "transcript_path": f"/tmp/{session_id}.jsonl", "cwd": PROJECT,
            "hook_event_name": event, **fields}
