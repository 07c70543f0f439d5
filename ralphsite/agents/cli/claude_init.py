"""`ralph claude init` and `ralph loop start`: a project set up for Claude Code, and a Ralph loop started in it.

`ralph claude init` writes, in the project (safe to run again: it replaces its own entries, mints no second token):

* `.claude/settings.local.json` (Claude Code keeps it out of git; so does the `.gitignore` line added): `env`
  RALPH_URL and RALPH_TOKEN (a project-scoped token minted for the project, with the caller's RALPH_TOKEN), a hook
  per event running `<this ralph> hook <Event>`, and `ralph-site` approved among `.mcp.json`'s servers;
* `.mcp.json`: the `ralph-site` MCP server (`<url>/mcp/`, http transport) whose `headersHelper` runs
  `<this ralph> claude mcp-headers`, which prints `Authorization: Token …` from the local settings: no secret in the
  committed file. (Claude Code 2.1.112 expands `${RALPH_TOKEN}` in `.mcp.json` headers from its process environment
  only, not from the settings' `env`, so a header written that way would need the token exported in the shell.)
* `.claude/commands/ralph-loop.md`: the `/ralph-loop` slash command, which runs `ralph loop start` in the session;
* `.ralph/.gitignore`: the hooks' local state (offsets, spool, the loop's local copy) stays out of git.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from ralphsite.agents.cli.client import Api, path_of
from ralphsite.agents.cli.hooks import STATE_DIR, HookState

# Every hook `ralph hook` records, with its timeout in seconds (Stop waits while the operator pauses the loop).
HOOK_TIMEOUTS = {"SessionStart": 30, "UserPromptSubmit": 30, "PostToolUse": 30, "PostToolUseFailure": 30,
                 "Stop": 3600, "SubagentStop": 30, "PreCompact": 30, "SessionEnd": 30}
HOOK_BUDGET_MARGIN = 5  # the hook answers this many seconds before Claude Code's timeout
MCP_SERVER = "ralph-site"
SLASH_COMMAND = Path(".claude") / "commands" / "ralph-loop.md"
LOCAL_FILES = (".claude/settings.local.json", f"{STATE_DIR.parts[0]}/")


def ralph_path() -> str:
    """The absolute path of this `ralph` (the console script running now), so hooks need no PATH."""
    return str(Path(sys.argv[0]).resolve()) if Path(sys.argv[0]).name == "ralph" else str(
        Path(sys.executable).parent / "ralph")


def _json_file(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError as error:
        raise ValueError(f"{path} is not JSON ({error}): fix or remove it, then run again") from error
    if not isinstance(value, dict):
        raise ValueError(f"{path} is not a JSON object")
    return value


def _json_save(path: Path, value: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


_OUR_HOOK = re.compile(r"ralph'? hook [A-Za-z]+")


def _ours(group: Any) -> bool:
    """A hook entry a `ralph claude init` wrote (whichever ralph it named: a moved venv's too)."""
    return isinstance(group, dict) and any(isinstance(hook, dict) and _OUR_HOOK.search(str(hook.get("command", "")))
                                           for hook in group.get("hooks") or [])


def hooks_merged(hooks: dict[str, Any], ralph: str) -> dict[str, Any]:
    """The settings' hooks with one `ralph hook <Event>` entry per event (a previous one of ours replaced)."""
    merged = dict(hooks)
    for event, timeout in HOOK_TIMEOUTS.items():
        groups = [group for group in merged.get(event) or [] if not _ours(group)]
        command = f"'{ralph}' hook {event} --budget {timeout - HOOK_BUDGET_MARGIN}"
        merged[event] = [*groups, {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]
    return merged


def _gitignore(project: Path) -> None:
    path = project / ".gitignore"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    missing = [line for line in LOCAL_FILES if line not in lines]
    if missing:
        path.write_text("\n".join([*lines, *missing]) + "\n", encoding="utf-8")
    (project / STATE_DIR.parts[0]).mkdir(exist_ok=True)
    (project / STATE_DIR.parts[0] / ".gitignore").write_text("*\n", encoding="utf-8")


def _slash_command(ralph: str) -> str:
    return (
        "---\n"
        "description: Start a Ralph loop recorded in Ralph Site (the Stop hook feeds the prompt back each turn)\n"
        'argument-hint: "PROMPT" [--max-iterations N] [--completion-promise TEXT]\n'
        f"allowed-tools: Bash('{ralph}' loop start:*)\n"
        "---\n\n"
        f"!`'{ralph}' loop start --claude-session \"${{CLAUDE_SESSION_ID}}\" $ARGUMENTS`\n\n"
        "Work on the task above now. At the end of each turn the loop gives you the same task again (or the "
        "operator's steering message) until the completion promise is met, the iteration limit is reached or the "
        "operator stops it. Say the promise, in its tags, only when it is entirely true.\n")


def claude_init(*, project: Path, url: str, api: Api, ralph: str) -> dict[str, Any]:
    """Set the project up; returns what was written (the token's secret never printed)."""
    local_path = project / ".claude" / "settings.local.json"
    local = _json_file(local_path)
    env = dict(local.get("env") or {})
    minted = False
    if not env.get("RALPH_TOKEN") or env.get("RALPH_URL") != url:
        token = api.call("POST", path_of("tokens"), {"scope": "project", "project_path": str(project),
                                                     "label": f"claude-code {project}"[:200]}).data
        env["RALPH_TOKEN"], minted = token["token"], True
    env["RALPH_URL"] = url
    approved = [name for name in local.get("enabledMcpjsonServers") or [] if name != MCP_SERVER]
    local |= {"env": env, "hooks": hooks_merged(local.get("hooks") or {}, ralph),
              "enabledMcpjsonServers": [*approved, MCP_SERVER]}
    _json_save(local_path, local)
    mcp_path = project / ".mcp.json"
    mcp = _json_file(mcp_path)
    mcp["mcpServers"] = {**(mcp.get("mcpServers") or {}), MCP_SERVER: {
        "type": "http", "url": url.rstrip("/") + "/mcp/", "headersHelper": f"'{ralph}' claude mcp-headers"}}
    _json_save(mcp_path, mcp)
    command_path = project / SLASH_COMMAND
    command_path.parent.mkdir(parents=True, exist_ok=True)
    command_path.write_text(_slash_command(ralph), encoding="utf-8")
    _gitignore(project)
    return {"project": str(project), "token_minted": minted, "settings": str(local_path), "mcp": str(mcp_path),
            "slash_command": str(command_path), "hooks": sorted(HOOK_TIMEOUTS)}


def loop_start(*, project: Path, api: Api, prompt: str, max_iterations: int | None, completion_promise: str | None,
               claude_session_id: str | None, pause_timeout: int | None) -> dict[str, Any]:
    """Register the loop on the server and keep its local copy (the Stop hook's offline decision)."""
    body = {"project_path": str(project), "prompt": prompt, "max_iterations": max_iterations,
            "completion_promise": completion_promise, "claude_session_id": claude_session_id or None,
            "pause_timeout_seconds": pause_timeout}
    started = api.call("POST", path_of("claude-code", "loops"), body).data
    HookState(project).loop_write({"id": started["id"], "prompt": prompt, "max_iterations": max_iterations,
                                   "completion_promise": completion_promise,
                                   "claude_session_id": started.get("claude_session_id"),
                                   "iteration": started["iteration"], "state": started["state"]})
    return started


def project_here() -> Path:
    return Path(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()).resolve()


def local_settings_env(start: Path) -> dict[str, str]:
    """RALPH_URL and RALPH_TOKEN from the nearest `.claude/settings.local.json` at or above `start` (what `ralph claude
    init` wrote), for the processes Claude Code starts without its settings' env (the MCP headers helper)."""
    for directory in (start, *start.parents):
        path = directory / ".claude" / "settings.local.json"
        if path.is_file():
            try:
                env = _json_file(path).get("env") or {}
            except ValueError:
                return {}
            return {name: str(env[name]) for name in ("RALPH_URL", "RALPH_TOKEN") if env.get(name)}
    return {}


def mcp_headers(project: Path) -> dict[str, str]:
    """The project's own token first (Claude Code starts the helper in the project, with little of its env)."""
    token = local_settings_env(project).get("RALPH_TOKEN") or os.environ.get("RALPH_TOKEN", "")
    return {"Authorization": f"Token {token}"} if token else {}
