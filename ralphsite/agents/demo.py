"""`make demo`: a small simulated Ralph loop driven over the REST API, so the console has a loop to show.

An orchestrator plans six tasks with dependencies, three agents (two executors and a reviewer) claim,
report and review them, a questioner asks two questions (the orchestrator answers one; the other
waits for you in the console), one task fails its review and is retried, signals are sent and polled
(press Pause, Steer or Stop in the console: the orchestrator obeys), and every call's tokens and cost
are recorded across two models, with a conversation per task. It talks HTTP only (no Django import),
like any agent, so it runs against the server `make run` started:

    make demo DEMO_TOKEN=<the token make run printed>        # a little over a minute
    python -m ralphsite.agents.demo --url http://127.0.0.1:8000 --token <token> --pace 0.2
"""

import argparse
import json
import os
import random
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

MODELS = {"claude-sonnet-4": ("3", "15"), "gpt-5-mini": ("0.25", "2")}  # USD per million tokens in / out
TASKS = [
    ("task-1", "Database schema for the widget store", "executor", []),
    ("task-2", "REST endpoints for widgets", "executor", ["task-1"]),
    ("task-3", "Admin screens for widgets", "executor", ["task-1"]),
    ("task-4", "Integration tests", "executor", ["task-2", "task-3"]),
    ("task-5", "API documentation", "executor", ["task-4"]),
    ("task-6", "Release notes (한국어 요약 포함)", "executor", ["task-4"]),
]
FAILS_FIRST_REVIEW = "task-3"


class ApiError(Exception):
    pass


class Api:
    """JSON over HTTP with the token: the whole client an agent needs."""

    def __init__(self, url: str, token: str) -> None:
        self.base = url.rstrip("/") + "/api/v1"
        self.token = token

    def call(self, method: str, path: str, body: Any = None, expect: tuple[int, ...] = (200, 201)) -> Any:
        request = urllib.request.Request(self.base + path, method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Authorization": f"Token {self.token}",
                                                  "Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        if status not in expect:
            raise ApiError(f"{method} {path}: {status} {raw[:300].decode(errors='replace')}")
        return json.loads(raw) if raw else None


def cost(model: str, tokens_in: int, tokens_out: int) -> str:
    per_in, per_out = (float(price) for price in MODELS[model])
    return f"{(tokens_in * per_in + tokens_out * per_out) / 1_000_000:.6f}"


class Loop:
    def __init__(self, api: Api, pace: float, say: Callable[[str], None]) -> None:
        self.api, self.pace, self.say = api, pace, say
        self.random = random.Random(7)
        self.session: dict[str, Any] = {}
        self.tasks: dict[str, str] = {}
        self.paused = False
        self.calls = 0  # provider calls booked, numbering their request ids

    @property
    def sid(self) -> str:
        return self.session["id"]

    def wait(self, steps: float = 1.0) -> None:
        time.sleep(self.pace * steps)

    def event(self, type: str, **fields: Any) -> None:
        self.api.call("POST", "/events/", {"session": self.sid, "type": type, **fields})

    def usage(self, *, agent: str, model: str, task_key: str, operation: str) -> tuple[int, int, str, str]:
        """One provider call booked; its request id lets a later record of the same call (the report) count
        it once."""
        tokens_in, tokens_out = self.random.randint(2_000, 18_000), self.random.randint(300, 4_000)
        amount, self.calls = cost(model, tokens_in, tokens_out), self.calls + 1
        request_id = f"demo-{self.sid}-{self.calls}"
        self.api.call("POST", "/token-usage/", {
            "session": self.sid, "model": model, "agent": agent, "task_key": task_key, "operation": operation,
            "input_tokens": tokens_in, "output_tokens": tokens_out, "cost_usd": amount, "request_id": request_id})
        return tokens_in, tokens_out, amount, request_id

    def transition(self, state: str, message: str, **fields: Any) -> None:
        self.api.call("POST", f"/sessions/{self.sid}/transition/",
                      {"state": state, "agent": "orchestrator", "message": message, **fields})
        self.say(f"orchestrator: {message}")

    # -- the orchestrator -----------------------------------------------------------------------

    def start(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        self.session = self.api.call("POST", "/sessions/", {
            "key": f"demo-{stamp}", "project_path": "/srv/widget-store", "command": "ralph implement",
            "command_type": "implement", "user_request": "Build the widget store: schema, API, admin, tests, docs.",
            "default_model": "claude-sonnet-4", "max_iterations": 5, "max_concurrency": 2})
        self.say(f"session {self.session['key']} ({self.sid}): watch it at "
                 f"{self.api.base.removesuffix('/api/v1')}/admin/sessions_app/session/{self.sid}/change/")
        self.event("session_started", category="session", agent="orchestrator", message="demo loop started")
        self.transition("planning", "planning the work", current_iteration=1)
        self.api.call("PUT", f"/sessions/{self.sid}/plan/", {
            "content": "# Plan\n" + "\n".join(f"- {key}: {title}" for key, title, _, _ in TASKS), "agent": "planner"})
        self.usage(agent="planner", model="claude-sonnet-4", task_key="", operation="plan")
        for sequence, (key, title, _role, depends_on) in enumerate(TASKS, start=1):
            task = self.api.call("POST", "/tasks/", {"session": self.sid, "key": key, "title": title,
                                                     "objective": title, "sequence": sequence,
                                                     # Two executors work a wave side by side: a
                                                     # sequential task (the default) runs alone.
                                                     "task_type": "parallelizable", "depends_on": depends_on})
            self.tasks[key] = task["id"]
            self.wait(0.3)
        self.api.call("POST", "/questions/", {
            "session": self.sid, "key": "Q-TECH-001", "category": "technical", "priority": "high",
            "text": "Should widget prices be stored as integer cents or as decimals?"})
        self.api.call("POST", "/questions/", {
            "session": self.sid, "key": "Q-REQ-002", "category": "requirements", "priority": "medium",
            "text": "Do admins need to bulk-import widgets from CSV in this release?"})
        self.say("questioner: asked Q-TECH-001 and Q-REQ-002 (answer Q-REQ-002 in the console)")
        self.transition("executing_batch", "executing wave 1", current_wave=1)

    def obey_signals(self) -> bool:
        """Poll the signals; False when told to stop."""
        while True:
            signal = self.api.call("POST", f"/sessions/{self.sid}/poll-signal/", {"agent": "orchestrator"},
                                   expect=(200, 204))
            if signal is None:
                if self.paused:
                    self.wait(2)
                    continue
                return True
            kind, message = signal["type"], signal["message"]
            self.say(f"orchestrator: got a {kind} signal {message!r}")
            if kind == "stop":
                self.finish("stopped", "stopped by an operator")
                return False
            if kind == "pause":
                self.paused = True
                self.transition("paused", "paused by an operator (send a resume signal to go on)")
            elif kind == "resume" and self.paused:  # a pause holds until a resume signal: no other lifts it
                self.paused = False
                self.transition("executing_batch", f"resumed: {message or kind}")

    def finish(self, status: str, reason: str) -> None:
        self.api.call("POST", f"/sessions/{self.sid}/finish/",
                      {"status": status, "exit_reason": reason, "agent": "orchestrator"})
        self.say(f"orchestrator: session {status} ({reason})")

    # -- the agents -----------------------------------------------------------------------------

    def conversation(self, key: str, agent: str, model: str, attempt: int) -> None:
        chats = self.api.call("GET", f"/chats/?session={self.sid}&worktree={key}")["results"]
        chat = chats[0] if chats else self.api.call("POST", "/chats/", {
            "title": f"{key}: {dict((k, t) for k, t, _, _ in TASKS)[key]}", "session": self.sid,
            "worktree_id": key, "tags": [agent, model]})
        run = self.api.call("POST", "/runs/", {"chat": chat["id"]})
        korean = key == "task-6"
        tokens_in, tokens_out, _, _ = self.usage(agent=agent, model=model, task_key=key, operation="implement")
        self.api.call("POST", f"/runs/{run['id']}/messages/", [
            {"role": "system", "content": f"You are {agent}, an executor in a Ralph loop. Attempt {attempt}."},
            {"role": "user", "content": f"Implement {key}. 릴리스 노트는 한국어로도 요약해 주세요." if korean
             else f"Implement {key} and report what changed."},
            {"role": "assistant", "content": "Reading the code first.", "tool_calls": [
                {"id": f"call-{key}-{attempt}", "name": "read_file", "arguments": {"path": f"src/{key}.py"},
                 "result": "def widget():\n    ...", "status": "completed"}]},
            {"role": "tool", "content": "def widget():\n    ..."},
            {"role": "assistant", "content": ("변경 사항: 위젯 API가 추가되었습니다. " if korean else "")
             + f"Done: {key} implemented, {tokens_in:,} tokens read, tests added."},
        ])
        self.api.call("PATCH", f"/runs/{run['id']}/", {"status": "completed", "tokens_used": tokens_in + tokens_out})

    def execute(self, key: str, claim: int, agent: str, model: str, attempt: int) -> None:
        """The claim's holder works under it: every write on the claimed task carries `claim`."""
        task_id = self.tasks[key]
        self.event("agent_started", category="agent", agent=agent, model=model, task_key=key,
                   message=f"{agent} started {key} (attempt {attempt})")
        self.wait()
        self.api.call("POST", f"/tasks/{task_id}/heartbeat/", {"agent": agent, "lease_seconds": 300, "claim": claim})
        self.conversation(key, agent, model, attempt)
        tokens_in, tokens_out, amount, request_id = self.usage(agent=agent, model=model, task_key=key,
                                                               operation="report")
        self.api.call("POST", f"/tasks/{task_id}/report/", {
            "implementation_report": f"{key}: implemented and unit-tested.", "agent": agent, "model": model,
            "status": "success", "tokens_input": tokens_in, "tokens_output": tokens_out, "cost_usd": amount,
            "request_id": request_id, "claim": claim})
        self.event("agent_completed", category="agent", agent=agent, model=model, task_key=key,
                   message=f"{agent} reported {key}", duration_ms=int(self.pace * 1000))
        self.wait()

    def review(self, key: str, claim: int, attempt: int) -> bool:
        task_id = self.tasks[key]
        self.usage(agent="reviewer", model="gpt-5-mini", task_key=key, operation="review")
        fails = key == FAILS_FIRST_REVIEW and attempt == 1
        verdict = "failed" if fails else "qualified"
        report = ("The admin list crashes on an empty widget name: TypeError in widget_label()." if fails
                  else f"{key} meets its criteria.")
        self.api.call("POST", f"/tasks/{task_id}/review/", {"review_report": report, "verdict": verdict,
                                                            "agent": "reviewer"})
        if fails:
            self.api.call("POST", f"/tasks/{task_id}/status/", {
                "status": "failed", "annotation": "review failed: TypeError in widget_label() on an empty name",
                "agent": "orchestrator", "claim": claim})
            self.event("task_failed", category="task", agent="reviewer", task_key=key,
                       message="review failed: TypeError in widget_label() on an empty name")
            self.say(f"reviewer: {key} failed its review; the orchestrator retries it")
            self.wait()
            self.api.call("POST", f"/tasks/{task_id}/status/", {"status": "not_started", "agent": "orchestrator",
                                                                "annotation": "retry after a failed review"})
            return False
        self.api.call("POST", f"/tasks/{task_id}/status/", {"status": "completed", "annotation": "reviewed",
                                                            "agent": "orchestrator", "claim": claim})
        self.say(f"reviewer: {key} qualified")
        return True

    def run(self) -> None:
        self.start()
        executors = [("exec-a", "claude-sonnet-4"), ("exec-b", "gpt-5-mini")]
        attempts: dict[str, int] = {}
        done: set[str] = set()
        steps = 0
        while len(done) < len(TASKS):
            if not self.obey_signals():
                return
            claimed = []
            for agent, model in executors:
                task = self.claim(agent)
                if task:
                    claimed.append((task["key"], task["claim"], agent, model))
                    self.say(f"{agent}: claimed {task['key']}")
            for key, claim, agent, model in claimed:
                attempts[key] = attempts.get(key, 0) + 1
                self.execute(key, claim, agent, model, attempts[key])
                if self.review(key, claim, attempts[key]):
                    done.add(key)
            steps += 1
            if steps == 2:
                self.api.call("POST", f"/questions/{self.question_id('Q-TECH-001')}/answer/", {
                    "answer": "Integer cents: no rounding drift in totals.", "answer_source": "orchestrator",
                    "answer_confidence": "high", "answer_implication": "prices are BIGINT cents"})
                self.say("orchestrator: answered Q-TECH-001")
                self.api.call("POST", "/signals/", {"session": self.sid, "type": "info",
                                                    "message": "CI is green on main; keep going."})
            if not claimed:
                self.wait()
        self.transition("session_review", "reviewing the session")
        self.event("session_ended", category="session", agent="orchestrator", message="all tasks done")
        self.finish("completed", "all_tasks_done")  # the session's state becomes complete with it

    def claim(self, agent: str) -> dict[str, Any] | None:
        """The next task for `agent`, or None when the plan lets nothing start now (a 409
        `nothing_to_claim`, whose reason says why: another task must finish first, or capacity)."""
        answer = self.api.call("POST", f"/sessions/{self.sid}/claim-task/", {"agent": agent, "lease_seconds": 300},
                               expect=(200, 409))
        if answer.get("code") == "nothing_to_claim":
            if answer["details"]["reason"] == "session_finished":
                raise ApiError(f"the session was finished meanwhile ({answer['details']['status']})")
            return None
        if "key" not in answer:
            raise ApiError(f"claim-task: unexpected answer {answer}")
        return answer

    def question_id(self, key: str) -> str:
        return self.api.call("GET", f"/questions/?session={self.sid}&key={key}")["results"][0]["id"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("RALPH_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("RALPH_TOKEN", ""))
    parser.add_argument("--pace", type=float, default=float(os.environ.get("DEMO_PACE", "4")),
                        help="seconds per step (default 4: a little over a minute in all)")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("--token (or RALPH_TOKEN / DEMO_TOKEN) is required: the API token `make run` printed")
    loop = Loop(Api(args.url, args.token), args.pace, lambda line: print(line, flush=True))
    try:
        loop.run()
    except (ApiError, urllib.error.URLError) as error:
        print(f"demo stopped: {error}", file=sys.stderr)
        return 1
    print(f"open {args.url.rstrip('/')}/admin/sessions_app/session/{loop.sid}/change/ to see it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
