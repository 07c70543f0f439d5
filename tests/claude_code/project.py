"""A temporary project set up for Claude Code by `ralph claude init`, and the CLI run in it against the stub.

The test talks to Ralph Site as an operator would: over the REST API of the live server, with the admin's
token (tests/e2e/client.py's `Agent`), and runs `ralph` and `claude` as a user would, in the project.
"""

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.claude_code.cli import MODEL, ClaudeRun, headless_env, run_claude
from tests.claude_code.messages_stub import MessagesStub
from tests.e2e.client import Agent

RALPH = Path(sys.executable).parent / "ralph"
MCP_SERVER = "ralph-site"  # the name `ralph claude init` gives the server in .mcp.json
# The tools a headless run may use without asking: Bash and every Ralph Site MCP tool.
ALLOWED_TOOLS = ("Bash", f"mcp__{MCP_SERVER}")


def mcp_tool(name: str) -> str:
    """An MCP tool as Claude Code names it for the model."""
    return f"mcp__{MCP_SERVER}__{name}"


@dataclass
class ClaudeProject:
    root: Path  # the project (Claude Code's cwd)
    home: Path  # the CLI's HOME
    server_url: str
    admin_token: str
    stub: MessagesStub

    def ralph(self, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        """`ralph` run in the project as its user does (RALPH_URL and RALPH_TOKEN from the environment)."""
        env = {name: value for name, value in os.environ.items() if not name.startswith("RALPH_")}
        env |= {"RALPH_URL": self.server_url, "RALPH_TOKEN": token or self.admin_token}
        done = subprocess.run([str(RALPH), *args], cwd=self.root, env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, f"ralph {' '.join(args)} → {done.returncode}:\n{done.stdout}\n{done.stderr}"
        return done

    def init(self) -> None:
        self.ralph("claude", "init", "--url", self.server_url)

    def settings_local(self) -> dict[str, Any]:
        return json.loads((self.root / ".claude" / "settings.local.json").read_text())

    def project_token(self) -> str:
        """The token `ralph claude init` minted and wrote into the local (uncommitted) settings."""
        return self.settings_local()["env"]["RALPH_TOKEN"]

    def claude(self, *args: str) -> ClaudeRun:
        env = headless_env(stub_url=self.stub.url, home=self.home)
        run = run_claude(args, cwd=self.root, env=env)
        assert not self.stub.errors, "a scripted turn's action failed:\n" + "\n".join(self.stub.errors)
        return run

    def loop(self, prompt: str, *, session_id: str | None = None) -> tuple[str, ClaudeRun]:
        """`claude -p PROMPT` headless in the project, as Claude session `session_id` (a new one by default):
        the session id and the run."""
        session_id = session_id or str(uuid.uuid4())
        run = self.claude("-p", prompt, "--session-id", session_id, "--output-format", "json", "--model", MODEL,
                          "--allowed-tools", *ALLOWED_TOOLS)
        return session_id, run

    def operator(self) -> Agent:
        """A new API client with the admin's token (one per thread: the stub calls back from its own)."""
        return Agent(self.server_url, self.admin_token)


def new_project(tmp_path: Path, *, server_url: str, admin_token: str, stub: MessagesStub) -> ClaudeProject:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    project = ClaudeProject(root=root.resolve(), home=home, server_url=server_url, admin_token=admin_token,
                            stub=stub)
    project.init()
    return project
