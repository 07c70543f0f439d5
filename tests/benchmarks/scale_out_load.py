"""The scale-out load: agents, orchestrators and signal pollers running a Ralph loop over HTTP.

Every actor is a thread with its own keep-alive connection to one app host. Per session:

* an orchestrator keeps a backlog of ready work: whenever fewer tasks wait than the session has
  agents, it plans another wave whose tasks each depend on a task of the previous wave, and it
  sends an `info` signal every `SIGNAL_EVERY_SECONDS`;
* a poller drains the session's signals (poll-signal), remembering what it was handed;
* agents loop: claim a task → heartbeat → append events with usage (one request, idempotency keys)
  → record an issue every few loops → report → set the task completed.

Everything an invariant needs is recorded client-side (claims with their fencing value, signals
sent and delivered, events and usage acknowledged); `scale_out_check` compares it with the database.
"""

import random
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tests.benchmarks.client import BenchClient, Response
from tests.benchmarks.stats import summarize

API = "/api/v1"
LEASE_SECONDS = 120
EVENTS_PER_LOOP = 3
ISSUE_EVERY_LOOPS = 5
SIGNAL_EVERY_SECONDS = 0.25
IDLE_SLEEP_SECONDS = 0.02
EVENT_TOKENS_IN, EVENT_TOKENS_OUT, EVENT_COST_USD = 120, 30, Decimal("0.000450")
ATTEMPT_TOKENS_IN, ATTEMPT_TOKENS_OUT, ATTEMPT_COST_USD = 2000, 500, Decimal("0.012500")


class UnexpectedResponse(Exception):
    pass


@dataclass
class Recorder:
    """What every thread saw, merged under one lock (appends are rare next to the HTTP calls)."""

    timings_ns: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    error_examples: list[str] = field(default_factory=list)
    claims: list[tuple[str, Any, str]] = field(default_factory=list)  # (task id, claim value, agent)
    completed: list[str] = field(default_factory=list)
    loops: int = 0
    idle_claims: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # reason → count
    signals_sent: list[str] = field(default_factory=list)
    signals_delivered: list[str] = field(default_factory=list)
    events_acknowledged: int = 0
    usage_acknowledged: dict[str, list[Any]] = field(default_factory=dict)  # session → [in, out, usd]
    tasks_created: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def timing(self, call: str, resp: Response) -> None:
        with self._lock:
            self.timings_ns[call].append(resp.elapsed_ns)

    def error(self, call: str, detail: str) -> None:
        with self._lock:
            self.errors[call] += 1
            if len(self.error_examples) < 10:
                self.error_examples.append(f"{call}: {detail}")

    def usage(self, session_id: str, tokens_in: int, tokens_out: int, cost_usd: Decimal) -> None:
        with self._lock:
            totals = self.usage_acknowledged.setdefault(session_id, [0, 0, Decimal(0)])
            totals[0] += tokens_in
            totals[1] += tokens_out
            totals[2] += cost_usd

    def idle(self, reason: str) -> None:
        with self._lock:
            self.idle_claims[reason] += 1

    def add(self, name: str, value: Any) -> None:
        with self._lock:
            getattr(self, name).append(value)

    def count(self, name: str, by: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + by)

    def latency_table(self) -> dict[str, Any]:
        return {call: {**summarize(samples).as_dict(), "errors": self.errors.get(call, 0)}
                for call, samples in sorted(self.timings_ns.items()) if samples}


class Actor(threading.Thread):
    """One thread, one keep-alive connection to one host."""

    def __init__(self, *, name: str, port: int, token: str, deadline: float, recorder: Recorder) -> None:
        super().__init__(name=name, daemon=True)
        self.client = BenchClient(port=port, token=token)
        self.deadline = deadline
        self.recorder = recorder
        self.failure: BaseException | None = None

    def call(self, label: str, method: str, path: str, body: Any = None, *,
             expect: tuple[int, ...] = (200, 201)) -> Response:
        resp = self.client.request(method, path, body)
        self.recorder.timing(label, resp)
        if resp.status not in expect:
            self.recorder.error(label, f"{method} {path} -> {resp.status}: {resp.excerpt(200)}")
            raise UnexpectedResponse(label)
        return resp

    def run(self) -> None:
        try:
            while time.monotonic() < self.deadline:
                try:
                    self.step()
                except UnexpectedResponse:
                    time.sleep(IDLE_SLEEP_SECONDS)  # counted as an error already; keep the load going
        except BaseException as exc:  # surfaced by the runner: a crashed actor must fail the run
            self.failure = exc
        finally:
            self.client.close()

    def step(self) -> None:
        raise NotImplementedError


class Agent(Actor):
    def __init__(self, *, session_id: str, agent: str, **kwargs: Any) -> None:
        super().__init__(name=agent, **kwargs)
        self.session_id = session_id
        self.agent = agent
        self.loops = 0

    def step(self) -> None:
        claimed = self.call("claim", "POST", f"{API}/sessions/{self.session_id}/claim-task/",
                            {"agent": self.agent, "lease_seconds": LEASE_SECONDS}, expect=(200, 409))
        body = claimed.json()
        if claimed.status == 409:  # nothing to claim now, and why (all_done, waiting, at_capacity, …)
            if body.get("code") != "nothing_to_claim":
                self.recorder.error("claim", claimed.excerpt(200))
                raise UnexpectedResponse("claim")
            self.recorder.idle(body["details"].get("reason", "unknown"))
            time.sleep(IDLE_SLEEP_SECONDS)
            return
        task_id, claim = body["id"], body.get("claim")
        self.recorder.add("claims", (task_id, claim, self.agent))
        fence = {"agent": self.agent} | ({"claim": claim} if claim is not None else {})
        self.call("heartbeat", "POST", f"{API}/tasks/{task_id}/heartbeat/", {**fence, "lease_seconds": LEASE_SECONDS})
        self._append_events(body["key"])
        if self.loops % ISSUE_EVERY_LOOPS == 0:
            self.call("record_issue", "POST", f"{API}/issues/record/",
                      {"session": self.session_id, "kind": "lint", "signature": f"scale-{random.randrange(20)}",
                       "message": "a recurring lint warning", "task_key": body["key"]})
        self.call("report", "POST", f"{API}/tasks/{task_id}/report/",
                  {**fence, "implementation_report": f"{self.agent} did {body['key']}", "model": "gpt-5",
                   "tokens_input": ATTEMPT_TOKENS_IN, "tokens_output": ATTEMPT_TOKENS_OUT,
                   "cost_usd": str(ATTEMPT_COST_USD)})
        self.recorder.usage(self.session_id, ATTEMPT_TOKENS_IN, ATTEMPT_TOKENS_OUT, ATTEMPT_COST_USD)
        self.call("set_status", "POST", f"{API}/tasks/{task_id}/status/", {**fence, "status": "completed"})
        self.recorder.add("completed", task_id)
        self.recorder.count("loops")
        self.loops += 1

    def _append_events(self, task_key: str) -> None:
        items = [{"session": self.session_id, "type": "x-scale", "agent": self.agent, "task_key": task_key,
                  "model": "gpt-5", "tokens_in": EVENT_TOKENS_IN, "tokens_out": EVENT_TOKENS_OUT,
                  "cost_usd": str(EVENT_COST_USD), "idempotency_key": f"{self.agent}-{self.loops}-{n}"}
                 for n in range(EVENTS_PER_LOOP)]
        resp = self.call("append_events", "POST", f"{API}/events/", items)
        results = resp.json()
        created = sum(1 for item in results if item.get("status", "created") == "created") \
            if isinstance(results, list) else 0
        self.recorder.count("events_acknowledged", created)
        self.recorder.usage(self.session_id, EVENT_TOKENS_IN * created, EVENT_TOKENS_OUT * created,
                            EVENT_COST_USD * created)


class Orchestrator(Actor):
    """Plans waves of dependent tasks ahead of the agents and sends signals."""

    def __init__(self, *, session_id: str, agents: int, **kwargs: Any) -> None:
        super().__init__(name=f"orchestrator-{session_id}", **kwargs)
        self.session_id = session_id
        self.agents = agents
        self.wave = 0
        self.previous_wave: list[str] = []
        self.signal_at = 0.0

    def step(self) -> None:
        now = time.monotonic()
        if now >= self.signal_at:
            self.signal_at = now + SIGNAL_EVERY_SECONDS
            resp = self.call("send_signal", "POST", f"{API}/signals/",
                             {"session": self.session_id, "type": "info", "message": f"wave {self.wave}"})
            self.recorder.add("signals_sent", resp.json()["id"])
        waiting = self.call("count_waiting", "GET",
                            f"{API}/tasks/?session={self.session_id}&status=not_started&page_size=1").json()["count"]
        if waiting >= self.agents:
            time.sleep(IDLE_SLEEP_SECONDS * 5)
            return
        self.plan_wave()

    def plan_wave(self) -> None:
        self.wave += 1
        keys = []
        for n in range(self.agents * 2):
            key = f"w{self.wave}-t{n}"
            depends_on = [random.choice(self.previous_wave)] if self.previous_wave else []
            self.call("create_task", "POST", f"{API}/tasks/",
                      {"session": self.session_id, "key": key, "title": f"wave {self.wave} task {n}",
                       "task_type": "parallelizable", "depends_on": depends_on})
            keys.append(key)
        self.recorder.count("tasks_created", len(keys))
        self.previous_wave = keys


class Poller(Actor):
    def __init__(self, *, session_id: str, **kwargs: Any) -> None:
        super().__init__(name=f"poller-{session_id}", **kwargs)
        self.session_id = session_id

    def step(self) -> None:
        if not self.poll_once():
            time.sleep(IDLE_SLEEP_SECONDS)

    def poll_once(self) -> bool:
        resp = self.call("poll_signal", "POST", f"{API}/sessions/{self.session_id}/poll-signal/", expect=(200, 204))
        if resp.status == 204:
            return False
        self.recorder.add("signals_delivered", resp.json()["id"])
        return True

    def drain(self) -> None:
        """After the run: hand out whatever is left, so every sent signal can be accounted for."""
        while self.poll_once():
            pass
