"""`ralph claude init` in a fresh project, then the real CLI's `claude mcp list`: the Ralph Site server is
connected with the project token the init wrote into the local settings, and with no other."""

import json

import pytest

from tests.claude_code.project import MCP_SERVER, ClaudeProject
from tests.live_gunicorn import LiveGunicorn

pytestmark = pytest.mark.smoke


def _mcp_line(project: ClaudeProject) -> str:
    run = project.claude("mcp", "list")
    assert run.status == 0, run.stderr
    [line] = [line for line in run.stdout.splitlines() if line.startswith(f"{MCP_SERVER}:")]
    return line


def test_it_connects_with_the_token_init_wrote(project: ClaudeProject, gunicorn_server: LiveGunicorn) -> None:
    token = project.project_token()
    assert token and token != gunicorn_server.token
    # The committed file (.mcp.json) never holds the token; the local settings, which git ignores, do.
    assert token not in (project.root / ".mcp.json").read_text()
    assert ".claude/settings.local.json" in (project.root / ".gitignore").read_text().splitlines()

    assert _mcp_line(project) == f"{MCP_SERVER}: {gunicorn_server.url}/mcp/ (HTTP) - ✓ Connected"


def test_it_does_not_connect_with_another_token(project: ClaudeProject) -> None:
    settings_path = project.root / ".claude" / "settings.local.json"
    settings = project.settings_local()
    settings["env"]["RALPH_TOKEN"] = "not-a-token"
    settings_path.write_text(json.dumps(settings))

    line = _mcp_line(project)
    assert "✓ Connected" not in line, line
