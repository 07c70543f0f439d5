"""One rule, every door (issue #26 §3): each kind of rule (a text's length, a JSON shape, an enum's choices, a
numeric bound, a cost's decimal places, a required field) walked through each way in (REST, bulk REST, MCP, the
`ralph` CLI, the admin, `import_seed`): every door answers the refusal REST answers, with the same code and
messages, and stores nothing.

The rules are walked on the ledger's events, the one resource every programmatic door writes; the CLI reads a long
message from standard input (`--message -`: a megabyte does not fit one command-line argument) and leaves a
missing type to the server. The admin writes no events (the ledger is read-only there), so its door is walked on
signals, which every door writes too, and on tasks, whose form has JSON and numeric fields (and inlines). An import
is not a request to refuse: a value breaking a rule is reported with REST's message and set aside (the field's
default stored, the tool's value kept on its seed row), a row lacking what it requires is left out; walked on
ralphy's ledger, issues and tasks (test_limits_every_door.py and tests/seed_io/ hold the rest of each door's
cases)."""

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.db import models
from django.test import Client
from rest_framework.test import APIClient

from ledger_app.models import Issue, LedgerEvent
from ralphsite.core.api.fields import TEXT_MAX_CHARS
from ralphsite.tokens.services import MintedToken
from sessions_app.models import Session, Signal, Task
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
    """`ralph event [TYPE] --json --<field>=…`, the message read from standard input (`--message -`, as a shell
    loop pipes a log: a megabyte does not fit one command-line argument)."""
    options = [f"--{name.replace('_', '-')}={json.dumps(value) if name in ('meta', 'data') else value}"
               for name, value in body.items() if name not in ("type", "message")]
    given_type = [body["type"]] if "type" in body else []
    message = ["--message=-"] if "message" in body else []
    done = subprocess.run([str(RALPH), "event", *given_type, "--json", *message, *options],
                          input=body.get("message", ""), capture_output=True, text=True, timeout=60, cwd=tmp_path,
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
        "cli": lambda: _cli(live_server.url, token, session, rule.body, tmp_path),
    }
    for door, refuse in doors.items():
        assert refuse() == rest, door
    assert not LedgerEvent.objects.filter(session=session).exists()


@dataclass(frozen=True)
class AdminDoor:
    """A model's add page beside its REST route: `body` is what REST requires besides the session and the rule's
    fields, `form` a valid admin form of the session but the rule's fields."""

    model: type[models.Model]
    route: str
    body: dict[str, Any]
    form: Callable[[Session], dict[str, Any]]


SIGNALS = AdminDoor(Signal, "signals", {}, lambda session: {
    "session": session.pk, "sent_at_0": "2026-11-28", "sent_at_1": "08:00:00"})
TASKS = AdminDoor(Task, "tasks", {"key": "t-1", "title": "T"}, lambda session: {  # JSON and numeric fields, inlines
    "session": session.pk, "key": "t-1", "title": "T", "task_type": "sequential", "priority": "medium",
    "sequence": 0, "iteration_created": 1, "iteration_updated": 1, "iteration_count": 0, "success_criteria": "[]",
    "files_changed": "[]", "scope": "null",
    **{f"{inline}-{name}": 0 for inline in ("dependencies", "attempts", "files")
       for name in ("TOTAL_FORMS", "INITIAL_FORMS")}})
ADMIN_RULES = [
    (SIGNALS, Rule("text length", {"type": "steer", "message": TOO_LONG}, "message")),
    (SIGNALS, Rule("enum choice", {"type": "shout", "message": "x"}, "type")),
    (SIGNALS, Rule("required field", {"message": "no type"}, "type")),
    (TASKS, Rule("JSON shape", {"success_criteria": "one"}, "success_criteria")),
    (TASKS, Rule("JSON shape of an item", {"success_criteria": [1]}, "success_criteria")),
    (TASKS, Rule("numeric bound", {"wave": -1}, "wave")),
    (TASKS, Rule("numeric bound of the column", {"sequence": 2**40}, "sequence")),  # SQLite would store it
]


def _form_value(model: type[models.Model], name: str, value: Any) -> Any:
    """A value as the admin's form takes it: a JSON field's as JSON text."""
    return json.dumps(value) if isinstance(model._meta.get_field(name), models.JSONField) else value


@pytest.mark.parametrize(("door", "rule"), ADMIN_RULES,
                         ids=[f"{door.route}-{rule.kind}" for door, rule in ADMIN_RULES])
def test_the_admin_refuses_a_row_breaking_a_rule_with_the_rest_message(
        door: AdminDoor, rule: Rule, api: APIClient, admin_client: Client, session: Session) -> None:
    reply = api.post(f"/api/v1/{door.route}/", {"session": session.pk, **door.body, **rule.body}, format="json")
    assert reply.status_code == 400 and set(reply.json()["details"]) == {rule.field}, reply.json()
    [message] = reply.json()["details"][rule.field]
    meta = door.model._meta
    page = admin_client.post(f"/admin/{meta.app_label}/{meta.model_name}/add/", {
        **door.form(session), **{name: _form_value(door.model, name, value) for name, value in rule.body.items()}})
    if page.status_code == 200:  # the form's own check: the form again, with the error by its field
        assert page.context["adminform"].form.errors == {rule.field: [message]}
    else:  # the service's check (model validation): the page again, with the refusal
        assert page.status_code == 302
        assert [str(note) for note in get_messages(page.wsgi_request)] == [f"Not saved: {rule.field}: {message}"]
    assert not door.model.objects.filter(session=session).exists()


IMPORT_RULES = [  # ralphy's tasks: (rule, the task row's columns breaking it, its REST body)
    (Rule("enum choice", {"task_id": "t-enum", "status": "made_up"}, "status"), {"status": "made_up"}),
    (Rule("numeric bound", {"task_id": "t-count", "iter_count": -3}, "iteration_count"), {"iter_count": -3}),
    (Rule("numeric bound of the column", {"task_id": "t-big", "iter_count": 2**40}, "iteration_count"),
     {"iter_count": 2**40}),
    (Rule("required field", {"task_id": ""}, "key"), {"key": ""}),
]
EVENT_IMPORT_RULES = [  # ralphy's ledger: rules of the event itself (the domain's, not only REST's)
    Rule("enum choice", {"type": "made_up"}, "type"),
    Rule("required field", {"type": ""}, "type"),
    Rule("numeric bound", {"type": "x-note", "tokens_in": -1}, "tokens_in"),
    Rule("the retention record's type, on a session's event", {"type": "ledger_purged"}, "type"),
]


def test_an_import_reports_what_breaks_a_rule_with_the_rest_message_and_never_stores_it(
        api: APIClient, tmp_path: Path) -> None:
    run = "run-doors"
    path = seed_database(tmp_path / "ralphy.db", "ralphy", {
        "runs": [{"id": run, "status": "running", "started_at": 1_767_225_600,
                  "config_json": "{}"}],
        "ledger": [{"run_id": run, "ts": 1_767_225_601, "type": "backend_call_finished", "meta_json": '"hello"'},
                   *({"run_id": run, "ts": 1_767_225_603, **rule.body} for rule in EVENT_IMPORT_RULES)],
        "issues": [{"id": "iss-1", "run_id": run, "task_id": "t-1", "kind": "lint", "signature": "lint:a",
                    "message": TOO_LONG, "ts": 1_767_225_602}],
        "tasks": [{"run_id": run, "status": "pending", **rule.body} for rule, _rest in IMPORT_RULES],
    })
    output = import_seed("ralphy", path)
    assert f"Ensure this field has no more than {TEXT_MAX_CHARS} characters." in output
    assert "meta" in output
    assert not Issue.objects.filter(message=TOO_LONG).exists()
    assert list(LedgerEvent.objects.values_list("meta", flat=True)) in ([], [{}])
    session = Session.objects.get()
    for rule, rest_body in IMPORT_RULES:
        reply = api.post("/api/v1/tasks/", {"session": session.pk, "key": "t-rest", "title": "t", **rest_body},
                         format="json")
        assert reply.status_code == 400 and set(reply.json()["details"]) == {rule.field}, reply.json()
        [message] = reply.json()["details"][rule.field]
        assert message in output, (rule.kind, message)
    for rule in EVENT_IMPORT_RULES:  # the event's row skipped, listed with REST's message
        reply = api.post("/api/v1/events/", {"session": session.pk, **rule.body}, format="json")
        assert reply.status_code == 400 and set(reply.json()["details"]) == {rule.field}, reply.json()
        [message] = reply.json()["details"][rule.field]
        assert f"{rule.field}: {message}" in output, (rule.kind, message)
    assert not LedgerEvent.objects.exclude(type="backend_call_finished").exists()
    # Set aside (the field's default, the tool's value kept on its seed row) or the row left out: never stored.
    assert sorted(Task.objects.values_list("key", "status", "iteration_count")) == [
        ("t-big", "not_started", 0), ("t-count", "not_started", 0), ("t-enum", "not_started", 0)]
