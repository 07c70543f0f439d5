"""`eval "$(.venv/bin/ralph shell-init bash)"`: seed 003's scripts/state.sh example runs unchanged in bash, with
no venv on PATH (the functions call the `ralph` that printed them)."""

import shutil
import subprocess
from decimal import Decimal

import pytest

from ledger_app.models import TokenUsage
from sessions_app.models import Session, SessionStateEntry
from tests.cli.conftest import RALPH

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")]

# Seed 003, "Helper Scripts / Bash (scripts/state.sh)", with `source scripts/state.sh` replaced by
# the eval line, and what it produced printed for the test to read.
SEED_EXAMPLE = rf"""
set -eu
! command -v ralph  # not on PATH
eval "$({RALPH} shell-init bash)"

# Start session
SESSION_ID=$(start_session "/devteam:implement" "implement")

# Get/set state
set_state "current_phase" "executing"
phase=$(get_state "current_phase")

# Track tokens
add_tokens 1000 500 15  # in, out, cost_cents

# End session
end_session "completed" "All tasks done"

echo "session=$SESSION_ID"
echo "phase=$phase"
"""


# A PATH without the venv's bin directory.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def _bash(script: str, env: dict[str, str], project) -> subprocess.CompletedProcess[str]:
    """`script` in bash, in the project's directory, without the venv on PATH."""
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, cwd=project,
                          env={**env, "PATH": SYSTEM_PATH})


def test_the_seed_example_runs_unchanged(ralph_env: dict[str, str], tmp_path) -> None:
    ran = _bash(SEED_EXAMPLE, ralph_env, tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == ""
    session = Session.objects.get()
    assert ran.stdout.splitlines() == [f"session={session.id}", "phase=executing"]
    assert (session.command, session.command_type) == ("/devteam:implement", "implement")
    assert (session.status, session.exit_reason) == ("completed", "All tasks done")
    # DevTeam's current_phase is a column of its sessions row: it is the session's.
    assert (session.current_phase, session.execution_mode) == ("executing", "normal")
    assert not SessionStateEntry.objects.filter(session=session).exists()
    usage = TokenUsage.objects.get(session=session)
    assert (usage.input_tokens, usage.output_tokens, usage.cost_usd) == (1000, 500, Decimal("0.15"))
    assert (session.total_tokens_input, session.total_tokens_output, session.total_cost_cents) == (1000, 500, 15)
    assert list((tmp_path / ".ralph").iterdir()) == []  # end_session removed the project's current session


def test_functions_follow_devteam_for_unset_keys_explicit_sessions_and_failures(
        ralph_env: dict[str, str], tmp_path) -> None:
    other = Session.objects.create(command="other", command_type="plan")
    script = rf"""
    eval "$({RALPH} shell-init bash)"
    start_session "/devteam:plan" "plan" > /dev/null
    value=$(get_state "never_set"); echo "unset=[$value] status=$?"
    set_state "owner" '{{"name": "planner"}}'
    echo "owner=$(get_state owner)"
    set_state "phase" "research" "{other.id}"
    echo "other=$(get_state phase {other.id})"
    start_session "/devteam:plan" "not-a-type" 2> /dev/null; echo "bad_start=$?"
    end_session "finished" 2> /dev/null; echo "bad_end=$?"
    end_session "aborted" "user_abort"; echo "end=$?"
    """
    ran = _bash(script, ralph_env, tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["unset=[] status=0", 'owner={"name": "planner"}', "other=research",
                                       "bad_start=2", "bad_end=2", "end=0"]
    mine = Session.objects.exclude(pk=other.pk).get()
    assert (mine.status, mine.exit_reason) == ("aborted", "user_abort")
    assert SessionStateEntry.objects.get(session=mine).value == {"name": "planner"}
    assert SessionStateEntry.objects.get(session=other).value == "research"


def test_shell_init_names_only_shells_it_supports(ralph) -> None:
    assert ralph("shell-init", "fish").status == 1
    printed = ralph("shell-init", "bash").stdout
    assert all(f"{name}()" in printed for name in ("start_session", "set_state", "get_state", "add_tokens",
                                                    "end_session"))
    assert f"_RALPH={RALPH}\n" in printed  # the absolute path of the ralph that printed them
