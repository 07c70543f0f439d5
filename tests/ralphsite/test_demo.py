"""`make demo` drives its loop to the end against the real server, as a newcomer runs it: the module
as a process, over HTTP, with the admin's token (issue #18 §8). It broke silently once already when
claim-task's "nothing to claim" became a 409 and claims became fenced, because nothing ran it."""

import subprocess
import sys

import pytest

from ralphsite.agents.demo import Api
from tests.live_gunicorn import LiveGunicorn


@pytest.mark.smoke
def test_it_runs_the_demo_loop_to_completion(gunicorn_server: LiveGunicorn) -> None:
    done = subprocess.run([sys.executable, "-m", "ralphsite.agents.demo", "--url", gunicorn_server.url,
                           "--token", gunicorn_server.token, "--pace", "0"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "exec-b: claimed" in done.stdout  # two executors work one wave side by side

    api = Api(gunicorn_server.url, gunicorn_server.token)
    session_key = done.stdout.split()[1]
    [session] = api.call("GET", f"/sessions/?key={session_key}")["results"]
    assert (session["status"], session["exit_reason"]) == ("completed", "all_tasks_done")
    tasks = api.call("GET", f"/tasks/?session={session['id']}&page_size=100")["results"]
    assert sorted((task["key"], task["status"]) for task in tasks) == [
        (f"task-{n}", "completed") for n in range(1, 7)]
    retried = api.call("GET", f"/sessions/{session['id']}/tasks/task-3/")
    assert retried["iteration_count"] == 2  # failed its first review, claimed again
    questions = {question["key"]: question["status"]
                 for question in api.call("GET", f"/questions/?session={session['id']}")["results"]}
    assert questions == {"Q-TECH-001": "answered", "Q-REQ-002": "unanswered"}  # left for the console
    [cost] = api.call("GET", f"/stats/session-cost/?session={session['id']}")["rows"]
    assert cost["api_calls"] > 0
    assert cost["total_input_tokens"] == session["total_tokens_input"] > 0  # one book of usage
    # One call, one row: a report names the call its usage was booked under, which is not booked again.
    usage = api.call("GET", f"/token-usage/?session={session['id']}&page_size=500")["results"]
    attempts = api.call("GET", f"/task-attempts/?session={session['id']}&page_size=100")["results"]
    assert attempts and not [row for row in usage if row["source"] == "attempt"]
    assert sorted(attempt["request_id"] for attempt in attempts) == sorted(
        row["request_id"] for row in usage if row["operation"] == "report")
