"""/mcp/ with an admin login (the session cookie and its CSRF header), as a browser-based client sends it:
JSON is accepted as from a token (issue #28 §5), and the login reaches the tools its model permissions
allow, no more (issue #28 §1)."""

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from ralphsite.agents.mcp.registry import TOOLS
from tests.mcp.test_scoped_tokens import READING_TOOLS
from tests.sessions_app.factories import make_session, make_task

pytestmark = pytest.mark.django_db


def _login(user: Any) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/admin/")  # sets the CSRF cookie, as the admin's pages do
    return client


def _rpc(client: Client, method: str, params: dict[str, Any] | None = None, *, csrf: bool = True) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params else {})}
    headers = {"HTTP_X_CSRFTOKEN": client.cookies["csrftoken"].value} if csrf else {}
    return client.post("/mcp/", json.dumps(body), content_type="application/json",
                       HTTP_ACCEPT="application/json, text/event-stream", **headers)


def _tools(client: Client) -> set[str]:
    response = _rpc(client, "tools/list")
    assert response.status_code == 200, response.content
    return {tool["name"] for tool in response.json()["result"]["tools"]}


def _call(client: Client, name: str, **arguments: Any) -> tuple[bool, Any]:
    result = _rpc(client, "tools/call", {"name": name, "arguments": arguments}).json()["result"]
    return result["isError"], json.loads(result["content"][0]["text"])


def _staff(username: str, codename_regex: str | None) -> Any:
    staff = get_user_model().objects.create_user(username=username, is_staff=True)
    if codename_regex:
        staff.user_permissions.set(Permission.objects.filter(codename__regex=codename_regex))
    return staff


def test_a_superusers_login_speaks_json_to_mcp_as_a_token_does(user) -> None:
    make_task(make_session(key="mine"), "task-1", title="Schema")
    client = _login(user)
    assert _tools(client) == set(TOOLS)
    assert _call(client, "get_task", session="mine", task="task-1")[1]["title"] == "Schema"
    refused = _rpc(client, "tools/list", csrf=False)  # a login without its CSRF header is refused, in JSON
    assert refused.status_code == 403 and refused.json()["error"]["data"]["code"] == "permission_denied"


def test_a_staff_login_without_permissions_gets_no_tool() -> None:
    make_task(make_session(key="mine"), "task-1")
    client = _login(_staff("no-permissions", None))
    assert _tools(client) == set()
    is_error, body = _call(client, "get_task", session="mine", task="task-1")
    assert is_error and body["code"] == "permission_denied"
    is_error, body = _call(client, "create_task", session="mine", key="task-2", title="x")
    assert is_error and body["code"] == "permission_denied"


def test_a_view_only_staff_login_gets_the_reading_tools_only() -> None:
    make_task(make_session(key="mine"), "task-1", title="Schema")
    client = _login(_staff("viewer", r"^view_"))
    assert _tools(client) == READING_TOOLS
    assert _call(client, "get_task", session="mine", task="task-1")[1]["title"] == "Schema"
    is_error, body = _call(client, "claim_task", session="mine", agent="exec-1")
    assert is_error and body["code"] == "permission_denied"
