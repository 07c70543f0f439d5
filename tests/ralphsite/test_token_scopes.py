"""The every-route scope test (#16): every route of the API router, read from the router (so a
resource added later is walked too), under tokens of each scope and permission.

Three sessions — `mine` and `sibling` in project /srv/widgets, `elsewhere` in /srv/gadgets — each get
one row of every model the router serves (built generically from the model's fields, so a new model
needs nothing here). Every string of a session's rows carries that session's marker, so a response
that leaks a row of a session the token may not see — a list, a filter, a search, a statistic —
shows its marker.
"""

import itertools
import json
import re
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import models
from django.utils import timezone
from rest_framework.test import APIClient

from ledger_app.models import LedgerEvent
from ledger_app.stats import STATS
from ralphsite.core.access import scope_fields
from ralphsite.core.models import ApiToken, TokenPermission, TokenScope
from ralphsite.tokens.services import api_token_create
from sessions_app.models import Session
from tests.api_mixins import ApiRoute, api_routes, assert_error_shape
from tests.route_rows import ROUTE_MODELS, RowBuilder, marker, route_model, route_path, session_of

pytestmark = pytest.mark.django_db

ROUTES = api_routes()
WRITE_METHODS = ("post", "put", "patch", "delete")

PROJECTS = {"mine": "/srv/widgets", "sibling": "/srv/widgets", "elsewhere": "/srv/gadgets"}
Rows = dict[type[models.Model], models.Model]


@pytest.fixture
def world() -> dict[str, Rows]:
    """Each session's rows by model (the session itself under Session)."""
    built = {}
    for key, project in PROJECTS.items():
        builder = RowBuilder(Session.objects.create(key=key, project_path=project, user_request=marker(key)))
        for model in ROUTE_MODELS:
            if session_of(model) is not None:
                builder.row(model)
        built[key] = builder.rows
    return built


# -- the tokens ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Caller:
    """A token and what it may not see: the keys of the sessions hidden from it."""

    client: APIClient
    scope: str
    permission: str
    hidden: tuple[str, ...]

    @property
    def writable(self) -> bool:
        return self.permission == TokenPermission.WRITE


def caller(user: Any, scope: str, permission: str, sessions: dict[str, Session], key: str = "mine") -> Caller:
    target = {TokenScope.SESSION: {"session_id": sessions[key].pk},
              TokenScope.PROJECT: {"project_path": PROJECTS[key]}}.get(scope, {})
    minted = api_token_create(user=user, scope=scope, permission=permission, **target)
    ApiToken.objects.filter(pk=minted.token.pk).update(last_used_at=timezone.now())
    hidden = tuple(other for other in PROJECTS if (scope == TokenScope.SESSION and other != key)
                   or (scope == TokenScope.PROJECT and PROJECTS[other] != PROJECTS[key]))
    return Caller(APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.secret}"), scope, permission, hidden)


SCOPED = [(scope, permission) for scope in (TokenScope.SESSION, TokenScope.PROJECT)
          for permission in (TokenPermission.READ, TokenPermission.WRITE)]


# -- what a route is sent -----------------------------------------------------------------------

def _send(client: APIClient, method: str, path: str, body: Any = None) -> Any:
    return getattr(client, method)(path, body if body is not None else {}, format="json")


def _leaks(response: Any, world: dict[str, Rows], hidden: tuple[str, ...]) -> list[str]:
    """The hidden sessions whose marker or id the response shows."""
    text = response.content.decode(errors="replace")
    return [key for key in hidden if marker(key) in text or world[key][Session].pk in text]


def _snapshot(world: dict[str, Rows], keys: tuple[str, ...]) -> dict[str, Any]:
    return {f"{key} {model._meta.label}": json.dumps(
        list(model._default_manager.filter(pk=row.pk).values()), default=str, sort_keys=True)
        for key in keys for model, row in world[key].items()}


# -- the test -----------------------------------------------------------------------------------

def test_it_walks_a_route_of_every_kind() -> None:
    actions = {route.action for route in ROUTES}
    assert {"list", "retrieve", "create", "update", "partial_update", "destroy", "claim_task", "head",
            "interrupted", "pending"} <= actions
    assert len(ROUTE_MODELS) > 40


def _reads(route: ApiRoute, world: dict[str, Rows], hidden: str) -> list[str]:
    """The GETs of a route that must show nothing of `hidden`: the route itself (on every statistic),
    its list filtered by the hidden session, a search for the hidden session's marker."""
    if getattr(route.viewset, "lookup_field", "") == "name" and route.detail:
        return [route.path.rsplit("/", 2)[0] + f"/{name}/?session={world[hidden][Session].pk}" for name in STATS]
    paths = [route_path(route, world["mine"])]
    filterset = getattr(route.viewset, "filterset_class", None)
    if route.action == "list" and filterset is not None and "session" in filterset.base_filters:
        paths.append(f"{route.path}?session={world[hidden][Session].pk}")
    if route.action in ("list", "interrupted") and route_model(route) is Session:
        paths.append(f"{route.path}?project_path={PROJECTS[hidden]}")
    if route.prefix == "search":
        paths += [f"{route.path}?q={marker(hidden)}*", f"{route.path}?session={world[hidden][Session].pk}"]
    return paths


def _same_as_missing(hidden: Any, missing: Any) -> bool:
    """An out-of-scope row answers exactly as a row that does not exist, and never with success."""
    return hidden.status_code >= 400 and (hidden.status_code, hidden.json().get("code")) == (
        missing.status_code, missing.json().get("code"))


@pytest.mark.parametrize(("scope", "permission"), SCOPED, ids=[f"{s}-{p}" for s, p in SCOPED])
def test_every_route_keeps_a_scoped_token_to_its_scope(user, world, scope: str, permission: str) -> None:
    sessions = {key: rows[Session] for key, rows in world.items()}
    Session.objects.update(last_activity_at=timezone.now() - timedelta(days=1))  # listed as interrupted
    who = caller(user, scope, permission, sessions)
    before = _snapshot(world, who.hidden)
    problems: list[str] = []
    for route in ROUTES:
        model = route_model(route)
        path_hidden, path_missing = route_path(route, world[who.hidden[0]]), route_path(route, None)
        is_row = route.detail and model is not None
        if route.method == "get":
            for hidden_key in who.hidden:
                for path in _reads(route, world, hidden_key):
                    if leaked := _leaks(_send(who.client, "get", path), world, who.hidden):
                        problems.append(f"GET {path} shows {leaked}")
            if is_row and not _same_as_missing(_send(who.client, "get", path_hidden),
                                               _send(who.client, "get", path_missing)):
                problems.append(f"GET {path_hidden} is not answered as a missing row")
            continue
        if not who.writable:
            response = _send(who.client, route.method, route_path(route, world["mine"]))
            if response.status_code != 403 or response.json().get("code") != "permission_denied":
                problems.append(f"{route.method.upper()} {route.path} with a read token: {response.status_code}")
        elif is_row and not _same_as_missing(_send(who.client, route.method, path_hidden),
                                             _send(who.client, route.method, path_missing)):
            problems.append(f"{route.method.upper()} {path_hidden} is not answered as a missing row")
    assert not problems, "\n".join(problems)
    assert _snapshot(world, who.hidden) == before, "a hidden session's row changed"


def test_a_global_token_sees_what_the_scoped_ones_must_not(user, world) -> None:
    """The walk above proves something only if the hidden rows are there to leak: a global token is
    shown every session's rows on every list, the statistics, the search and the sync queue."""
    Session.objects.update(last_activity_at=timezone.now() - timedelta(days=1))
    who = caller(user, TokenScope.GLOBAL, TokenPermission.READ, {key: rows[Session] for key, rows in world.items()})
    unseen = []
    for route in ROUTES:
        model = route_model(route)
        scoped_list = route.action == "list" and model is not None and session_of(model) is not None
        if route.method == "get" and (scoped_list or route.action in ("interrupted", "pending")
                                      or (route.prefix in ("search", "stats") and route.detail)):
            paths = _reads(route, world, "elsewhere")[:1] if route.prefix != "search" else _reads(
                route, world, "elsewhere")[1:2]
            if route.prefix == "stats":
                paths = [path.split("?")[0] for path in _reads(route, world, "elsewhere")]
            shown = [path for path in paths if _leaks(_send(who.client, "get", path), world, ("elsewhere",))]
            if not shown:
                unseen.append(route.path)
    assert not unseen, unseen


def test_collection_actions_act_on_the_tokens_sessions_only(user, world) -> None:
    from conversations_app.models import Chat
    from ledger_app.models import DeadLetter

    sessions = {key: rows[Session] for key, rows in world.items()}
    who = caller(user, TokenScope.SESSION, TokenPermission.WRITE, sessions)
    hidden_chat = world["elsewhere"][Chat]
    marked = _send(who.client, "post", "/api/v1/sync/mark-synced/",
                   {"items": [{"entity": "chat", "id": hidden_chat.pk, "remote_id": "r-1",
                               "version": hidden_chat.version}]})
    assert marked.status_code == 404 and not Chat.objects.filter(pk=hidden_chat.pk, remote_id="r-1").exists()
    DeadLetter.objects.update(retry_after=timezone.now() - timedelta(minutes=1))
    claimed = _send(who.client, "post", "/api/v1/dead-letters/claim/")
    assert claimed.status_code == 200 and claimed.json()["id"] == world["mine"][DeadLetter].pk
    assert _send(who.client, "post", "/api/v1/dead-letters/claim/").status_code == 204  # not another session's


def test_a_session_token_creates_no_session_and_a_project_token_only_in_its_project(user, world) -> None:
    sessions = {key: rows[Session] for key, rows in world.items()}
    session_token = caller(user, TokenScope.SESSION, TokenPermission.WRITE, sessions)
    assert_error_shape(_send(session_token.client, "post", "/api/v1/sessions/", {"project_path": "/srv/widgets"}),
                       403, "permission_denied")
    assert_error_shape(_send(session_token.client, "delete", f"/api/v1/sessions/{sessions['mine'].pk}/"),
                       403, "permission_denied")
    project_token = caller(user, TokenScope.PROJECT, TokenPermission.WRITE, sessions)
    created = _send(project_token.client, "post", "/api/v1/sessions/", {"project_path": "/srv/widgets"})
    assert created.status_code == 201, created.content
    for elsewhere in ({"project_path": "/srv/gadgets"}, {}):
        assert_error_shape(_send(project_token.client, "post", "/api/v1/sessions/", elsewhere), 403,
                           "permission_denied")
    moved = _send(project_token.client, "patch", f"/api/v1/sessions/{created.json()['id']}/",
                  {"project_path": "/srv/gadgets"})
    assert_error_shape(moved, 403, "permission_denied")
    assert Session.objects.filter(project_path="/srv/gadgets").count() == 1


def test_shared_rows_are_read_by_every_token_and_written_by_global_write_tokens_only(user, world) -> None:
    from ledger_app.models import ModelPrice

    sessions = {key: rows[Session] for key, rows in world.items()}
    price = ModelPrice.objects.create(model="gpt-test", valid_from=timezone.now(), input_per_mtok=Decimal("1"))
    body = {"model": "gpt-other", "valid_from": "2026-01-01T00:00:00Z", "input_per_mtok": "1"}
    for scope in (TokenScope.SESSION, TokenScope.PROJECT):
        who = caller(user, scope, TokenPermission.WRITE, sessions)
        assert _send(who.client, "get", f"/api/v1/model-prices/{price.pk}/").status_code == 200
        assert_error_shape(_send(who.client, "post", "/api/v1/model-prices/", body), 403, "permission_denied")
        assert_error_shape(_send(who.client, "delete", f"/api/v1/model-prices/{price.pk}/"), 403,
                           "permission_denied")
    assert _send(caller(user, TokenScope.GLOBAL, TokenPermission.WRITE, sessions).client, "post",
                 "/api/v1/model-prices/", body).status_code == 201


def test_tokens_of_different_scopes_alternating_on_every_detail_route_each_see_their_own(user, world) -> None:
    """The detail lookup is compiled once per viewset class and scope lookup: a scope must be a
    parameter of it, never the first caller's view served to the next."""
    sessions = {key: rows[Session] for key, rows in world.items()}
    callers = {"global": caller(user, TokenScope.GLOBAL, TokenPermission.READ, sessions),
               "mine": caller(user, TokenScope.SESSION, TokenPermission.READ, sessions),
               "elsewhere": caller(user, TokenScope.SESSION, TokenPermission.READ, sessions, key="elsewhere"),
               "widgets": caller(user, TokenScope.PROJECT, TokenPermission.READ, sessions),
               "gadgets": caller(user, TokenScope.PROJECT, TokenPermission.READ, sessions, key="elsewhere")}
    sees = {"global": {"mine", "elsewhere"}, "mine": {"mine"}, "elsewhere": {"elsewhere"}, "widgets": {"mine"},
            "gadgets": {"elsewhere"}}
    wrong = []
    for route in ROUTES:
        model = route_model(route)
        if route.action != "retrieve" or model is None or (session_of(model) is None and model is not Session):
            continue
        for _round, name, owner in itertools.product(range(2), callers, ("mine", "elsewhere")):
            path = route_path(route, world[owner])
            expected = 200 if owner in sees[name] else 404
            if (status := _send(callers[name].client, "get", path).status_code) != expected:
                wrong.append(f"{name} GET {path}: {status}, expected {expected}")
    assert not wrong, "\n".join(wrong)


def test_the_chain_head_a_scoped_token_sees_is_the_newest_event_of_its_own_sessions(user, world) -> None:
    """`events/head/` names an event: a scoped token is shown its own sessions' newest, never the
    chain's head when another session wrote it (`elsewhere`, built last, holds the newest events)."""
    sessions = {key: rows[Session] for key, rows in world.items()}
    newest = {key: LedgerEvent.objects.filter(session=session).order_by("-id").first()
              for key, session in sessions.items()}
    sees = {TokenScope.GLOBAL: newest["elsewhere"], TokenScope.SESSION: newest["mine"],
            TokenScope.PROJECT: max(newest["mine"], newest["sibling"], key=lambda event: event.id)}
    for scope, event in sees.items():
        head = _send(caller(user, scope, TokenPermission.READ, sessions).client, "get", "/api/v1/events/head/")
        assert head.json() == {"id": event.id, "hash": event.hash}, scope
    assert newest["elsewhere"].id > newest["sibling"].id > newest["mine"].id


# -- a login is not a key: a staff member reaches what the admin's permissions give them ------------

def _staff(username: str, *verbs: str) -> Any:
    """A staff member (not a superuser) holding `verbs` (view, add, …) on every model."""
    staff = get_user_model().objects.create_user(username=username, is_staff=True)
    if verbs:
        staff.user_permissions.set(Permission.objects.filter(codename__regex=rf"^({'|'.join(verbs)})_"))
    return staff


def _staff_doors(staff: Any) -> dict[str, APIClient]:
    """The staff member's admin login, and a global write token minted for them."""
    login = APIClient()
    login.force_login(staff)
    token = api_token_create(user=staff, scope=TokenScope.GLOBAL, permission=TokenPermission.WRITE)
    return {"login": login, "token": APIClient(HTTP_AUTHORIZATION=f"Bearer {token.secret}")}


def _refused(response: Any) -> bool:
    return response.status_code == 403 and response.json().get("code") == "permission_denied"


def test_a_staff_member_without_permissions_reaches_no_route_by_login_or_token(world) -> None:
    """Issue #28 §1: a staff login with no permissions was a global write key."""
    everything = tuple(world)
    before = _snapshot(world, everything)
    problems = []
    for door, client in _staff_doors(_staff("no-permissions")).items():
        for route in ROUTES:
            path = route_path(route, world["mine"])
            response = _send(client, route.method, path)
            if not _refused(response):
                problems.append(f"{door} {route.method.upper()} {path}: {response.status_code}")
    assert not problems, "\n".join(problems)
    assert _snapshot(world, everything) == before


def test_a_view_only_staff_member_reads_every_route_and_writes_none(world) -> None:
    everything = tuple(world)
    Session.objects.update(last_activity_at=timezone.now() - timedelta(days=1))
    before = _snapshot(world, everything)
    problems = []
    for door, client in _staff_doors(_staff("viewer", "view")).items():
        for route in ROUTES:
            path = route_path(route, world["mine"])
            response = _send(client, route.method, path)
            refused = _refused(response)
            if route.method == "get" and (refused or response.status_code >= 500):
                problems.append(f"{door} GET {path} refused a viewer: {response.status_code}")
            elif route.method != "get" and not refused:
                problems.append(f"{door} {route.method.upper()} {path}: {response.status_code}")
    assert not problems, "\n".join(problems)
    assert _snapshot(world, everything) == before


def test_a_staff_member_writes_with_the_permission_of_that_action_only(world) -> None:
    staff = _staff("session-editor")
    staff.user_permissions.set(Permission.objects.filter(codename__in=["view_session", "change_session"]))
    for door, client in _staff_doors(staff).items():
        mine = world["mine"][Session]
        assert _send(client, "patch", f"/api/v1/sessions/{mine.pk}/", {"user_request": door}).status_code == 200
        assert _refused(_send(client, "post", "/api/v1/sessions/", {"project_path": "/srv/widgets"})), door
        assert _refused(_send(client, "delete", f"/api/v1/sessions/{mine.pk}/")), door
        assert _refused(_send(client, "get", "/api/v1/tasks/")), door


def test_minting_needs_the_add_permission_and_the_token_acts_with_its_owners_permissions(world) -> None:
    """A staff login mints only with `ralphsite.add_apitoken`; what it mints is no broader than its owner."""
    staff = _staff("minter")
    login = APIClient()
    login.force_login(staff)
    body = {"scope": "global", "permission": "write"}
    assert_error_shape(_send(login, "post", "/api/v1/tokens/", body), 403, "permission_denied")
    assert not ApiToken.objects.filter(user=staff).exists()
    staff.user_permissions.set(Permission.objects.filter(codename__in=["add_apitoken", "view_session"]))
    minted = _send(login, "post", "/api/v1/tokens/", body)
    assert minted.status_code == 201, minted.content
    token = APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.json()['token']}")
    assert _send(token, "get", "/api/v1/sessions/").status_code == 200
    assert _refused(_send(token, "post", "/api/v1/sessions/", {"project_path": "/srv/widgets"}))
    assert _refused(_send(token, "get", "/api/v1/events/"))
    staff.user_permissions.clear()  # taking a permission away takes it from the user's tokens too
    assert _refused(_send(token, "get", "/api/v1/sessions/"))


# -- scopes are closed: no token moves a row out of what it could have created it in ----------------

def _destinations(model: type[models.Model], field: str, world: dict[str, Rows]) -> dict[str, Any]:
    """Per session key, the value of a scope-deciding field that would put a row of `model` there."""
    if field == "project_path":
        return {key: PROJECTS[key] for key in world}
    related = model._meta.get_field(field).related_model
    return {key: rows[related].pk for key, rows in world.items()}


def _stored(model: type[models.Model], pk: Any, field: str) -> Any:
    return model._default_manager.filter(pk=pk).values_list(model._meta.get_field(field).attname, flat=True).get()


def _movers(user: Any, sessions: dict[str, Session]) -> dict[str, tuple[APIClient, frozenset[str]]]:
    """Every kind of caller the walkers above build, and the sessions it could create a row in (where it may
    move one): a token of each scope and permission, and a staff member without permissions and a view-only
    one, by login and by a global write token of theirs. A session token creates rows in its own session
    only, so it moves none (issue #28 §2), not even its session into another project."""
    movers: dict[str, tuple[APIClient, frozenset[str]]] = {}
    for scope, permission in itertools.product((TokenScope.GLOBAL, TokenScope.PROJECT, TokenScope.SESSION),
                                               (TokenPermission.READ, TokenPermission.WRITE)):
        who = caller(user, scope, permission, sessions)
        could = frozenset(PROJECTS) - set(who.hidden) if who.writable and scope != TokenScope.SESSION else frozenset()
        movers[f"{scope} {permission} token"] = (who.client, could)
    for name, staff in (("staff without permissions", _staff("mover")), ("view-only staff", _staff("viewer", "view"))):
        for door, client in _staff_doors(staff).items():
            movers[f"{name} ({door})"] = (client, frozenset())
    return movers


def _put_body(client: APIClient, path: str, field: str, value: Any) -> dict[str, Any]:
    """The row as a global token reads it, the field changed: a PUT may send read-only fields back unchanged."""
    return {**client.get(path).json(), field: value}


@pytest.mark.long
def test_no_caller_moves_a_row_where_it_could_not_create_one(user, world) -> None:
    """Issue #28 §2, the walker pass: every scope-deciding field of every updatable model (a session's
    project_path, each row's session or other parent on its way to a session), sent by PATCH and by PUT to
    every other session's value, by every kind of caller: refused (4xx, the row where it was) wherever the
    caller could not have created the row there. The global write token, which could, moves them by PATCH:
    the refusals are the scope's, not a field that never changes."""
    sessions = {key: rows[Session] for key, rows in world.items()}
    movers = _movers(user, sessions)
    reader = movers["global read token"][0]
    problems, tried, moved = [], set(), set()
    for route in ROUTES:
        model = route_model(route)
        if route.method not in ("patch", "put") or model is None or route.path.count("/01") != 1:
            continue
        path = route_path(route, world["mine"])
        for field in scope_fields(model):
            tried.add(f"{model._meta.label}.{field} {route.method.upper()}")
            row = world["mine"][model]
            before = _stored(model, row.pk, field)
            for (name, (client, could)), (key, value) in itertools.product(
                    movers.items(), _destinations(model, field, world).items()):
                if value == before or (key in could and route.method == "put"):
                    continue  # no move (the sibling session's project is mine); a PUT allowed would rewrite the
                    # row's children (a task's files, as PUT means), which the other routes' rows are: PATCH moves
                body = {field: value} if route.method == "patch" else _put_body(reader, path, field, value)
                response = _send(client, route.method, path, body)
                where = f"{name} {route.method.upper()} {model._meta.label}.{field} to {key}: {response.status_code}"
                if response.status_code >= 500:
                    problems.append(where)
                elif key not in could and (response.status_code < 400 or _stored(model, row.pk, field) != before):
                    problems.append(f"{where} (moved)")
                elif _stored(model, row.pk, field) != before:
                    moved.add(f"{model._meta.label}.{field} {route.method.upper()}")
                    model._default_manager.filter(pk=row.pk).update(**{model._meta.get_field(field).attname: before})
    assert {"sessions_app.Session.project_path PUT", "sessions_app.Task.session PUT"} <= tried
    assert {"sessions_app.Session.project_path PATCH", "sessions_app.Task.session PATCH"} <= moved, sorted(moved)
    assert not problems, "\n".join(problems)


def test_a_session_token_minted_by_a_project_token_keeps_its_session_in_the_project(user, world) -> None:
    """The reported escalation: a project token refused a move minted a session token that made it."""
    sessions = {key: rows[Session] for key, rows in world.items()}
    project = caller(user, TokenScope.PROJECT, TokenPermission.WRITE, sessions)
    mine = sessions["mine"]
    assert_error_shape(_send(project.client, "patch", f"/api/v1/sessions/{mine.pk}/", {"project_path": "/srv/p2"}),
                       403, "permission_denied")
    minted = _send(project.client, "post", "/api/v1/tokens/", {"scope": "session", "session": mine.pk})
    assert minted.status_code == 201, minted.content
    session_token = APIClient(HTTP_AUTHORIZATION=f"Bearer {minted.json()['token']}")
    assert_error_shape(_send(session_token, "patch", f"/api/v1/sessions/{mine.pk}/", {"project_path": "/srv/p2"}),
                       403, "permission_denied")
    assert _send(session_token, "patch", f"/api/v1/sessions/{mine.pk}/",
                 {"project_path": "/srv/widgets", "user_request": "same project"}).status_code == 200
    assert Session.objects.get(pk=mine.pk).project_path == "/srv/widgets"


# -- no existence oracles -----------------------------------------------------------------------------

FRESH_ID = "01BX5ZZKBKACTAV9WEVGEMMVRZ"
ID_OWNERS = ("elsewhere", "mine")  # a row out of scope, a row in scope; FRESH_ID names no row
# Bodies whose ids name rows that exist, not rows to create (one out of scope is answered as a missing one:
# test_collection_actions_act_on_the_tokens_sessions_only).
NAMES_EXISTING_ROWS = {"/api/v1/sync/mark-synced/"}


def _client_id_routes() -> list[tuple[str, type[models.Model], Any]]:
    """Every POST whose body may carry a client's id, read from the schema (so a route added later is walked
    too): (the route's path, the model whose id it is, how a body sends one: `{"id": X}`, a bulk list of such
    items, or a batch's list of them)."""
    schema = APIClient().get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]

    def resolved(node: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        name = node.get("$ref", "").rsplit("/", 1)[-1]
        return name, components.get(name, node)

    def takes_id(node: dict[str, Any]) -> bool:  # a ULID: a row's id (a tool call's `id` is its own text)
        field = node.get("properties", {}).get("id")
        return field is not None and not field.get("readOnly") and field.get("pattern", "").startswith("^[0-7]")

    def model_of(component: str) -> type[models.Model]:
        return max((m for m in ROUTE_MODELS if component.startswith(m._meta.object_name)),
                   key=lambda m: len(m._meta.object_name))

    found = []
    for template, operations in schema["paths"].items():
        body = operations.get("post", {}).get("requestBody", {}).get("content", {}).get("application/json")
        if body is None or template in NAMES_EXISTING_ROWS:
            continue
        name, node = resolved(body["schema"])
        pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$")
        [route] = [r for r in ROUTES if r.method == "post" and pattern.match(r.path)]
        path = route_path(route, None).replace("01BX5ZZKBKACTAV9WEVGEMMVRZ", "{mine}")
        if takes_id(node):
            found.append((path, model_of(name), lambda value: {"id": value}))
        if node.get("type") == "array" and takes_id(resolved(node["items"])[1]):
            found.append((path, model_of(resolved(node["items"])[0]), lambda value: [{"id": value}]))
        for field, inner in node.get("properties", {}).items():
            if inner.get("type") == "array" and takes_id(resolved(inner.get("items", {}))[1]):
                found.append((path, model_of(resolved(inner["items"])[0]),
                              lambda value, field=field: {field: [{"id": value}]}))
    return found


def test_it_walks_every_create_that_takes_a_client_id() -> None:
    paths = {path for path, _model, _body in _client_id_routes()}
    assert {"/api/v1/questions/", "/api/v1/chats/", "/api/v1/messages/", "/api/v1/runs/{mine}/messages/",
            "/api/v1/issues/", "/api/v1/issues/record/", "/api/v1/feedback-batches/"} <= paths
    assert len(paths) > 20


@pytest.mark.parametrize("scope", [TokenScope.SESSION, TokenScope.PROJECT])
def test_a_scoped_token_sends_no_id_and_gets_one_answer_whatever_holds_it(user, world, scope: str) -> None:
    """Issue #28 §4: ids are unique across every scope, so an id a row out of scope holds answered otherwise than
    a fresh one (409 `unique … id`, later 409 "not available") and any token could probe ids across scopes. A
    scoped token may not choose ids at all: the same 400 `id_chosen_by_server` for a row's id out of scope, a
    fresh id and its own row's id, on every create, bulk append and batch that takes one."""
    sessions = {key: rows[Session] for key, rows in world.items()}
    who = caller(user, scope, TokenPermission.WRITE, sessions)
    different = []
    for path, model, body in _client_id_routes():
        if model not in world["mine"]:
            continue  # a model of no session (prices, patterns): a scoped token writes none
        path = path.replace("{mine}", _path_row_id(path, world["mine"]))
        answers = {owner: _send(who.client, "post", path, body(world[owner][model].pk)) for owner in ID_OWNERS}
        answers["fresh"] = _send(who.client, "post", path, body(FRESH_ID))
        shapes = {owner: (answer.status_code, answer.json()) for owner, answer in answers.items()}
        alike = len({json.dumps(shape, sort_keys=True) for shape in shapes.values()}) == 1
        refused_first = shapes["fresh"][0] == 403  # the token may not create such a row at all (a session)
        chosen_by_server = (shapes["fresh"][0], shapes["fresh"][1]["code"]) == (400, "id_chosen_by_server")
        if not alike or not (refused_first or chosen_by_server):
            different.append(f"POST {path} ({model.__name__}): {shapes}")
        assert not model._default_manager.filter(pk=FRESH_ID).exists()
    assert not different, "\n".join(different)


def _path_row_id(path: str, rows: Rows) -> str:
    """The id of the row of `rows` a detail action's path names (`runs/{mine}/messages/`: the run)."""
    prefix = path.split("/")[3]
    [model] = [route_model(r) for r in ROUTES if r.prefix == prefix and r.action == "list"]
    return rows[model].pk


def test_a_valid_create_is_refused_alike_for_any_id_and_made_without_one(user, world) -> None:
    """A body valid in every other way: before, an id out of scope was a 409, a fresh one a 201 and the caller's
    own row's id a 200 (a retry), so the answer told which scope held it."""
    from conversations_app.models import Message
    from ledger_app.models import Issue
    from sessions_app.models import Question

    sessions = {key: rows[Session] for key, rows in world.items()}
    who = caller(user, TokenScope.SESSION, TokenPermission.WRITE, sessions)
    chat = _send(who.client, "post", "/api/v1/chats/", {"title": "t", "session": sessions["mine"].pk}).json()["id"]
    run = _send(who.client, "post", "/api/v1/runs/", {"chat": chat}).json()["id"]
    creates = {
        Question: ("/api/v1/questions/", lambda: {"session": sessions["mine"].pk, "key": "Q-NEW-001",
                                                  "text": "Which database?", "category": "technical"}),
        Message: (f"/api/v1/runs/{run}/messages/", lambda: [{"role": "user", "content": "hi"}]),
        Issue: ("/api/v1/issues/record/", lambda: {"session": sessions["mine"].pk, "task_key": "t-1", "kind": "lint",
                                                   "signature": "E501 new", "message": "too long"}),
    }
    for model, (path, body) in creates.items():
        answers = []
        for value in (world["elsewhere"][model].pk, FRESH_ID, world["mine"][model].pk):
            sent = body()
            for item in sent if isinstance(sent, list) else [sent]:
                item["id"] = value
            answers.append(_send(who.client, "post", path, sent))
        assert [(a.status_code, a.json()) for a in answers[1:]] == [(answers[0].status_code, answers[0].json())] * 2
        assert_error_shape(answers[0], 400, "id_chosen_by_server")
        assert not model._default_manager.filter(pk=FRESH_ID).exists()
        made = _send(who.client, "post", path, body())
        assert made.status_code == 201, made.content  # the server chooses the id


def test_a_global_token_still_chooses_ids_and_retries_by_them(user, world) -> None:
    """A global token sees every scope, so an id it sends tells it nothing it could not read: offline-first
    creates keep their ids, a retry answers the row (200), another body under that id is a 409."""
    sessions = {key: rows[Session] for key, rows in world.items()}
    who = caller(user, TokenScope.GLOBAL, TokenPermission.WRITE, sessions)
    body = {"session": sessions["elsewhere"].pk, "key": "Q-NEW-001", "text": "Which database?",
            "category": "technical", "id": FRESH_ID.lower()}
    created = _send(who.client, "post", "/api/v1/questions/", body)
    assert (created.status_code, created.json()["id"]) == (201, FRESH_ID), created.content
    retried = _send(who.client, "post", "/api/v1/questions/", body)
    assert (retried.status_code, retried.json()["id"]) == (200, FRESH_ID)
    assert_error_shape(_send(who.client, "post", "/api/v1/questions/", {**body, "text": "Other?"}), 409, "conflict")


def test_keys_are_unique_per_scope_so_another_scopes_key_is_neither_known_nor_blocked(user, world) -> None:
    """Issue #28 §4: session keys were unique across projects and checkpoint and plan keys across sessions,
    so creating one with another scope's key was a 409 `unique … key` (a fresh key a 201): any token learned
    another project's keys, and took them first to block it."""
    from ledger_app.models import Checkpoint
    from sessions_app.models import Plan

    sessions = {key: rows[Session] for key, rows in world.items()}
    project = caller(user, TokenScope.PROJECT, TokenPermission.WRITE, sessions)
    taken = _send(project.client, "post", "/api/v1/sessions/", {"project_path": "/srv/widgets", "key": "elsewhere"})
    assert taken.status_code == 201, taken.content
    assert _send(project.client, "post", "/api/v1/sessions/",
                 {"project_path": "/srv/widgets", "key": "sibling"}).status_code == 409  # its own project's
    who = caller(user, TokenScope.SESSION, TokenPermission.WRITE, sessions)
    mine = sessions["mine"].pk
    hidden_checkpoint, hidden_plan = world["elsewhere"][Checkpoint], world["elsewhere"][Plan]
    for path, body in (("/api/v1/checkpoints/", {"session": mine, "key": hidden_checkpoint.key}),
                       ("/api/v1/plans/", {"session": mine, "key": hidden_plan.key, "name": "mine too"})):
        created = _send(who.client, "post", path, body)
        assert created.status_code == 201, created.content
    retried = _send(who.client, "post", "/api/v1/checkpoints/", {"session": mine, "key": hidden_checkpoint.key})
    assert (retried.status_code, retried.json()["session"]) == (200, mine)  # its own, a retry
    again = _send(who.client, "post", "/api/v1/plans/", {"session": mine, "key": hidden_plan.key, "name": "again"})
    assert_error_shape(again, 409, "conflict")  # the caller's own plan holds the key in its session
    assert Checkpoint.objects.filter(key=hidden_checkpoint.key).count() == 2
    assert Plan.objects.filter(key=hidden_plan.key).count() == 2


def test_a_key_that_names_several_rows_the_caller_sees_is_a_409_asking_for_the_id(user, world) -> None:
    """Keys unique per scope can repeat across scopes: a caller who sees both (a global token) is asked
    for the id wherever it names one by key (path, body, filter); a narrower caller sees one row."""
    from ledger_app.models import Checkpoint
    from sessions_app.models import Task

    sessions = {key: rows[Session] for key, rows in world.items()}
    twin = Session.objects.create(key="mine", project_path="/srv/gadgets")
    Checkpoint.objects.create(key=world["mine"][Checkpoint].key, session=sessions["elsewhere"])
    both = sorted([sessions["mine"].pk, twin.pk])
    global_token = caller(user, TokenScope.GLOBAL, TokenPermission.WRITE, sessions)
    for method, path, body in (("get", "/api/v1/sessions/mine/", None),
                               ("get", f"/api/v1/sessions/mine/tasks/{world['mine'][Task].key}/", None),
                               ("get", "/api/v1/tasks/?session=mine", None),
                               ("post", "/api/v1/questions/", {"session": "mine", "key": "Q-1", "text": "Which?"})):
        response = _send(global_token.client, method, path, body)
        assert_error_shape(response, 409, "ambiguous_key")
        assert sorted(response.json()["details"]["ids"]) == both, path
        assert response.json()["details"]["key"] == "mine"
    checkpoint_key = world["mine"][Checkpoint].key
    assert_error_shape(_send(global_token.client, "get", f"/api/v1/checkpoints/{checkpoint_key}/"), 409,
                       "ambiguous_key")
    assert _send(global_token.client, "get", f"/api/v1/sessions/{twin.pk}/").json()["key"] == "mine"
    project = caller(user, TokenScope.PROJECT, TokenPermission.READ, sessions)
    assert _send(project.client, "get", "/api/v1/sessions/mine/").json()["id"] == sessions["mine"].pk
    session_token = caller(user, TokenScope.SESSION, TokenPermission.READ, sessions)
    assert _send(session_token.client, "get", f"/api/v1/checkpoints/{checkpoint_key}/").json()["id"] == \
        world["mine"][Checkpoint].pk


def test_a_key_shaped_like_a_ulid_is_refused_for_every_keyed_model(user, world) -> None:
    """A key shaped like another row's id (the reported squat: a session key spelling another session's ULID,
    then read as that session wherever an id is taken) is refused at creation and rename."""
    from ledger_app.models import Checkpoint
    from sessions_app.models import Plan, Question, Task

    sessions = {key: rows[Session] for key, rows in world.items()}
    project = caller(user, TokenScope.PROJECT, TokenPermission.WRITE, sessions)
    mine = sessions["mine"].pk
    squats = {"/api/v1/sessions/": ({"project_path": "/srv/widgets"}, sessions["elsewhere"].pk, mine),
              "/api/v1/plans/": ({"session": mine, "name": "squat"}, world["elsewhere"][Plan].pk,
                                 world["mine"][Plan].pk),
              "/api/v1/checkpoints/": ({"session": mine}, world["elsewhere"][Checkpoint].pk, None),
              # named by key in their session's paths (sessions/{session}/tasks/{task}/), where an id is read first
              "/api/v1/tasks/": ({"session": mine, "title": "squat"}, world["mine"][Task].pk,
                                 world["mine"][Task].pk),
              "/api/v1/questions/": ({"session": mine, "text": "squat?", "category": "technical"},
                                     world["mine"][Question].pk, world["mine"][Question].pk)}
    for path, (body, other_id, own_row) in squats.items():
        for spelling in (other_id, other_id.lower(), "01BX5ZZKBKACTAV9WEVGEMMVRZ"):
            refused = _send(project.client, "post", path, {**body, "key": spelling})
            assert_error_shape(refused, 400, "key_shaped_like_id")
            assert refused.json()["details"] == {"key": ["Not shaped like a ULID."]}
        if own_row is not None:
            assert_error_shape(_send(project.client, "patch", f"{path}{own_row}/", {"key": other_id}), 400,
                               "key_shaped_like_id")
    assert not Session.objects.filter(key__iexact=sessions["elsewhere"].pk).exists()
    assert not Plan.objects.filter(key__iexact=world["elsewhere"][Plan].pk).exists()
    assert not Task.objects.filter(key__iexact=world["mine"][Task].pk).exists()
    assert not Question.objects.filter(key__iexact=world["mine"][Question].pk).exists()
