"""The `ralph` console script run as a subprocess against the live test server."""

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ralphsite.tokens.services import MintedToken

RALPH = Path(sys.executable).parent / "ralph"


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str


RalphRunner = Callable[..., Run]


@pytest.fixture
def ralph_env(live_server, token: MintedToken) -> dict[str, str]:
    """The environment a loop runs `ralph` in: the server, a token, no session yet."""
    assert RALPH.exists(), f"{RALPH} is missing: `make install-dev` installs the console script"
    env = {name: value for name, value in os.environ.items() if not name.startswith("RALPH_")}
    return {**env, "RALPH_URL": live_server.url, "RALPH_TOKEN": token.secret}


@pytest.fixture
def ralph(ralph_env: dict[str, str], tmp_path: Path) -> RalphRunner:
    """`ralph(*args, input=…, **env)`: the console script's exit status and output, run in a project of its own
    (a fresh directory: `ralph session start` names the project's current session in its `.ralph/`)."""

    def run(*args: str, input: str | None = None, **env: Any) -> Run:
        completed = subprocess.run([str(RALPH), *args], input=input, capture_output=True, text=True, timeout=60,
                                   cwd=tmp_path, env={**ralph_env, **{name: str(value) for name, value in env.items()}})
        return Run(completed.returncode, completed.stdout, completed.stderr)

    return run
