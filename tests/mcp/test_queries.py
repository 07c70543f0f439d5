"""The reading tools run a constant number of queries whatever the number of rows (in-process requests)."""

import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from sessions_app.models import Iteration, Question, Session, SessionStateEntry
from sessions_app.services.questions import feedback_batch_create
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

READING_TOOLS = ("get_progress", "get_waves", "get_questions", "get_feedback", "get_state", "get_plan", "get_session")


def fill(session: Session, rows: int) -> None:
    previous = None
    for number in range(rows):
        previous = make_task(session, f"task-{number}", depends_on=(previous,) if previous else ())
        Question.objects.create(session=session, key=f"Q-{number}", category="technical", text="?")
        SessionStateEntry.objects.create(session=session, key=f"k{number}", value=number)
    iteration, _ = Iteration.objects.get_or_create(session=session, number=1)
    for number in range(rows):
        feedback_batch_create(data={"iteration": iteration, "batch_timestamp": f"b{number}", "items": [
            {"issue_key": f"FB-{number}-{item}", "severity": "quality", "description": "x"} for item in range(3)]})


def call(api: APIClient, name: str, session: Session) -> Any:
    reply = api.post("/mcp/", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": name, "arguments": {"session": session.id}}}, format="json")
    result = reply.json()["result"]
    assert result["isError"] is False, result
    return json.loads(result["content"][0]["text"])


@pytest.mark.parametrize("name", READING_TOOLS)
def test_reading_tools_run_the_same_queries_for_2_rows_and_for_20(api: APIClient, name: str) -> None:
    counts = []
    for rows in (2, 20):
        session = make_session(key=f"rows-{rows}")
        fill(session, rows)
        with CaptureQueriesContext(connection) as captured:
            call(api, name, session)
        counts.append(len(captured))
    assert counts[0] == counts[1] and counts[0] <= 6, counts
