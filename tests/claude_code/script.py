"""Building a stub script for a Ralph loop, and reading back what Ralph Site recorded of it over the API."""

from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from itertools import count
from typing import Any

from tests.claude_code.messages_stub import MODEL, RecordedRequest, ToolUse, Turn, Usage
from tests.e2e.client import Agent

API = "/api/v1"
_tool_ids = count(1)


def bash(command: str) -> ToolUse:
    return ToolUse(f"toolu_{next(_tool_ids):04d}", "Bash", {"command": command, "description": "scripted"})


def tool(name: str, **arguments: Any) -> ToolUse:
    return ToolUse(f"toolu_{next(_tool_ids):04d}", name, arguments)


def promise(text: str) -> str:
    return f"<promise>{text}</promise>"


def stop_feedback(prompt: str) -> str:
    """The user message the CLI sends after a Stop hook blocked with `prompt`."""
    return f"Stop hook feedback:\n{prompt}"


@dataclass(frozen=True)
class Iteration:
    """One turn of the loop: the assistant messages it takes (the last one ends the turn)."""

    turns: tuple[Turn, ...]

    @property
    def message_ids(self) -> list[str]:
        return [turn.message_id for turn in self.turns]


def turn(message_id: str, usage: Usage, text: str = "", *tool_uses: ToolUse, before=None) -> Turn:
    return Turn(message_id=message_id, usage=usage, text=text, tool_uses=tool_uses, before=before)


def script_of(iterations: list[Iteration]) -> list[Turn]:
    return [turn for iteration in iterations for turn in iteration.turns]


def first_requests_of_iterations(requests: list[RecordedRequest], iterations: list[Iteration]) -> list[RecordedRequest]:
    """The request that opened each iteration (its last user message is what the iteration was told)."""
    firsts, index = [], 0
    for iteration in iterations:
        firsts.append(requests[index])
        index += len(iteration.turns)
    return firsts


# -- what Ralph Site recorded -------------------------------------------------------------------------

def every(operator: Agent, resource: str, **params: Any) -> list[dict[str, Any]]:
    return operator.all_pages(f"{API}/{resource}/", **params)


@dataclass(frozen=True)
class Recorded:
    session: dict[str, Any]
    loop_runs: list[dict[str, Any]]
    iterations: list[dict[str, Any]]
    usage: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    observations: list[dict[str, Any]]

    def usage_by_request(self) -> dict[str, dict[str, Any]]:
        by_request = {row["request_id"]: row for row in self.usage}
        counts = Counter(row["request_id"] for row in self.usage)
        assert len(by_request) == len(self.usage), f"a request counted twice: {counts}"
        return by_request


def recorded(operator: Agent, claude_session: str) -> Recorded:
    session = operator.ok("GET", f"{API}/sessions/{claude_session}/")
    [chat] = every(operator, "chats", session=session["id"])
    [run] = every(operator, "runs", chat=chat["id"])
    return Recorded(
        session=session,
        loop_runs=every(operator, "loop-runs", session=session["id"]),
        iterations=sorted(every(operator, "iterations", session=session["id"]), key=lambda row: row["number"]),
        usage=every(operator, "token-usage", session=session["id"]),
        messages=sorted(every(operator, "messages", run=run["id"]), key=lambda row: row["sequence_number"]),
        observations=every(operator, "observations", session=session["id"]),
    )


def price_list(operator: Agent, model: str = MODEL) -> dict[str, Decimal]:
    """The shipped price of `model` (USD per million tokens), by TokenUsage token field."""
    [price] = every(operator, "model-prices", model=model)
    return {"input_tokens": Decimal(price["input_per_mtok"]), "output_tokens": Decimal(price["output_per_mtok"]),
            "cached_read_tokens": Decimal(price["cached_read_per_mtok"]),
            "cached_write_tokens": Decimal(price["cached_write_per_mtok"])}


def usage_fields(usage: Usage) -> dict[str, int]:
    """A scripted usage in TokenUsage's field names."""
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cached_read_tokens": usage.cache_read_input_tokens,
            "cached_write_tokens": usage.cache_creation_input_tokens}


def cost_of(usage: Usage, prices: dict[str, Decimal]) -> Decimal:
    """The cost the price list gives a call, to the micro-dollar (the ledger's precision)."""
    total = sum((count * prices[name] for name, count in usage_fields(usage).items()), Decimal(0))
    return (total / 1_000_000).quantize(Decimal("0.000001"))
