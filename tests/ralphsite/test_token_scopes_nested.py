"""The every-route scope walk, for the rows named within their session (issue #27 §5): every route of
`sessions/{session}/<rows>/{row}/` (tasks, questions: read from the router), the session and the row each by
id and by key, under global, project and session tokens, read-only and agent-bound. A row the token sees
is found on every route (a read answers 200, a write is not a 404; a read-only token's write is a 403); a row
of a session it does not see answers exactly as a row that does not exist."""

from typing import Any

import pytest
from django.db import models
from django.utils import timezone
from rest_framework.test import APIClient

from ralphsite.core.models import ApiToken, TokenPermission, TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session
from tests.api_mixins import ULID, ApiRoute, api_routes
from tests.ralphsite.test_key_addressing import BODIES
from tests.ralphsite.test_token_scopes import PROJECTS, world  # noqa: F401 (the walk's rows: the fixture)
from tests.route_rows import route_model

pytestmark = pytest.mark.django_db

NESTED_ROUTES = [route for route in api_routes() if route.prefix.startswith("sessions/(?P<session>")]
TOKENS = {  # name: (scope, permission, agent)
    "global": (TokenScope.GLOBAL, TokenPermission.WRITE, ""),
    "global-read": (TokenScope.GLOBAL, TokenPermission.READ, ""),
    "project": (TokenScope.PROJECT, TokenPermission.WRITE, ""),
    "project-read": (TokenScope.PROJECT, TokenPermission.READ, ""),
    "session": (TokenScope.SESSION, TokenPermission.WRITE, ""),
    "session-read": (TokenScope.SESSION, TokenPermission.READ, ""),
    "session-agent": (TokenScope.SESSION, TokenPermission.WRITE, "exec-1"),
}
Rows = dict[type[models.Model], models.Model]


def test_it_walks_the_nested_routes_of_tasks_and_questions() -> None:
    walked = {(route.prefix.rsplit("/", 1)[1], route.action) for route in NESTED_ROUTES}
    assert {("tasks", "retrieve"), ("tasks", "status"), ("tasks", "heartbeat"), ("tasks", "destroy"),
            ("questions", "retrieve"), ("questions", "answer"), ("questions", "partial_update")} <= walked


def token_client(user: Any, name: str, mine: Session) -> APIClient:
    scope, permission, agent = TOKENS[name]
    target = {TokenScope.SESSION: {"session_id": mine.pk}, TokenScope.PROJECT: {"project_path": PROJECTS["mine"]}}
    minted = api_token_create(user=user, scope=scope, permission=permission, agent=agent, **target.get(scope, {}))
    ApiToken.objects.filter(pk=minted.token.pk).update(last_used_at=timezone.now())
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.secret}")


def paths(route: ApiRoute, rows: Rows) -> list[str]:
    """The route's path for the row of its model in `rows`: its session and itself each by id and by key."""
    row, session = rows[route_model(route)], rows[Session]
    rows_name = route.prefix.rsplit("/", 1)[1]
    tail = route.path.split(f"/{rows_name}/{ULID}/", 1)[1]
    return [f"/api/v1/sessions/{session_ref}/{rows_name}/{row_ref}/{tail}"
            for session_ref in (session.pk, session.key) for row_ref in (row.pk, row.key)]


def send(client: APIClient, route: ApiRoute, path: str, bound: bool) -> Any:
    if route.method == "get":
        return client.get(path)
    body = dict(BODIES.get(route.action, {}))
    if bound:
        body.pop("agent", None)  # an agent-bound token names its agent itself
    return getattr(client, route.method)(path, body, format="json")


@pytest.mark.parametrize("name", list(TOKENS))
def test_every_nested_route_by_id_and_key_keeps_a_token_to_its_scope(user: Any, world: dict[str, Rows],  # noqa: F811
                                                                    name: str) -> None:
    scope, permission, agent = TOKENS[name]
    client = token_client(user, name, world["mine"][Session])
    sees = {"global": set(PROJECTS), "project": {"mine", "sibling"}, "session": {"mine"}}[scope]
    problems = []
    # Deletes last: each removes the row the other routes walk (by its last path only).
    for route in sorted(NESTED_ROUTES, key=lambda route: route.method == "delete"):
        for owner in PROJECTS:
            walked = paths(route, world[owner])
            for path in walked[-1:] if route.method == "delete" else walked:
                response = send(client, route, path, bound=bool(agent))
                code = response.json().get("code") if response.content else ""
                if route.method != "get" and permission == TokenPermission.READ:
                    expected_ok = (response.status_code, code) == (403, "permission_denied")
                elif owner in sees:
                    expected_ok = response.status_code == 200 if route.method == "get" else response.status_code != 404
                else:
                    expected_ok = (response.status_code, code) == (404, "not_found")
                if not expected_ok:
                    problems.append(f"{name} {route.method.upper()} {path} ({owner}): {response.status_code} {code}")
    assert not problems, "\n".join(problems)
