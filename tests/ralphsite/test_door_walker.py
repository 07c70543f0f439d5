"""One rule, every door (issue #26 §3): each kind of rule (a text's length, a JSON shape, an enum's choices, a
numeric bound, a cost's decimal places, a required field) walked through each way in (REST, bulk REST, MCP, the
`ralph` CLI, the admin, `import_seed`): every door answers the refusal REST answers, with the same code and
messages, and stores nothing.

The rules are walked on the ledger's events, the one resource every programmatic door writes; the admin writes no
events (the ledger is read-only there), so its door is walked on signals, which every door writes too. An import
is not a request to refuse: a row breaking a rule is reported with the rule's message and its value never stored
(test_limits_every_door.py and tests/seed_io/ hold the rest of each door's cases)."""

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from rest_framework.test import APIClient

from ledger_app.models import Issue, LedgerEvent
from ralphsite.core.api.fields import TEXT_MAX_CHARS
from ralphsite.tokens.services import MintedToken
from sessions_app.models import Session, Signal
from tests.cli.conftest import RALPH
from tests.mcp.conftest import mcp_agent
from tests.seed_io.helpers import import_seed, seed_database
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db
TOO_LONG = "a" * (TEXT_MAX_CHARS + 1)
Refusal = tuple[str, dict[str, Any]]  # (code, details by field)


@dataclass(frozen=True)
class Rule:
    kind: str
    body: dict[str, Any]  # an event's fields breaking the rule (with a valid type unless the rule is the type's)
    field: str  # the field the refusal names


RULES = [
    Rule("text length", {"type": "x-note", "message": TOO_LONG}, "message"),
    Rule("JSON shape", {"type": "x-note", "meta": "hello"}, "meta"),
    Rule("enum choice", {"type": "made_up"}, "type"),
    Rule("numeric bound", {"type": "x-note", "tokens_in": -1}, "tokens_in"),
    Rule("decimal places", {"type": "x-note", "cost_usd": 1e-11}, "cost_usd"),  # USD keeps 10
    Rule("required field", {"message": "no type"}, "type"),
]


@pytest.fixture
def session() -> Session:
    return make_session(key="doors")


def _rest(api: APIClient, session: Session, body: dict[str, Any]) -> Refusal:
    reply = api.post("/api/v1/events/", {"session": session.pk, **body}, format="json")
    assert reply.status_code == 400, reply.content[:300]
    return reply.json()["code"], reply.json()["details"]


def _bulk(api: APIClient, session: Session, body: dict[str, Any]) -> Refusal:
    reply = api.post("/api/v1/events/", [{"session": session.pk, **body}], format="json")
    assert reply.status_code == 400, reply.content[:300]
    [item] = reply.json()["details"]["items"]
    assert item["status"] == "invalid"
    return item["code"], item["errors"]


def _mcp(url: str, token: MintedToken, session: Session, body: dict[str, Any]) -> Refusal:
    with mcp_agent(url, token.secret) as agent:
        error = agent.error("append_event", session=session.key, **body)
    return error["code"], error["details"]


def _cli(url: str, token: MintedToken, session: Session, body: dict[str, Any], tmp_path: Path) -> Refusal:
    options = [f"--{name.replace('_', '-')}={json.dumps(value) if name in ('meta', 'data') else value}"
               for name, value in body.items() if name != "type"]
    done = subprocess.run([str(RALPH), "event", body.get("type", ""), "--json", *options], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "RALPH_URL": url, "RALPH_TOKEN": token.secret,
                               "RALPH_SESSION": session.pk})
    assert done.returncode != 0, done.stdout
    refusal = json.loads(done.stderr)
    return refusal["code"], refusal["details"]


@pytest.mark.django_db(transaction=True)  # the live server's threads see the session
@pytest.mark.parametrize("rule", RULES, ids=[rule.kind for rule in RULES])
def test_every_programmatic_door_refuses_an_event_breaking_a_rule_as_rest_does(
        rule: Rule, api: APIClient, live_server: Any, token: MintedToken, session: Session, tmp_path: Path) -> None:
    rest = _rest(api, session, rule.body)
    assert rest[0] == "validation_error" and set(rest[1]) == {rule.field}, rest
    doors: dict[str, Callable[[], Refusal]] = {
        "bulk": lambda: _bulk(api, session, rule.body),
        "mcp": lambda: _mcp(f"{live_server.url}/mcp/", token, session, rule.body),
    }
    # The CLI's type is a positional argument (argparse asks for it before any request), and a megabyte is past
    # what one command-line argument may hold (the kernel's limit): the CLI walks the other rules.
    if "type" in rule.body and rule.kind != "text length":
        doors["cli"] = lambda: _cli(live_server.url, token, session, rule.body, tmp_path)
    for door, refuse in doors.items():
        assert refuse() == rest, door
    assert not LedgerEvent.objects.filter(session=session).exists()


SIGNAL_RULES = [
    Rule("text length", {"type": "steer", "message": TOO_LONG}, "message"),
    Rule("enum choice", {"type": "shout", "message": "x"}, "type"),
    Rule("required field", {"message": "no type"}, "type"),
]


@pytest.mark.parametrize("rule", SIGNAL_RULES, ids=[rule.kind for rule in SIGNAL_RULES])
def test_the_admin_refuses_a_signal_breaking_a_rule_with_the_rest_message(
        rule: Rule, api: APIClient, admin_client: Client, session: Session) -> None:
    reply = api.post("/api/v1/signals/", {"session": session.pk, **rule.body}, format="json")
    assert reply.status_code == 400 and set(reply.json()["details"]) == {rule.field}, reply.json()
    [message] = reply.json()["details"][rule.field]
    page = admin_client.post("/admin/sessions_app/signal/add/", {
        "session": session.pk, "sent_at_0": "2026-11-28", "sent_at_1": "08:00:00", **rule.body})
    if page.status_code == 200:  # the form's own check: the form again, with the error by its field
        assert page.context["adminform"].form.errors == {rule.field: [message]}
    else:  # the service's check (model validation): the page again, with the refusal
        assert page.status_code == 302
        assert [str(note) for note in get_messages(page.wsgi_request)] == [f"Not saved: {rule.field}: {message}"]
    assert not Signal.objects.filter(session=session).exists()


def test_an_import_reports_what_breaks_a_rule_and_never_stores_it(tmp_path: Path) -> None:
    run = "run-doors"
    path = seed_database(tmp_path / "ralphy.db", "ralphy", {
        "runs": [{"id": run, "status": "running", "started_at": 1_767_225_600,
                  "config_json": "{}"}],
        "ledger": [{"run_id": run, "ts": 1_767_225_601, "type": "llm_call", "meta_json": '"hello"'}],
        "issues": [{"id": "iss-1", "run_id": run, "task_id": "t-1", "kind": "lint", "signature": "lint:a",
                    "message": TOO_LONG, "ts": 1_767_225_602}],
    })
    output = import_seed("ralphy", path)
    assert f"Ensure this field has no more than {TEXT_MAX_CHARS} characters." in output
    assert "meta" in output
    assert not Issue.objects.filter(message=TOO_LONG).exists()
    assert list(LedgerEvent.objects.values_list("meta", flat=True)) in ([], [{}])
