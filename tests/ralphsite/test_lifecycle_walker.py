"""The lifecycle walker (issue #27 §1): every allowed and every refused change of each declared lifecycle,
read from its table, through every door that exposes the verb. A change the table allows happens; any
other is refused (409 `invalid_transition` naming the allowed next values where the verb is a status
change) and changes nothing."""

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from ralphsite.core.lifecycles import Lifecycle
from ralphsite.core.paths import BASE_DIR
from sessions_app.models import (
    ATTEMPT_STATUS_LIFECYCLE,
    ATTEMPT_VERDICT_LIFECYCLE,
    QUESTION_STATUS_LIFECYCLE,
    SESSION_STATE_LIFECYCLE,
    SESSION_STATUS_LIFECYCLE,
    SIGNAL_LIFECYCLE,
    TASK_STATUS_LIFECYCLE,
    OrchestratorState,
    Question,
    Session,
    SessionStatus,
    Signal,
    SignalStage,
    Task,
    TaskAttempt,
    TaskStatus,
    signal_stage,
)
from tests.cli.conftest import RALPH, ralph_env  # noqa: F401 (the CLI tests' environment fixture)
from tests.mcp.conftest import mcp_agent
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)

HOLDER, CLAIM = "exec-1", 7


def every_pair(lifecycle: Lifecycle) -> Iterator[tuple[str, str]]:
    for current in lifecycle.moves:
        for new in lifecycle.moves:
            if new != current:
                yield current, new


@dataclass
class Outcome:
    """What a door answered: done, or refused with a code (and the allowed next values when it names them)."""

    done: bool
    code: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def from_response(response: Any) -> Outcome:
    if response.status_code < 300:
        return Outcome(True)
    body = response.json()
    return Outcome(False, body["code"], body.get("details") or {})


def task_in(status: str) -> Task:
    """A task of a fresh session in `status`; in progress means under HOLDER's live claim."""
    session = make_session()
    held = status == TaskStatus.IN_PROGRESS
    return make_task(session, "task-1", status=status, claim=CLAIM if held else 0,
                     claimed_by=HOLDER if held else "", assigned_agent=HOLDER if held else "",
                     lease_expires_at=timezone.now() + timedelta(hours=1) if held else None)


def claim_for(task: Task) -> dict[str, Any]:
    return {"claim": CLAIM} if task.status == TaskStatus.IN_PROGRESS else {}


# -- the doors of the task status: each moves a task with its own verbs ----------------------------------------


class RestDoor:
    name = "rest"

    def __init__(self, api: APIClient) -> None:
        self.api = api

    def move(self, task: Task, status: str) -> Outcome:
        if status == TaskStatus.IN_PROGRESS:  # only claim-task puts a task in progress
            return from_response(self.api.post(f"/api/v1/sessions/{task.session_id}/claim-task/",
                                               {"agent": "exec-2"}, format="json"))
        return from_response(self.api.post(f"/api/v1/tasks/{task.pk}/status/",
                                           {"status": status, "agent": "orchestrator", **claim_for(task)},
                                           format="json"))


class McpDoor:
    name = "mcp"

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def move(self, task: Task, status: str) -> Outcome:
        if status == TaskStatus.IN_PROGRESS:
            answer = self.agent.ok("claim_task", session=task.session_id, agent="exec-2")
            return Outcome(answer["task"] is not None, answer.get("reason") or "")
        is_error, payload = self.agent.result("update_task_status", session=task.session_id, task=task.key,
                                              status=status, agent="orchestrator", **claim_for(task))
        return Outcome(False, payload["code"], payload.get("details") or {}) if is_error else Outcome(True)


class CliDoor:
    name = "cli"

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def move(self, task: Task, status: str) -> Outcome:
        if status == TaskStatus.IN_PROGRESS:
            args = ["task", "claim", "--agent", "exec-2"]
        else:
            args = ["task", "status", task.key, status, "--agent", "orchestrator",
                    *(["--claim", str(CLAIM)] if task.status == TaskStatus.IN_PROGRESS else [])]
        run = subprocess.run([str(RALPH), "--json", "--session", task.session_id, *args], capture_output=True,
                             text=True, timeout=60, env=self.env)
        if run.returncode == 0:
            return Outcome(True)
        body = json.loads(run.stderr)
        return Outcome(False, body["code"], body.get("details") or {})


class AdminDoor:
    """The console's buttons on a task (fail, complete, reopen): a person's moves, made without a claim."""

    name = "admin"
    buttons = {TaskStatus.FAILED: "fail", TaskStatus.COMPLETED: "complete", TaskStatus.NOT_STARTED: "reopen"}

    def __init__(self, client: Client) -> None:
        self.client = client

    def move(self, task: Task, status: str) -> Outcome | None:
        if status not in self.buttons:
            return None  # the console has no such button: nothing to walk
        response = self.client.post(reverse("admin:sessions_app_task_act", args=[task.pk, self.buttons[status]]),
                                    {"reason": "walked"}, follow=True)
        shown = [str(message) for message in response.context["messages"]]
        return Outcome(True) if not any("cannot go from" in message for message in shown) else Outcome(
            False, "invalid_transition")


@pytest.fixture(params=["rest", "mcp", "cli", "admin"])
def door(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "rest":
        yield RestDoor(request.getfixturevalue("api"))
    elif request.param == "admin":
        yield AdminDoor(request.getfixturevalue("admin_client"))
    elif request.param == "mcp":
        url, token = f"{request.getfixturevalue('live_server').url}/mcp/", request.getfixturevalue("token")
        with mcp_agent(url, token.secret) as agent:
            yield McpDoor(agent)
    else:
        env = request.getfixturevalue("ralph_env")
        yield CliDoor(env)


@pytest.mark.long
def test_it_walks_every_task_status_change_through_every_door(door: Any) -> None:
    wrong = []
    for current, new in every_pair(TASK_STATUS_LIFECYCLE):
        task = task_in(current)
        outcome = door.move(task, new)
        if outcome is None:
            continue
        after = Task.objects.get(pk=task.pk).status
        allowed = TASK_STATUS_LIFECYCLE.allows(current, new)
        if allowed and not (outcome.done and after == new):
            wrong.append((current, new, "refused", outcome.code, after))
        elif not allowed and (outcome.done or after != current):
            wrong.append((current, new, "allowed", after))
        elif not allowed and new != TaskStatus.IN_PROGRESS and (
                outcome.code != "invalid_transition"
                or outcome.details.get("allowed", TASK_STATUS_LIFECYCLE.allowed(current))
                != TASK_STATUS_LIFECYCLE.allowed(current)):
            wrong.append((current, new, "refused as", outcome.code, outcome.details))
    assert wrong == []


# -- the other lifecycles, through the API's verbs ------------------------------------------------------------


def refused_as_the_table_says(response: Any, lifecycle: Lifecycle, current: str) -> bool:
    body = response.json()
    return (response.status_code == 409 and body["code"] == "invalid_transition"
            and body["details"]["allowed"] == lifecycle.allowed(current))


def test_it_walks_every_session_state_change(api: APIClient) -> None:
    wrong = []
    for current, new in every_pair(SESSION_STATE_LIFECYCLE):
        session = make_session(state=current)
        response = api.post(f"/api/v1/sessions/{session.pk}/transition/", {"state": new, "agent": "o"},
                            format="json")
        after = Session.objects.get(pk=session.pk)
        if SESSION_STATE_LIFECYCLE.allows(current, new):
            if response.status_code != 200 or after.state != new:
                wrong.append((current, new, response.status_code))
        elif not refused_as_the_table_says(response, SESSION_STATE_LIFECYCLE, current) or after.state != current:
            wrong.append((current, new, response.status_code, after.state))
    assert wrong == []


@pytest.mark.parametrize(("state", "status"), [("complete", "completed"), ("stopped", "stopped")])
def test_ralph_v2_complete_and_stopped_end_the_session_on_every_path(api: APIClient, state: str,
                                                                      status: str) -> None:
    moved = make_session(state=OrchestratorState.EXECUTING_BATCH)
    body = api.post(f"/api/v1/sessions/{moved.pk}/transition/", {"state": state, "message": "all_tasks_done"},
                    format="json").json()
    assert (body["state"], body["status"], body["exit_reason"]) == (state, status, "all_tasks_done")
    assert body["ended_at"] is not None
    patched = make_session(state=OrchestratorState.EXECUTING_BATCH)
    body = api.patch(f"/api/v1/sessions/{patched.pk}/", {"state": state}, format="json").json()
    assert (body["state"], body["status"]) == (state, status) and body["ended_at"] is not None
    created = api.post("/api/v1/sessions/", {"state": state}, format="json").json()
    assert (created["state"], created["status"]) == (state, status) and created["ended_at"] is not None
    interrupted = api.get("/api/v1/sessions/interrupted/?idle_seconds=0").json()["results"]
    assert interrupted == []


def test_finishing_a_session_completed_puts_it_in_the_complete_state(api: APIClient) -> None:
    session = make_session(state=OrchestratorState.SESSION_REVIEW)
    body = api.post(f"/api/v1/sessions/{session.pk}/finish/", {"status": "completed"}, format="json").json()
    assert (body["state"], body["status"]) == ("complete", "completed")


def test_it_walks_every_session_status_change(api: APIClient) -> None:
    """running → a final status is finish/; a final status → running is resume/ (not for completed)."""
    wrong = []
    for current, new in every_pair(SESSION_STATUS_LIFECYCLE):
        session = make_session(status=current, ended_at=None if current == SessionStatus.RUNNING else timezone.now())
        if new == SessionStatus.RUNNING:
            response = api.post(f"/api/v1/sessions/{session.pk}/resume/", {"agent": "o"}, format="json")
        else:
            response = api.post(f"/api/v1/sessions/{session.pk}/finish/", {"status": new}, format="json")
        after = Session.objects.get(pk=session.pk).status
        allowed = SESSION_STATUS_LIFECYCLE.allows(current, new)
        if allowed != (response.status_code == 200 and after == new) or (not allowed and after != current):
            wrong.append((current, new, response.status_code, after))
    assert wrong == []


def test_it_walks_every_question_status_change(api: APIClient) -> None:
    wrong = []
    for current, new in every_pair(QUESTION_STATUS_LIFECYCLE):
        question = Question.objects.create(session=make_session(), key="Q-1", category="technical", text="?",
                                           status=current)
        response = api.patch(f"/api/v1/questions/{question.pk}/", {"status": new}, format="json")
        after = Question.objects.get(pk=question.pk).status
        if QUESTION_STATUS_LIFECYCLE.allows(current, new):
            if response.status_code != 200 or after != new:
                wrong.append((current, new, response.status_code))
        elif not refused_as_the_table_says(response, QUESTION_STATUS_LIFECYCLE, current) or after != current:
            wrong.append((current, new, response.status_code, after))
    assert wrong == []


def signal_in(stage: str) -> Signal:
    """A stop signal of a fresh session in `stage`; an expired one's session has ended."""
    expired = stage == SignalStage.EXPIRED
    session = make_session(status=SessionStatus.STOPPED if expired else SessionStatus.RUNNING,
                           ended_at=timezone.now() if expired else None)
    return Signal.objects.create(session=session, type="stop", is_processed=stage == SignalStage.PROCESSED,
                                 expired_at=timezone.now() if expired else None,
                                 expired_reason="session stopped" if expired else "")


def stage_of(signal: Signal) -> str:
    signal = Signal.objects.get(pk=signal.pk)
    return signal_stage(is_processed=signal.is_processed, expired=signal.expired_at is not None)


def test_it_walks_every_signal_change(api: APIClient) -> None:
    """processed by a PATCH of `is_processed` (poll-signal's own walk is below), expired by the session's end."""
    wrong = []
    for current, new in every_pair(SIGNAL_LIFECYCLE):
        signal = signal_in(current)
        if new == SignalStage.EXPIRED:
            response = api.post(f"/api/v1/sessions/{signal.session_id}/finish/", {"status": "stopped"}, format="json")
        else:
            response = api.patch(f"/api/v1/signals/{signal.pk}/", {"is_processed": new == SignalStage.PROCESSED},
                                 format="json")
        after = stage_of(signal)
        if SIGNAL_LIFECYCLE.allows(current, new):
            if response.status_code != 200 or after != new:
                wrong.append((current, new, response.status_code))
        elif after != current or (response.status_code >= 300 and response.json()["code"] != "session_finished"
                                  and not refused_as_the_table_says(response, SIGNAL_LIFECYCLE, current)):
            wrong.append((current, new, response.status_code, after))
    assert wrong == []


class SignalDoors:
    """Each door's verbs that move a signal: a poll takes the oldest unprocessed one (processed), the session's
    end expires it (MCP has no verb that ends a session; the admin none that polls)."""

    def __init__(self, request: pytest.FixtureRequest, name: str) -> None:
        self.request, self.name = request, name

    def poll(self, signal: Signal) -> bool:
        """Whether the door's poll took a signal."""
        session = signal.session_id
        if self.name == "rest":
            return self.request.getfixturevalue("api").post(
                f"/api/v1/sessions/{session}/poll-signal/", {"agent": "o"}, format="json").status_code == 200
        if self.name == "mcp":
            url = f"{self.request.getfixturevalue('live_server').url}/mcp/"
            with mcp_agent(url, self.request.getfixturevalue("token").secret) as agent:
                return agent.ok("poll_signal", session=session, agent="o")["signal"] is not None
        return self.cli("signal", "poll", session=session) == 0

    def end(self, signal: Signal) -> bool:
        """Whether the door ended the signal's session."""
        session = signal.session_id
        if self.name == "rest":
            return self.request.getfixturevalue("api").post(
                f"/api/v1/sessions/{session}/finish/", {"status": "stopped"}, format="json").status_code == 200
        if self.name == "cli":
            return self.cli("session", "end", "stopped", session=session) == 0
        client = self.request.getfixturevalue("admin_client")
        client.post(reverse("admin:sessions_app_session_act", args=[session, "finish"]),
                    {"status": "stopped", "exit_reason": "walked"})
        return Session.objects.get(pk=session).status == SessionStatus.STOPPED

    def cli(self, *args: str, session: str) -> int:
        return subprocess.run([str(RALPH), "--session", session, *args], capture_output=True, text=True, timeout=60,
                              env=self.request.getfixturevalue("ralph_env")).returncode


@pytest.mark.parametrize("name", ["rest", "mcp", "cli", "admin"])
def test_it_walks_every_signal_move_through_every_door(request: pytest.FixtureRequest, name: str) -> None:
    """Processed only from unprocessed (a poll finds nothing else to take), expired only from unprocessed (the
    end leaves a processed or expired one as it is): every pair of the table each door has a verb for."""
    doors, wrong = SignalDoors(request, name), []
    verbs = {SignalStage.PROCESSED: doors.poll, SignalStage.EXPIRED: doors.end}
    if name == "admin":
        del verbs[SignalStage.PROCESSED]
    if name == "mcp":
        del verbs[SignalStage.EXPIRED]
    for current in SIGNAL_LIFECYCLE.moves:
        for new, verb in verbs.items():
            if new == current:
                continue
            signal = signal_in(current)
            done = verb(signal)
            after = stage_of(signal)
            if SIGNAL_LIFECYCLE.allows(current, new) and not (done and after == new):
                wrong.append((current, new, "not moved", done, after))
            if not SIGNAL_LIFECYCLE.allows(current, new) and after != current:
                wrong.append((current, new, "moved", after))
    assert wrong == []


@pytest.mark.parametrize(("lifecycle", "name"), [(ATTEMPT_STATUS_LIFECYCLE, "status"),
                                                 (ATTEMPT_VERDICT_LIFECYCLE, "review_verdict")],
                         ids=["status", "review_verdict"])
def test_it_walks_every_attempt_change(api: APIClient, lifecycle: Lifecycle, name: str) -> None:
    wrong = []
    for current, new in every_pair(lifecycle):
        task = make_task(make_session(), "task-1")
        attempt = TaskAttempt.objects.create(task=task, attempt_number=1, **{name: current})
        response = api.patch(f"/api/v1/task-attempts/{attempt.pk}/", {name: new}, format="json")
        after = getattr(TaskAttempt.objects.get(pk=attempt.pk), name)
        if lifecycle.allows(current, new):
            if response.status_code != 200 or after != new:
                wrong.append((current, new, response.status_code))
        elif not refused_as_the_table_says(response, lifecycle, current) or after != current:
            wrong.append((current, new, response.status_code, after))
    assert wrong == []


# -- the other lifecycles through the other doors: each door's verbs for them --------------------------------


def cli_outcome(env: dict[str, str], session: str, *args: str) -> Outcome:
    run = subprocess.run([str(RALPH), "--json", "--session", session, *args], capture_output=True, text=True,
                         timeout=60, env=env)
    if run.returncode == 0:
        return Outcome(True)
    body = json.loads(run.stderr)
    return Outcome(False, body["code"], body.get("details") or {})


def admin_outcome(client: Client, url: str, data: dict[str, str]) -> Outcome:
    """The console's buttons answer with a message: a refusal is an error message naming the reason."""
    response = client.post(url, data, follow=True)
    refused = [str(message) for message in response.context["messages"] if message.level_tag == "error"]
    return Outcome(not refused, refused[0] if refused else "")


def test_it_walks_every_session_status_change_through_the_cli_and_the_admin(ralph_env: dict[str, str],  # noqa: F811
                                                                            admin_client: Client) -> None:
    """The CLI ends a session (`session end`); the console's Finish and Resume buttons end and resume it."""
    wrong = []
    for current, new in every_pair(SESSION_STATUS_LIFECYCLE):
        for door in ("cli", "admin"):
            if door == "cli" and new == SessionStatus.RUNNING:
                continue  # the CLI resumes nothing: `ralph session start` starts a new session
            session = make_session(status=current, ended_at=None if current == SessionStatus.RUNNING
                                   else timezone.now(), last_activity_at=timezone.now() - timedelta(hours=1))
            if door == "cli":
                outcome = cli_outcome(ralph_env, session.pk, "session", "end", new)
            else:
                button = "resume" if new == SessionStatus.RUNNING else "finish"
                outcome = admin_outcome(admin_client, reverse("admin:sessions_app_session_act",
                                                              args=[session.pk, button]),
                                        {"status": new, "exit_reason": "walked"})
            after = Session.objects.get(pk=session.pk).status
            allowed = SESSION_STATUS_LIFECYCLE.allows(current, new)
            if allowed != (outcome.done and after == new) or (not allowed and after != current):
                wrong.append((door, current, new, outcome.code, after))
    assert wrong == []


def test_it_walks_every_answer_through_mcp_and_the_admin(live_server: Any, token: Any, admin_client: Client) -> None:
    """answer_question (MCP) and the console's Answer button move a question to answered only."""
    wrong = []
    with mcp_agent(f"{live_server.url}/mcp/", token.secret) as agent:
        for current in QUESTION_STATUS_LIFECYCLE.moves:
            for door in ("mcp", "admin"):
                session = make_session()
                question = Question.objects.create(session=session, key="Q-1", category="technical", text="?",
                                                   status=current)
                if door == "mcp":
                    is_error, payload = agent.result("answer_question", session=session.pk, question="Q-1",
                                                     answer="yes")
                    outcome = Outcome(False, payload["code"]) if is_error else Outcome(True)
                else:
                    outcome = admin_outcome(admin_client, reverse("admin:sessions_app_question_act",
                                                                  args=[question.pk, "answer"]), {"answer": "yes"})
                after = Question.objects.get(pk=question.pk).status
                if QUESTION_STATUS_LIFECYCLE.allows(current, "answered") and current != "answered":
                    if not (outcome.done and after == "answered"):
                        wrong.append((door, current, outcome.code, after))
                elif outcome.done or after != current:  # answered stays answered: a second answer is refused
                    wrong.append((door, current, "answered again", after))
    assert wrong == []


def test_it_walks_every_review_verdict_through_mcp(live_server: Any, token: Any) -> None:
    wrong = []
    with mcp_agent(f"{live_server.url}/mcp/", token.secret) as agent:
        for current, new in every_pair(ATTEMPT_VERDICT_LIFECYCLE):
            if not new:
                continue  # no review takes a verdict back
            task = make_task(make_session(), "task-1")
            attempt = TaskAttempt.objects.create(task=task, attempt_number=1, review_verdict=current)
            is_error, payload = agent.result("submit_review", session=task.session_id, task="task-1",
                                             review_report="r", verdict=new)
            after = TaskAttempt.objects.get(pk=attempt.pk).review_verdict
            if ATTEMPT_VERDICT_LIFECYCLE.allows(current, new):
                if is_error or after != new:
                    wrong.append((current, new, payload, after))
            elif not is_error or payload["code"] != "invalid_transition" or after != current \
                    or payload["details"]["allowed"] != ATTEMPT_VERDICT_LIFECYCLE.allowed(current):
                wrong.append((current, new, payload, after))
    assert wrong == []


# -- a task completes after its dependencies ------------------------------------------------------------------


def test_a_task_does_not_complete_before_a_task_it_depends_on(api: APIClient) -> None:
    session = make_session()
    first = make_task(session, "task-1")
    second = make_task(session, "task-2", depends_on=(first,), status=TaskStatus.REVIEW_PENDING)
    response = api.post(f"/api/v1/tasks/{second.pk}/status/", {"status": "completed"}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "dependencies_unfinished"
    assert response.json()["details"] == {"task": "task-2", "unfinished": ["task-1"]}
    Task.objects.filter(pk=first.pk).update(status=TaskStatus.SKIPPED)
    assert api.post(f"/api/v1/tasks/{second.pk}/status/", {"status": "completed"}, format="json").status_code == 200


def test_a_failed_task_does_not_become_completed(api: APIClient) -> None:
    task = make_task(make_session(), "task-1", status=TaskStatus.FAILED)
    body = api.post(f"/api/v1/tasks/{task.pk}/status/", {"status": "completed"}, format="json").json()
    assert body["code"] == "invalid_transition"
    assert body["details"] == {"lifecycle": "task status", "from": "failed", "to": "completed",
                               "allowed": ["cancelled", "not_started"]}


def test_the_tables_are_in_the_schema(api: APIClient) -> None:
    schema = json.dumps(api.get("/api/schema/?format=json").json())
    for lifecycle in (TASK_STATUS_LIFECYCLE, SESSION_STATE_LIFECYCLE, SESSION_STATUS_LIFECYCLE,
                      QUESTION_STATUS_LIFECYCLE, SIGNAL_LIFECYCLE, ATTEMPT_STATUS_LIFECYCLE,
                      ATTEMPT_VERDICT_LIFECYCLE):
        assert json.dumps(lifecycle.describe())[1:-1] in schema, lifecycle.name



def test_the_tables_are_in_the_docs() -> None:
    docs = (BASE_DIR / "docs" / "resources.md").read_text(encoding="utf-8")
    for lifecycle in (TASK_STATUS_LIFECYCLE, SESSION_STATE_LIFECYCLE, SESSION_STATUS_LIFECYCLE,
                      QUESTION_STATUS_LIFECYCLE, SIGNAL_LIFECYCLE, ATTEMPT_STATUS_LIFECYCLE,
                      ATTEMPT_VERDICT_LIFECYCLE):
        assert f"**{lifecycle.name}**" in docs
        for current in lifecycle.moves:
            allowed = ", ".join(f"`{value}`" for value in lifecycle.allowed(current)) or "nothing (final)"
            assert f"| `{current or '(none)'}` | {allowed} |" in docs, (lifecycle.name, current)
