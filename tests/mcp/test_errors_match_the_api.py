"""A failing tool answers what its REST twin answers: the same code, message and details, as isError."""

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from sessions_app.models import Session
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db(transaction=True)
V1 = "/api/v1"


@pytest.fixture
def session() -> Session:
    session = make_session(key="errors")
    make_task(session, "task-1", title="Schema")
    make_task(session, "task-2", title="Claimed", status="in_progress", claimed_by="exec-1")
    return session


def rest_error(api: APIClient, path: str, body: dict[str, Any], status: int) -> dict[str, Any]:
    reply = api.post(f"{V1}/{path}", body, format="json")
    assert reply.status_code == status, reply.json()
    return reply.json()


def without_empty_details(error: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in error.items() if value or name != "details"}


def test_tool_errors_are_the_rest_twins_errors(api: APIClient, connect: Callable[..., Any],
                                               session: Session) -> None:
    task_1, task_2 = (session.tasks.get(key=key).id for key in ("task-1", "task-2"))
    s = {"session": "errors"}
    cases = [
        # (tool, arguments, REST path, REST body, REST status)
        ("update_task_status", {"task": "task-1", "status": "finished"},
         f"tasks/{task_1}/status/", {"status": "finished"}, 400),
        ("heartbeat_task", {"task": "task-2", "agent": "exec-9"},
         f"tasks/{task_2}/heartbeat/", {"agent": "exec-9"}, 409),
        ("release_task", {"task": "task-1", "agent": "exec-1"},
         f"tasks/{task_1}/release/", {"agent": "exec-1"}, 409),
        ("submit_review", {"task": "task-1", "review_report": "ok", "verdict": "qualified"},
         f"tasks/{task_1}/review/", {"review_report": "ok", "verdict": "qualified"}, 409),
        ("create_task", {"key": "task-1", "title": "Again"},
         "tasks/", {"session": session.id, "key": "task-1", "title": "Again"}, 409),
        ("create_task", {"key": "task-9", "title": "Orphan", "depends_on": ["task-404"]},
         "tasks/", {"session": session.id, "key": "task-9", "title": "Orphan", "depends_on": ["task-404"]}, 400),
        ("append_event", {"type": "made_up"}, "events/", {"session": session.id, "type": "made_up"}, 400),
        ("append_event", {"type": "x-test", "meta": "hello"}, "events/",
         {"session": session.id, "type": "x-test", "meta": "hello"}, 400),  # issue #26 §1: a shape, one message
        ("add_token_usage", {"model": "m", "input_tokens": -1, "output_tokens": 1, "cost_usd": 0.5},
         "token-usage/", {"session": session.id, "model": "m", "input_tokens": -1, "output_tokens": 1,
                          "cost_usd": 0.5}, 400),
        ("create_signal", {"type": "shout"}, "signals/", {"session": session.id, "type": "shout"}, 400),
        ("record_pattern", {"pattern_type": "gossip", "description": "x"},
         "patterns/record/", {"pattern_type": "gossip", "description": "x"}, 400),
    ]
    with connect() as agent:
        for tool, arguments, path, body, status in cases:
            if tool != "record_pattern":
                arguments = {**s, **arguments}
            expected = without_empty_details(rest_error(api, path, body, status))
            assert agent.error(tool, **arguments) == expected, tool
        agent.ok("create_checkpoint", key="chk-1", git_ref="HEAD", **s)
        agent.ok("create_checkpoint", key="chk-1", git_ref="HEAD", **s)  # the same content: a retry
        expected = rest_error(api, "checkpoints/", {"session": session.id, "key": "chk-1", "git_ref": "main"}, 409)
        assert agent.error("create_checkpoint", key="chk-1", git_ref="main", **s) == expected


def test_addressing_and_argument_errors_name_the_argument(connect: Callable[..., Any], session: Session) -> None:
    with connect() as agent:
        assert agent.error("get_task", session="no-such", task="task-1") == {
            "code": "not_found", "message": "No session 'no-such' here.", "details": {"session": "no-such"}}
        assert agent.error("get_task", session="errors", task="task-404")["details"] == {"task": "task-404"}
        assert agent.error("answer_question", session="errors", question="Q-1", answer="x")["code"] == "not_found"
        unknown = agent.error("get_progress", session="errors", verbose=True)
        assert unknown["code"] == "validation_error"
        assert unknown["details"] == {"verbose": ["Unknown argument; allowed: session."]}
        missing = agent.error("get_task", session="errors")
        assert missing["details"] == {"task": ["This field is required."]}  # the API's words
        assert agent.error("claim_task", session="errors")["details"] == {"agent": ["This field is required."]}
        wrong_type = agent.error("claim_task", session="errors", agent="exec-1", lease_seconds="soon")
        assert wrong_type["details"] == {"lease_seconds": ["A valid integer is required."]}
        assert agent.error("get_task", session=7, task="task-1")["details"] == {"session": ["Expected a string."]}
