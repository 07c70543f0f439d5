"""Scoped tokens work on every task route they can see (issue #27 §4): `sessions/{session}/tasks/{task}/…` by
id and by key, for global, project and session tokens, read-only and agent-bound; out of scope is a 404."""

from typing import Any

import pytest
from rest_framework.test import APIClient

from ralphsite.core.models import TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session, Task
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db

TOKENS = {  # name: (scope, permission, agent)
    "global": (TokenScope.GLOBAL, "write", ""),
    "project": (TokenScope.PROJECT, "write", ""),
    "project-read": (TokenScope.PROJECT, "read", ""),
    "session-agent": (TokenScope.SESSION, "write", "exec-1"),
    "session-read": (TokenScope.SESSION, "read", ""),
}


def client_for(user: Any, name: str, session: Session) -> APIClient:
    scope, permission, agent = TOKENS[name]
    minted = api_token_create(user=user, scope=scope, permission=permission, agent=agent,
                              session_id=session.pk if scope == TokenScope.SESSION else None,
                              project_path=session.project_path if scope == TokenScope.PROJECT else "")
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.secret}")


def task_paths(session: Session, task: Task) -> list[str]:
    return [f"/api/v1/sessions/{s}/tasks/{t}" for s in (session.pk, session.key) for t in (task.pk, task.key)]


@pytest.mark.parametrize("name", list(TOKENS))
def test_the_nested_task_routes_answer_every_token_that_sees_the_task(api: APIClient, user: Any,
                                                                      name: str) -> None:
    session = make_session(key="run-1", project_path="/srv/app")
    make_task(session, "task-1")
    client = client_for(user, name, session)
    claimer = client if TOKENS[name][2] else api
    claimed = claimer.post(f"/api/v1/sessions/{session.pk}/claim-task/", {"agent": "exec-1"}, format="json").json()
    task = Task.objects.get(pk=claimed["id"])
    writes = TOKENS[name][1] == "write"
    fence = {} if TOKENS[name][2] else {"claim": claimed["claim"], "agent": "exec-1"}
    for path in task_paths(session, task):
        assert client.get(f"{path}/").status_code == 200, path
        beat = client.post(f"{path}/heartbeat/", {"lease_seconds": 60, **fence}, format="json")
        assert beat.status_code == (200 if writes else 403), (path, beat.content)
        report = client.post(f"{path}/report/", {"implementation_report": "r", **fence}, format="json")
        assert report.status_code == (201 if writes else 403), (path, report.content)
    status = client.post(f"{task_paths(session, task)[-1]}/status/", {"status": "review_pending", **fence},
                         format="json")
    assert status.status_code == (200 if writes else 403), status.content


@pytest.mark.parametrize("name", [name for name in TOKENS if name != "global"])
def test_a_task_of_another_session_or_project_is_not_found(user: Any, name: str) -> None:
    mine = make_session(key="run-1", project_path="/srv/app")
    other = make_session(key="run-2", project_path="/srv/other")
    task = make_task(other, "task-1")
    client = client_for(user, name, mine)
    refused = 404 if TOKENS[name][1] == "write" else 403  # a read-only token's write is refused before lookup
    for path in task_paths(other, task):
        assert client.get(f"{path}/").status_code == 404, path
        assert client.post(f"{path}/heartbeat/", {"agent": "exec-1"}, format="json").status_code == refused, path
