"""What the benchmark measures, as data: one row per operation.

Each `Operation` is a method, a path template, a body factory and an optional setup step. Paths
are `str.format` templates over `State.ids` plus `i` (the request number); a callable path gets
`(state, i)`. Setup steps create what the operation needs through the API, so when an endpoint's
request shape changes only the table below changes. A route that does not exist yet makes the
runner print "endpoint missing (404)" for that row and carry on.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.benchmarks.client import BenchClient, Response

API = "/api/v1"


class EndpointMissing(Exception):
    """The route answered 404/405: the endpoint does not exist (yet) on this branch."""


class SetupFailed(Exception):
    """A setup request was refused (wrong request shape, usually): shows the status and body."""


@dataclass
class State:
    """Ids created during the run, shared by the operations (and by the scale phase)."""

    ids: dict[str, Any] = field(default_factory=dict)
    chat_ids: list[str] = field(default_factory=list)
    message_ids: list[str] = field(default_factory=list)
    event_ids: list[int] = field(default_factory=list)


def api_call(client: BenchClient, method: str, path: str, body: Any = None, *,
             expect: tuple[int, ...] = (200, 201)) -> Response:
    """A setup request: EndpointMissing on 404/405, SetupFailed on any other unexpected status."""
    resp = client.request(method, path, body)
    if resp.status in (404, 405):
        raise EndpointMissing(f"{method} {path.split('?')[0]}: endpoint missing ({resp.status})")
    if resp.status not in expect:
        raise SetupFailed(f"{method} {path.split('?')[0]} -> {resp.status}: {resp.excerpt()}")
    return resp


def api_create(client: BenchClient, path: str, body: Any) -> dict[str, Any]:
    return api_call(client, "POST", path, body).json()


# ---- request bodies (the shapes agents send; adjust here when an endpoint's serializer changes) ----

def session_body(label: str) -> dict[str, Any]:
    return {"user_request": f"benchmark {label}", "project_path": "/bench"}


def chat_body(i: int) -> dict[str, Any]:
    return {"title": f"benchmark chat {i}", "tags": ["bench"]}


def run_body(chat_id: str) -> dict[str, Any]:
    return {"chat": chat_id}


def message_body(i: int) -> dict[str, Any]:
    return {"role": "user" if i % 2 else "assistant",
            "content": f"benchmark message {i}: please refactor the parser and keep the tests green"}


def task_body(session_id: str, key: str) -> dict[str, Any]:
    # Parallelizable: a claim must never wait for the tasks claimed before it (a sequential task runs alone).
    return {"session": session_id, "key": key, "title": f"benchmark {key}", "task_type": "parallelizable",
            "objective": "measure the claim path"}


def signal_body(session_id: str, i: int) -> dict[str, Any]:
    return {"session": session_id, "type": "info", "message": f"benchmark signal {i}"}


def event_body(session_id: str, i: int) -> dict[str, Any]:
    # `x-` types are the ledger's custom namespace: always valid, whatever the built-in type list is.
    return {"session": session_id, "type": "x-bench", "agent": "executor", "message": f"benchmark event {i}",
            "tokens_in": 120, "tokens_out": 30, "cost_usd": "0.000810", "data": {"i": i}}


# ---- setup steps: (client, state, requests the operation will make) ----

def setup_session(client: BenchClient, state: State, _: int) -> None:
    if "session" not in state.ids:
        state.ids["session"] = api_create(client, f"{API}/sessions/", session_body("main"))["id"]


def setup_chat(client: BenchClient, state: State, _: int) -> None:
    if "chat" not in state.ids:
        state.ids["chat"] = api_create(client, f"{API}/chats/", chat_body(0))["id"]
        state.chat_ids.append(state.ids["chat"])


def setup_run(client: BenchClient, state: State, n: int) -> None:
    setup_chat(client, state, n)
    if "run" not in state.ids:
        state.ids["run"] = api_create(client, f"{API}/runs/", run_body(state.ids["chat"]))["id"]


def setup_run_with_100_messages(client: BenchClient, state: State, n: int) -> None:
    setup_run(client, state, n)
    missing = 100 - len(state.message_ids)
    if missing > 0:
        # The bulk form of the append endpoint: a list in one request.
        api_call(client, "POST", f"{API}/runs/{state.ids['run']}/messages/",
                 [message_body(i) for i in range(missing)])


def setup_task(client: BenchClient, state: State, n: int) -> None:
    setup_session(client, state, n)
    if "task" not in state.ids:
        state.ids["task"] = api_create(client, f"{API}/tasks/", task_body(state.ids["session"], "task-get"))["id"]


def setup_claimable_tasks(client: BenchClient, state: State, n: int) -> None:
    # A session of its own, with one ready task per claim the operation will make, and room for all of
    # them in progress at once (claims are never completed here).
    session_id = api_create(client, f"{API}/sessions/", {**session_body("claim"), "max_concurrency": n})["id"]
    state.ids["claim_session"] = session_id
    for i in range(n):
        api_create(client, f"{API}/tasks/", task_body(session_id, f"task-{i + 1}"))


def setup_signals(client: BenchClient, state: State, n: int) -> None:
    session_id = api_create(client, f"{API}/sessions/", session_body("signals"))["id"]
    state.ids["signal_session"] = session_id
    for i in range(n):
        api_create(client, f"{API}/signals/", signal_body(session_id, i))


# ---- response collectors: remember ids later operations and the scale phase use ----

def collect_chat(state: State, resp: Response) -> None:
    state.chat_ids.append(resp.json()["id"])


def collect_message(state: State, resp: Response) -> None:
    body = resp.json()
    state.message_ids.append(body[0]["id"] if isinstance(body, list) else body["id"])


def collect_event(state: State, resp: Response) -> None:
    body = resp.json()
    state.event_ids.append(body[0]["id"] if isinstance(body, list) else body["id"])


def chat_path(state: State, i: int) -> str:
    if not state.chat_ids:
        raise KeyError("chat")
    return f"{API}/chats/{state.chat_ids[i % len(state.chat_ids)]}/"


def message_path(state: State, i: int) -> str:
    if not state.message_ids:
        raise KeyError("message")
    return f"{API}/messages/{state.message_ids[i % len(state.message_ids)]}/"


@dataclass(frozen=True)
class Operation:
    key: str
    label: str
    method: str
    path: str | Callable[[State, int], str]
    body: Callable[[State, int], Any] | None = None
    setup: Callable[[BenchClient, State, int], None] | None = None
    collect: Callable[[State, Response], None] | None = None
    floor: str | None = None  # the storage-floor operation doing the same storage work (floors.py)
    seed_target_ms: tuple[float, float] | None = None  # seed 002 (target, maximum)
    expect: tuple[int, ...] = (200, 201)

    def path_for(self, state: State, i: int) -> str:
        return self.path(state, i) if callable(self.path) else self.path.format(i=i, **state.ids)


OPERATIONS: tuple[Operation, ...] = (
    Operation("insert_chat", "insert chat", "POST", f"{API}/chats/",
              body=lambda s, i: chat_body(i), collect=collect_chat,
              floor="insert_row", seed_target_ms=(5, 10)),
    Operation("insert_message", "insert message", "POST", f"{API}/runs/{{run}}/messages/",
              body=lambda s, i: message_body(i), setup=setup_run, collect=collect_message,
              floor="insert_row", seed_target_ms=(3, 10)),
    Operation("get_chat", "get chat by id", "GET", chat_path, setup=setup_chat,
              floor="get_by_id", seed_target_ms=(2, 5)),
    Operation("list_100_messages", "list 100 messages", "GET", f"{API}/messages/?run={{run}}&page_size=100",
              setup=setup_run_with_100_messages, floor="list_100", seed_target_ms=(25, 50)),
    Operation("get_task", "get task", "GET", f"{API}/tasks/{{task}}/", setup=setup_task, floor="get_by_id"),
    Operation("claim_task", "claim task", "POST", f"{API}/sessions/{{claim_session}}/claim-task/",
              body=lambda s, i: {"agent": f"agent-{i % 4}", "lease_seconds": 600},
              setup=setup_claimable_tasks, floor="claim_row", expect=(200,)),
    Operation("poll_signal", "poll signal", "POST", f"{API}/sessions/{{signal_session}}/poll-signal/",
              setup=setup_signals, floor="claim_row", expect=(200,)),
    Operation("append_event", "append ledger event", "POST", f"{API}/events/",
              body=lambda s, i: event_body(s.ids["session"], i), setup=setup_session, collect=collect_event,
              floor="insert_row"),
    # Not in the list, but they exist today and are on every agent's path: a reference for the rest.
    Operation("insert_session", "insert session", "POST", f"{API}/sessions/",
              body=lambda s, i: session_body(f"insert {i}"), floor="insert_row"),
    Operation("get_session", "get session by id", "GET", f"{API}/sessions/{{session}}/", setup=setup_session,
              floor="get_by_id"),
)

# Measured at small scale (after OPERATIONS) and again after the bulk seed.
SCALE_OPERATIONS: tuple[Operation, ...] = (
    Operation("get_chat", "get chat by id", "GET", chat_path, setup=setup_chat, floor="get_by_id"),
    Operation("get_message", "get message by id", "GET", message_path, floor="get_by_id"),
    Operation("list_100_messages", "list 100 messages", "GET", f"{API}/messages/?run={{run}}&page_size=100",
              floor="list_100"),
    Operation("events_page_first", "ledger page (first)", "GET",
              f"{API}/events/?session={{session}}&page_size=100", floor="list_100"),
    Operation("events_page_deep", "ledger page (deep)", "GET",
              f"{API}/events/?session={{session}}&page_size=100&after={{deep_event}}", floor="list_100"),
)

# The operator's console at the same two scales (issue #18: no page may slow down with the ledger's
# size, so no changelist counts a big table). Sent with an admin session cookie, not the API token.
ADMIN = "/admin"
ADMIN_SCALE_OPERATIONS: tuple[Operation, ...] = (
    Operation("admin_dashboard", "admin: dashboard", "GET", f"{ADMIN}/", expect=(200,)),
    Operation("admin_events", "admin: ledger events", "GET", f"{ADMIN}/ledger_app/ledgerevent/", expect=(200,)),
    Operation("admin_events_session", "admin: a session's events", "GET",
              f"{ADMIN}/ledger_app/ledgerevent/?session={{session}}", expect=(200,)),
    Operation("admin_messages", "admin: messages", "GET", f"{ADMIN}/conversations_app/message/", expect=(200,)),
    Operation("admin_usage", "admin: token usage", "GET", f"{ADMIN}/ledger_app/tokenusage/", expect=(200,)),
    Operation("admin_console", "admin: session console", "GET",
              f"{ADMIN}/sessions_app/session/{{session}}/change/", expect=(200,)),
    Operation("admin_transcript", "admin: conversation", "GET",
              f"{ADMIN}/conversations_app/chat/{{chat}}/transcript/", expect=(200,)),
)
ADMIN_SAMPLES = 100  # pages of tens of milliseconds: enough for a p50 and a p99 without minutes per phase

HTTP_FLOOR = Operation("http_floor", "HTTP floor (/__floor__)", "GET", "/__floor__", expect=(200,))

BULK_APPEND_PATH = f"{API}/events/"
BULK_BATCH = 1000


def bulk_events_body(state: State, batch: int) -> list[dict[str, Any]]:
    return [event_body(state.ids["session"], batch * BULK_BATCH + i) for i in range(BULK_BATCH)]
