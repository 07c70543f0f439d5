"""End-to-end fixtures: the real server (`live_server`) and agents talking to it over HTTP."""

from collections.abc import Callable, Iterator

import pytest

from ralphsite.tokens.services import MintedToken
from tests.e2e.client import Agent


@pytest.fixture
def new_agent(live_server, token: MintedToken) -> Iterator[Callable[[], Agent]]:
    agents: list[Agent] = []

    def make() -> Agent:
        agent = Agent(live_server.url, token.secret)
        agents.append(agent)
        return agent

    yield make
    for agent in agents:
        agent.close()


@pytest.fixture
def agent(new_agent: Callable[[], Agent]) -> Agent:
    return new_agent()
