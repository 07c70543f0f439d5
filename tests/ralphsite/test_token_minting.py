"""Tokens minted three ways (API, manage.py token_create, admin), never broader than the minter."""

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from ralphsite.core.errors import InvalidInput
from ralphsite.core.models import ApiToken, SeedRow, TokenPermission, TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db

TOKENS = "/api/v1/tokens/"


def _client(secret: str) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {secret}")


@pytest.fixture
def sessions() -> tuple[Session, Session, Session]:
    return (Session.objects.create(key="mine", project_path="/srv/widgets"),
            Session.objects.create(key="sibling", project_path="/srv/widgets"),
            Session.objects.create(key="elsewhere", project_path="/srv/gadgets"))


def _mint(client: APIClient, **body) -> dict:
    response = client.post(TOKENS, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_it_mints_a_session_token_by_key_whose_secret_is_shown_once_and_works(api: APIClient, sessions) -> None:
    mine = sessions[0]
    minted = _mint(api, scope="session", session="mine", permission="write", agent="executor-1",
                   expires_in=3600, label="executor of mine")
    assert minted["token"].startswith("ralph_")
    assert (minted["scope"], minted["session"], minted["agent"], minted["label"]) == (
        "session", mine.pk, "executor-1", "executor of mine")
    assert timezone.now() + timedelta(seconds=3500) < ApiToken.objects.get(pk=minted["id"]).expires_at
    agent = _client(minted["token"])
    assert [row["id"] for row in agent.get("/api/v1/sessions/").json()["results"]] == [mine.pk]
    listed = api.get(TOKENS).json()["results"]
    assert minted["id"] in {row["id"] for row in listed}
    assert all("token" not in row and minted["token"] not in str(row) for row in listed)


def test_a_session_token_mints_only_narrower_tokens_of_its_session(user, sessions) -> None:
    mine, sibling, _ = sessions
    parent = api_token_create(user=user, scope=TokenScope.SESSION, session_id=mine.pk,
                              expires_at=timezone.now() + timedelta(hours=1))
    client = _client(parent.secret)
    child = _mint(client, scope="session", session=mine.pk, permission="read", agent="reviewer")
    assert ApiToken.objects.get(pk=child["id"]).expires_at == parent.token.expires_at  # inherited
    for other in (sibling.pk, "elsewhere", "missing"):  # out of scope: as unknown as a session that does not exist
        assert_error_shape(client.post(TOKENS, {"scope": "session", "session": other}, format="json"),
                           400, "validation_error")
    assert_error_shape(client.post(TOKENS, {"scope": "project", "project_path": "/srv/widgets"}, format="json"),
                       403, "permission_denied")
    assert_error_shape(client.post(TOKENS, {"scope": "global"}, format="json"), 403, "permission_denied")
    outliving = {"scope": "session", "session": mine.pk, "expires_in": 7200}
    assert_error_shape(client.post(TOKENS, outliving, format="json"), 403, "permission_denied")
    reader = _client(child["token"])
    assert_error_shape(reader.post(TOKENS, {"scope": "session", "session": mine.pk, "permission": "read"},
                                   format="json"), 403, "permission_denied")


def test_an_agent_bound_token_mints_for_its_agent_only(user, sessions) -> None:
    parent = api_token_create(user=user, scope=TokenScope.SESSION, session_id=sessions[0].pk, agent="exec-1")
    client = _client(parent.secret)
    assert _mint(client, scope="session", session="mine", permission="read")["agent"] == "exec-1"
    assert_error_shape(client.post(TOKENS, {"scope": "session", "session": "mine", "agent": "exec-2"},
                                   format="json"), 403, "permission_denied")


def test_a_project_token_mints_tokens_of_its_project_and_its_sessions(user, sessions) -> None:
    client = _client(api_token_create(user=user, scope=TokenScope.PROJECT, project_path="/srv/widgets").secret)
    _mint(client, scope="session", session="sibling")
    _mint(client, scope="project", project_path="/srv/widgets", permission="read")
    assert_error_shape(client.post(TOKENS, {"scope": "project", "project_path": "/srv/gadgets"}, format="json"),
                       403, "permission_denied")


def test_it_refuses_a_field_that_does_not_apply_to_the_scope_naming_it(api: APIClient, user, sessions) -> None:
    """Dropping it would mint a token other than the one asked for (a global one, for a project_path)."""
    for body, named in (({"scope": "global", "project_path": "/srv/widgets"}, ["project_path"]),
                        ({"scope": "global", "session": "mine"}, ["session"]),
                        ({"scope": "project", "project_path": "/srv/widgets", "session": "mine"}, ["session"]),
                        ({"scope": "session", "session": "mine", "project_path": "/srv/widgets"}, ["project_path"])):
        error = assert_error_shape(api.post(TOKENS, body, format="json"), 400, "validation_error")
        assert list(error["details"]) == named, (body, error)
    assert ApiToken.objects.count() == 1  # the caller's own: nothing was minted
    with pytest.raises(InvalidInput, match="project_path"):  # the admin and the command mint through it too
        api_token_create(user=user, scope=TokenScope.GLOBAL, project_path="/srv/widgets")


def test_only_staff_owners_mint_global_tokens(sessions) -> None:
    person = get_user_model().objects.create_user(username="person")
    client = _client(api_token_create(user=person, scope=TokenScope.PROJECT, project_path="/srv/widgets").secret)
    assert_error_shape(client.post(TOKENS, {"scope": "global"}, format="json"), 403, "permission_denied")


def test_it_lists_and_revokes_only_the_tokens_the_caller_could_have_minted(user, api: APIClient, sessions) -> None:
    mine, sibling, _ = sessions
    session_token = api_token_create(user=user, scope=TokenScope.SESSION, session_id=mine.pk)
    other_session = api_token_create(user=user, scope=TokenScope.SESSION, session_id=sibling.pk)
    someone_else = api_token_create(user=get_user_model().objects.create_user(username="other", is_staff=True),
                                    scope=TokenScope.GLOBAL)
    client = _client(session_token.secret)
    assert [row["id"] for row in client.get(TOKENS).json()["results"]] == [session_token.token.pk]
    assert_error_shape(client.delete(f"{TOKENS}{other_session.token.pk}/"), 404, "not_found")
    assert_error_shape(api.delete(f"{TOKENS}{someone_else.token.pk}/"), 404, "not_found")
    assert api.delete(f"{TOKENS}{session_token.token.pk}/").status_code == 204
    assert_error_shape(client.get("/api/v1/sessions/"), 401, "not_authenticated")  # revoked at once
    assert ApiToken.objects.filter(pk=other_session.token.pk).exists()


def test_a_read_token_neither_mints_nor_revokes(user, sessions) -> None:
    reader = api_token_create(user=user, scope=TokenScope.SESSION, session_id=sessions[0].pk,
                              permission=TokenPermission.READ)
    client = _client(reader.secret)
    assert client.get(TOKENS).status_code == 200
    assert_error_shape(client.delete(f"{TOKENS}{reader.token.pk}/"), 403, "permission_denied")


def test_token_create_prints_the_secret_on_its_last_line(user, sessions) -> None:
    out = StringIO()
    call_command("token_create", "--user", "agent", "--session", "mine", "--read-only", "--agent", "exec-1",
                 "--expires", "7d", "--label", "from the shell", stdout=out)
    secret = out.getvalue().strip().splitlines()[-1]
    token = ApiToken.objects.get(prefix=secret[:12])
    assert (token.scope, token.session_id, token.permission, token.agent, token.label) == (
        "session", sessions[0].pk, "read", "exec-1", "from the shell")
    assert timedelta(days=6, hours=23) < token.expires_at - timezone.now() <= timedelta(days=7)
    assert _client(secret).get("/api/v1/sessions/").json()["results"][0]["id"] == sessions[0].pk


def test_token_create_mints_project_and_global_tokens_and_explains_refusals(user, sessions) -> None:
    out = StringIO()
    call_command("token_create", "--user", "agent", "--project", "/srv/widgets", stdout=out)
    assert ApiToken.objects.get(prefix=out.getvalue().strip().splitlines()[-1][:12]).project_path == "/srv/widgets"
    call_command("token_create", "--user", "agent", "--global", stdout=out)
    assert ApiToken.objects.filter(scope=TokenScope.GLOBAL).count() == 1
    get_user_model().objects.create_user(username="person")
    for args, message in ((["--user", "person"], "staff"), (["--user", "nobody"], "No user"),
                          (["--user", "agent", "--session", "missing"], "No session"),
                          (["--user", "agent", "--expires", "soon"], "--expires")):
        with pytest.raises(CommandError, match=message):
            call_command("token_create", *args, stdout=StringIO())


def test_the_admin_mints_through_the_service_and_shows_the_secret_once(admin_client: Client, admin_user,
                                                                       sessions) -> None:
    response = admin_client.post("/admin/ralphsite/apitoken/add/", {
        "user": admin_user.pk, "label": "from the console", "scope": "session", "session": sessions[0].pk,
        "project_path": "", "permission": "write", "agent": "exec-9", "expires_at_0": "", "expires_at_1": ""})
    assert response.status_code == 200, response.content
    token = ApiToken.objects.get(label="from the console")
    secret = response.context["secret"]
    assert secret in response.content.decode() and "no-store" in response["Cache-Control"]
    assert (token.scope, token.session_id, token.agent) == ("session", sessions[0].pk, "exec-9")
    assert _client(secret).get("/api/v1/sessions/").json()["results"][0]["id"] == sessions[0].pk
    change = admin_client.get(f"/admin/ralphsite/apitoken/{token.pk}/change/")
    assert change.status_code == 200 and secret not in change.content.decode()
    admin_client.post(f"/admin/ralphsite/apitoken/{token.pk}/delete/", {"post": "yes"})
    assert_error_shape(_client(secret).get("/api/v1/sessions/"), 401, "not_authenticated")


def test_the_admin_refuses_a_global_token_for_a_non_staff_user(admin_client: Client) -> None:
    person = get_user_model().objects.create_user(username="person")
    response = admin_client.post("/admin/ralphsite/apitoken/add/", {
        "user": person.pk, "label": "", "scope": "global", "project_path": "", "permission": "write",
        "agent": "", "expires_at_0": "", "expires_at_1": ""}, follow=True)
    assert "staff" in response.content.decode()
    assert not ApiToken.objects.filter(user=person).exists()



def test_a_staff_member_mints_in_the_admin_for_themselves_only(admin_user) -> None:
    """A token acts with its owner's permissions: minting one for a superuser would lend the minter theirs."""
    minter = get_user_model().objects.create_user(username="minter", password="pw-minter-1", is_staff=True)
    minter.user_permissions.set(Permission.objects.filter(codename__in=["add_apitoken", "view_apitoken"]))
    client = Client()
    client.force_login(minter)
    body = {"label": "", "scope": "global", "project_path": "", "permission": "write", "agent": "",
            "expires_at_0": "", "expires_at_1": ""}
    refused = client.post("/admin/ralphsite/apitoken/add/", {**body, "user": admin_user.pk})
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert not ApiToken.objects.filter(user=admin_user).exists()
    minted = client.post("/admin/ralphsite/apitoken/add/", {**body, "user": minter.pk})
    assert minted.status_code == 200 and ApiToken.objects.filter(user=minter).count() == 1
    assert_error_shape(_client(minted.context["secret"]).get("/api/v1/sessions/"), 403, "permission_denied")


def test_a_tokens_session_is_named_as_every_door_names_one(api: APIClient, user) -> None:
    """The one addressing rule (`ralphsite.core.addressing.by_reference`), found by the attacker's pass: minting
    looked a session up by id or key itself and took the first, so a global token naming a key two projects hold
    got a token for either; now that is 409 `ambiguous_key`, and a seed tool's id names its session here too,
    within the caller's scope only."""
    widgets = Session.objects.create(key="run-42", project_path="/srv/widgets")
    Session.objects.create(key="run-42", project_path="/srv/gadgets")
    assert_error_shape(api.post(TOKENS, {"scope": "session", "session": "run-42"}, format="json"), 409,
                       "ambiguous_key")
    guid = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"  # a Ralph V2 session's id in its file
    SeedRow.objects.create(kind="ralph", source_table="Sessions", source_key=guid,
                           object_model="sessions_app.session", object_id=widgets.pk)
    assert _mint(api, scope="session", session=guid)["session"] == widgets.pk
    of_widgets = _client(api_token_create(user=user, scope=TokenScope.PROJECT, project_path="/srv/widgets").secret)
    assert _mint(of_widgets, scope="session", session="run-42")["session"] == widgets.pk
    assert _mint(of_widgets, scope="session", session=guid)["session"] == widgets.pk
    of_gadgets = _client(api_token_create(user=user, scope=TokenScope.PROJECT, project_path="/srv/gadgets").secret)
    refused = of_gadgets.post(TOKENS, {"scope": "session", "session": guid}, format="json")
    assert_error_shape(refused, 400, "validation_error")
    assert refused.json()["details"] == {"session": [f"No session {guid!r}."]}
