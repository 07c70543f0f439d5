"""DevTeam's scripts/state.sh functions (seed 003 and DevTeam's own script) from `ralph shell-init bash`, run in
bash subprocesses against the real server (gunicorn), with no venv on PATH; and the session a `ralph` shell
started, found by other processes of the same project (issue #30 §6)."""

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ralphsite.agents.cli.client import Api, path_of
from tests.cli.conftest import RALPH
from tests.cli.test_shell_init import SYSTEM_PATH
from tests.live_gunicorn import LiveGunicorn

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")

PRELUDE = f'set -eu\neval "$({RALPH} shell-init bash)"\n'


def bash(server: LiveGunicorn, script: str, cwd: Path) -> list[str]:
    """The lines `script` prints, run after the eval line in `cwd`, as a hook or a loop's shell runs it."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("RALPH_", "DEVTEAM_"))}
    env.update({"RALPH_URL": server.url, "RALPH_TOKEN": server.token, "PATH": SYSTEM_PATH})
    ran = subprocess.run(["bash", "-c", PRELUDE + script], capture_output=True, text=True, timeout=120, cwd=cwd,
                         env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout.splitlines()


def api(server: LiveGunicorn) -> Api:
    return Api(url=server.url, token=server.token, timeout=30)


def session_of(server: LiveGunicorn, session_id: str) -> dict[str, Any]:
    return api(server).call("GET", path_of("sessions", session_id)).data


@pytest.mark.long
def test_the_functions_keep_devteams_names_arguments_and_defaults(gunicorn_server: LiveGunicorn,
                                                                   tmp_path: Path) -> None:
    printed = bash(gunicorn_server, r"""
    start_session "/devteam:implement --sprint 1" implement > /dev/null
    id=$(get_current_session_id)
    echo "running=$(is_session_running && echo yes)"
    echo "phase=$(get_current_phase) mode=$(get_execution_mode) iteration=$(get_current_iteration)"
    is_eco_mode || echo "eco=no"
    set_phase executing; set_current_agent backend-dev; set_current_model haiku
    increment_iteration; increment_iteration
    increment_failures; increment_failures; increment_failures
    echo "iteration=$(get_current_iteration) failures=$(get_consecutive_failures)"
    should_trip_circuit_breaker || echo "trip=no"
    set_state max_consecutive_failures 3
    should_trip_circuit_breaker && trip_circuit_breaker
    echo "breaker=$(get_state circuit_breaker_state)"
    reset_circuit_breaker
    echo "breaker=$(get_state circuit_breaker_state) failures=$(get_consecutive_failures)"
    record_escalation haiku "$(get_next_model haiku)" consecutive_failures backend-dev
    echo "model=$(get_current_model) previous=$(get_previous_model sonnet) top=$(get_next_model opus)"
    is_bug_council_active || echo "council=no"
    activate_bug_council "three failures in a row"
    is_bug_council_active && echo "council=yes"
    set_active_plan plan-7; set_active_sprint sprint-2
    echo "plan=$(get_state plan_id) sprint=$(get_state sprint_id)"
    set_kv_state notes '{"tried": ["a", "b"]}'
    echo "kv=$(get_kv_state notes)"
    delete_kv_state notes
    echo "kv=[$(get_kv_state notes)]"
    add_tokens 1000 500 15
    echo "dollars=$(get_total_cost_dollars) cents=$(get_state total_cost_cents)"
    is_max_iterations_reached || echo "max=no"
    set_state max_iterations 3
    is_max_iterations_reached && echo "max=yes"
    get_session_json | head -c 2; echo
    get_session_summary | head -c 2; echo
    abort_session
    echo "after=[$(get_current_session_id)] status=$(get_state status "$id") reason=$(get_state exit_reason "$id")"
    echo "id=$id"
    """, tmp_path)
    session_id = printed[-1].removeprefix("id=")
    assert printed[:-1] == [
        "running=yes",
        "phase=initializing mode=normal iteration=1",  # ours count from 1 (Ralph V2's), DevTeam's from 0
        "eco=no",
        "iteration=3 failures=3",
        "trip=no",  # 3 of the seed's default 5
        "breaker=open",
        "breaker=closed failures=0",
        "model=sonnet previous=haiku top=bug_council",
        "council=no",
        "council=yes",
        "plan=plan-7 sprint=sprint-2",
        'kv={"tried": ["a", "b"]}',
        "kv=[]",
        "dollars=0.1500 cents=15",
        "max=no",  # 3 of the seed's default 10
        "max=yes",
        "[{",
        "[{",
        "after=[] status=aborted reason=User aborted",
    ]
    session = session_of(gunicorn_server, session_id)
    assert {name: session[name] for name in (
        "command", "current_phase", "current_agent", "current_model", "plan_key", "sprint_key",
        "bug_council_activated", "bug_council_reason", "total_tokens_input", "total_tokens_output")} == {
        "command": "/devteam:implement --sprint 1", "current_phase": "executing", "current_agent": "backend-dev",
        "current_model": "sonnet", "plan_key": "plan-7", "sprint_key": "sprint-2", "bug_council_activated": True,
        "bug_council_reason": "three failures in a row", "total_tokens_input": 1000, "total_tokens_output": 500}
    [escalation] = api(gunicorn_server).call("GET", path_of("escalations"), query={"session": session_id}).data[
        "results"]
    assert {name: escalation[name] for name in ("from_model", "to_model", "reason", "agent", "iteration")} == {
        "from_model": "haiku", "to_model": "sonnet", "reason": "consecutive_failures", "agent": "backend-dev",
        "iteration": 3}
    assert api(gunicorn_server).call("GET", path_of("session-state"), query={"session": session_id}).data[
        "results"] == []


def test_other_processes_of_the_project_find_the_session_a_shell_started(gunicorn_server: LiveGunicorn,
                                                                          tmp_path: Path) -> None:
    project = tmp_path / "widgets"
    (project / ".git").mkdir(parents=True)  # a repository: its subdirectories are the same project
    (project / "src" / "hooks").mkdir(parents=True)
    # The loop's shell: the id is read in a subshell (no export reaches the shell), as seed 003 writes it.
    [session_id] = bash(gunicorn_server, 'SESSION_ID=$(start_session "/devteam:implement" implement)\n'
                                         'echo "$SESSION_ID"', project)
    assert (project / ".ralph" / "session").read_text() == f"{session_id}\n"
    # A hook script in a subdirectory, another process with nothing passed to it.
    assert bash(gunicorn_server, """
    set_phase quality_check
    increment_iteration
    get_current_session_id
    """, project / "src" / "hooks") == [session_id]
    # A plain `ralph` command of the project, too.
    hook = subprocess.run([str(RALPH), "event", "x-hook-fired", "--message", "PostToolUse"], cwd=project / "src",
                          capture_output=True, text=True, timeout=60,
                          env={"RALPH_URL": gunicorn_server.url, "RALPH_TOKEN": gunicorn_server.token,
                               "PATH": SYSTEM_PATH})
    assert hook.returncode == 0, hook.stderr
    session = session_of(gunicorn_server, session_id)
    assert (session["current_phase"], session["current_iteration"]) == ("quality_check", 2)
    events = api(gunicorn_server).call("GET", path_of("events"), query={"session": session_id,
                                                                       "type": "x-hook-fired"}).data["results"]
    assert [event["message"] for event in events] == ["PostToolUse"]

    # Several sessions in one project: the one started last is current; ending another leaves it current.
    [newer] = bash(gunicorn_server, 'start_session "/devteam:bug" bug', project)
    bash(gunicorn_server, f'end_session completed "superseded" "{session_id}"', project)
    assert bash(gunicorn_server, "get_current_session_id", project / "src") == [newer]
    # A nested project (its own .ralph/) has its own current session, and none until one starts there.
    (project / "vendor" / "lib" / ".ralph").mkdir(parents=True)
    assert bash(gunicorn_server, 'echo "[$(get_current_session_id)]"', project / "vendor" / "lib") == ["[]"]
    # Ending the current session forgets it for every process of the project.
    bash(gunicorn_server, "end_session", project)
    assert not (project / ".ralph" / "session").exists()
    assert session_of(gunicorn_server, newer)["status"] == "completed"
    assert session_of(gunicorn_server, session_id)["exit_reason"] == "superseded"


def test_increments_from_processes_running_at_once_are_all_counted(gunicorn_server: LiveGunicorn,
                                                                     tmp_path: Path) -> None:
    """Six shells of the same project, each counting three failures and three iterations, released together."""
    [session_id] = bash(gunicorn_server, 'start_session "/devteam:implement" implement', tmp_path)
    gate = tmp_path / "go"
    script = PRELUDE + f"""
    while [ ! -e {gate} ]; do sleep 0.01; done
    for _ in 1 2 3; do increment_failures; increment_iteration; done
    """
    env = {name: value for name, value in os.environ.items() if not name.startswith(("RALPH_", "DEVTEAM_"))}
    env.update({"RALPH_URL": gunicorn_server.url, "RALPH_TOKEN": gunicorn_server.token, "PATH": SYSTEM_PATH})
    shells = [subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True) for _ in range(6)]
    gate.touch()
    outputs = [shell.communicate(timeout=120)[0] for shell in shells]
    assert [shell.returncode for shell in shells] == [0] * 6, outputs
    session = session_of(gunicorn_server, session_id)
    assert (session["consecutive_failures"], session["current_iteration"]) == (18, 1 + 18)
    iterations = api(gunicorn_server).call("GET", path_of("iterations"), query={"session": session_id,
                                                                                "page_size": 100}).data["results"]
    assert sorted(row["number"] for row in iterations) == list(range(1, 20))


def test_get_state_with_no_session_says_so_in_one_line(gunicorn_server: LiveGunicorn, tmp_path: Path) -> None:
    """No session started, named or found: each reader fails with ralph's one-line reason, never a traceback."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("RALPH_", "DEVTEAM_"))}
    env.update({"RALPH_URL": gunicorn_server.url, "RALPH_TOKEN": gunicorn_server.token, "PATH": SYSTEM_PATH})
    for call in ("get_state current_phase", "get_state notes", "get_current_iteration"):
        ran = subprocess.run(["bash", "-c", f'eval "$({RALPH} shell-init bash)"\n{call}'], capture_output=True,
                             text=True, timeout=60, cwd=tmp_path, env=env)
        assert (ran.returncode, ran.stdout) == (1, ""), (call, ran.stdout, ran.stderr)
        assert ran.stderr.splitlines() == [
            "ralph: usage: no session: pass --session, set RALPH_SESSION (an id or a key) or start one in this "
            "project (ralph session start)"], call
