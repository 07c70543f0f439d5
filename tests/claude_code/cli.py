"""The real Claude Code CLI, run headless against the Messages stub (tests/claude_code/messages_stub.py).

The CLI is the one .ci/claude-code/package-lock.json pins, installed by `make claude-code` (CI always
installs it; `make test` does when npm is there). Without it the tests skip, saying why; under CI (CI=true)
a missing CLI fails them instead.

What it takes to run it headless, with no network and no login (found in the pinned version):
* `ANTHROPIC_BASE_URL` = the stub, `ANTHROPIC_API_KEY` = any string: an API key needs no login, and `-p`
  (print mode) skips the onboarding and the workspace-trust dialog.
* `HOME` and `CLAUDE_CONFIG_DIR` in the test's temp dir: the user's own settings, sessions and credentials
  are never read, and the transcripts land under `$CLAUDE_CONFIG_DIR/projects/<cwd with / as ->/`.
* `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` (telemetry, error reporting, the auto-updater and the other
  background calls), with `DISABLE_AUTOUPDATER`, `DISABLE_TELEMETRY` and `DISABLE_ERROR_REPORTING` spelled
  out too.
* Permissions: `--dangerously-skip-permissions` (and `--permission-mode bypassPermissions`) refuse to run as
  root unless IS_SANDBOX=1, so the tests name the tools they allow instead (`--allowed-tools Bash mcp__…`);
  a tool that is not allowed is refused in print mode, never asked about.
* `--output-format json`: one JSON result on stdout (`session_id`, `num_turns`, `is_error`, `result`).
"""

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_DIR = Path(__file__).resolve().parents[2]
CLAUDE_BIN = REPO_DIR / ".ci" / "claude-code" / "node_modules" / ".bin" / "claude"
MODEL = "claude-sonnet-4-5"
RUN_TIMEOUT_SECONDS = 180  # a bound, not a timing assertion: a hung CLI fails the test instead of the run


def claude_bin() -> Path:
    """The pinned CLI, or a skip (a failure under CI) saying how to install it."""
    if CLAUDE_BIN.exists():
        return CLAUDE_BIN
    message = f"the Claude Code CLI is not installed ({CLAUDE_BIN}): `make claude-code` installs it (needs npm)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def headless_env(*, stub_url: str, home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The CLI's environment: nothing of the user's (no ANTHROPIC_*, CLAUDE_* or RALPH_* passes through)."""
    inherited = {name: value for name, value in os.environ.items()
                 if not name.startswith(("ANTHROPIC_", "CLAUDE_", "RALPH_"))}
    return {
        **inherited,
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": stub_url,
        "ANTHROPIC_API_KEY": "sk-ant-stub-not-a-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        **(extra or {}),
    }


@dataclass(frozen=True)
class ClaudeRun:
    status: int
    stdout: str
    stderr: str

    def result(self) -> dict[str, Any]:
        """The `--output-format json` result object."""
        assert self.stdout.strip(), f"no output (exit {self.status}); stderr:\n{self.stderr}"
        return json.loads(self.stdout)


def run_claude(args: Sequence[str], *, cwd: Path, env: dict[str, str]) -> ClaudeRun:
    done = subprocess.run([str(claude_bin()), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_SECONDS)
    return ClaudeRun(done.returncode, done.stdout, done.stderr)


def transcripts(home: Path) -> list[Path]:
    return sorted((home / ".claude" / "projects").rglob("*.jsonl"))
