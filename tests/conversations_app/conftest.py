from collections.abc import Callable
from typing import Any

import pytest

from conversations_app import services
from conversations_app.models import Chat, Message, Run
from sessions_app.models import Session


@pytest.fixture
def make_chat(db) -> Callable[..., Chat]:
    def make(**data: Any) -> Chat:
        return services.chat_create(data={"title": "a chat", **data})
    return make


@pytest.fixture
def make_run(make_chat) -> Callable[..., Run]:
    def make(chat: Chat | None = None, **data: Any) -> Run:
        return services.run_create(data={"chat_id": (chat or make_chat()).pk, **data})
    return make


@pytest.fixture
def append(db) -> Callable[..., list[Message]]:
    def add(run: Run, *contents: str, role: str = "user") -> list[Message]:
        return services.message_append(run_id=run.pk, items=[{"role": role, "content": c} for c in contents])
    return add


@pytest.fixture
def session(db) -> Session:
    return Session.objects.create(key="conv-session", user_request="talk")

