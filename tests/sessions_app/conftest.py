from typing import Any

import pytest

from sessions_app.ledger import ledger


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every audit event sessions_app appended to the ledger during the test, as its keyword arguments."""
    received: list[dict[str, Any]] = []
    installed = ledger()
    append = installed.event_append

    def record(*, session_id: str, event_type: str, message: str, data: dict[str, Any], task_key: str = "",
               agent: str = "") -> None:
        event = {"session_id": session_id, "event_type": event_type, "task_key": task_key, "agent": agent,
                 "message": message, "data": data}
        append(**event)
        received.append(event)

    monkeypatch.setattr(installed, "event_append", record)
    return received
