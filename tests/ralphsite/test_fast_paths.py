"""The fast paths (`ralphsite.core.db.fast_paths`): the switch, read strictly and at call time, and
every piece's answers against the plain Django/DRF reference it must agree with.

The differential walk: one row of every model the router serves (`tests.route_rows.RowBuilder`, built
once for the module), then every GET route of the router (each model's detail and list, the actions
and statistics) requested with the fast paths on and with them off, under a global token and a session
token: the bodies must be the same bytes. Then the token lookup (the hand-written SQL against the ORM)
for a token of every kind, and the precompiled detail lookup of every routed viewset (compiled against
the ORM), unscoped and scoped, and the message append's run.
"""

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.db import models, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from conversations_app.models import Run
from conversations_app.selectors import _run_for_append_query
from ralphsite.core.access import OutOfScope, Scope, token_scope
from ralphsite.core.api.authentication import (
    FastTokenAuthentication,
    _token_with_owner_orm,
    _token_with_owner_sql,
)
from ralphsite.core.api.viewsets import RalphModelViewSet
from ralphsite.core.db.fast_paths import PIECES, fast_paths_on
from ralphsite.core.db.precompiled import PrecompiledLookup
from ralphsite.core.env import env_choices
from ralphsite.core.models import ApiToken, TokenPermission, TokenScope
from ralphsite.tokens.services import MintedToken, api_token_create
from sessions_app.models import Session
from tests.api_mixins import ApiRoute, api_routes
from tests.route_rows import ROUTE_MODELS, RowBuilder, marker, route_model, route_path

Rows = dict[type[models.Model], models.Model]
GET_ROUTES = [route for route in api_routes() if route.method == "get"]
MODEL_VIEWSETS = sorted({route.viewset for route in api_routes()
                         if route_model(route) is not None and issubclass(route.viewset, RalphModelViewSet)},
                        key=lambda viewset: viewset.__name__)


# -- the switch ---------------------------------------------------------------------------------

def test_it_reads_the_pieces_turned_off_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RALPH_FAST_PATHS_OFF", "token, lookups")
    assert env_choices("RALPH_FAST_PATHS_OFF", PIECES) == {"token", "lookups"}
    for unknown in ("token,tokens", "inserts"):  # `inserts` was deleted (2026-11-28)
        monkeypatch.setenv("RALPH_FAST_PATHS_OFF", unknown)
        with pytest.raises(ImproperlyConfigured, match="unknown"):
            env_choices("RALPH_FAST_PATHS_OFF", PIECES)


def test_it_reads_the_switch_at_call_time(settings) -> None:
    settings.RALPH_FAST_PATHS, settings.RALPH_FAST_PATHS_OFF = True, frozenset()
    assert all(fast_paths_on(piece) for piece in PIECES)
    settings.RALPH_FAST_PATHS_OFF = frozenset({"token"})
    assert not fast_paths_on("token") and fast_paths_on("lookups") and fast_paths_on("serializers")
    settings.RALPH_FAST_PATHS, settings.RALPH_FAST_PATHS_OFF = False, frozenset()
    assert not any(fast_paths_on(piece) for piece in PIECES)


def test_it_refuses_a_piece_it_does_not_know() -> None:
    for piece in ("everything", "inserts"):
        with pytest.raises(ValueError, match="no fast path"):
            fast_paths_on(piece)


# -- the rows, once per module ------------------------------------------------------------------

@dataclass(frozen=True)
class World:
    rows: Rows
    tokens: dict[str, MintedToken]


@pytest.fixture(scope="module")
def world(django_db_setup: None, django_db_blocker: Any) -> Iterator[World]:
    """A session with one row of every routed model, and a token of every kind, in a transaction
    rolled back when the module's tests are done (each test runs in a savepoint inside it)."""
    with django_db_blocker.unblock(), transaction.atomic():
        session = Session.objects.create(key="mine", project_path="/srv/widgets", user_request=marker("mine"))
        builder = RowBuilder(session)
        for model in ROUTE_MODELS:
            builder.row(model)
        user = get_user_model().objects.create_user(username="differ", password=None, is_staff=True, is_superuser=True)
        tokens = {
            "global": api_token_create(user=user, scope=TokenScope.GLOBAL),
            "session": api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk,
                                        permission=TokenPermission.READ),
            "project": api_token_create(user=user, scope=TokenScope.PROJECT, project_path="/srv/widgets"),
            "agent": api_token_create(user=user, scope=TokenScope.SESSION, session_id=session.pk,
                                      agent="executor-1", expires_at=timezone.now() + timedelta(days=1)),
        }
        # Used a moment ago (microseconds and all): no request writes `last_used_at` between the two sides.
        ApiToken.objects.update(last_used_at=timezone.now() - timedelta(microseconds=1234))
        yield World(builder.rows, tokens)
        transaction.set_rollback(True)


def _client(world: World, token: str) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Bearer {world.tokens[token].secret}")


def _both(settings: Any, read: Any) -> tuple[Any, Any]:
    """`read()` with every fast path on, then with every one off."""
    settings.RALPH_FAST_PATHS_OFF = frozenset()
    settings.RALPH_FAST_PATHS = True
    fast = read()
    settings.RALPH_FAST_PATHS = False
    plain = read()
    settings.RALPH_FAST_PATHS = True
    return fast, plain


def _shown(response: Any) -> str:
    try:
        return json.dumps(response.json(), indent=1, sort_keys=True)[:3000]
    except ValueError:
        return response.content.decode(errors="replace")[:3000]


# -- every GET route, fast and plain ------------------------------------------------------------

def test_it_walks_every_model_detail_and_list() -> None:
    actions = {(route_model(route), route.action) for route in GET_ROUTES}
    for model in ROUTE_MODELS:
        assert (model, "list") in actions or (model, "retrieve") in actions, model
    assert len(ROUTE_MODELS) > 40 and len(MODEL_VIEWSETS) > 30


@pytest.mark.django_db
@pytest.mark.parametrize("token", ["global", "session"])
@pytest.mark.parametrize("route", GET_ROUTES, ids=[route.id for route in GET_ROUTES])
def test_every_get_route_answers_the_same_with_the_fast_paths_off(world: World, settings, route: ApiRoute,
                                                                  token: str) -> None:
    client = _client(world, token)
    path = route_path(route, world.rows)
    fast, plain = _both(settings, lambda: client.get(path))
    assert fast.status_code == plain.status_code, f"{path}: {fast.status_code} fast, {plain.status_code} plain"
    assert fast.content == plain.content, f"{path}\nfast:\n{_shown(fast)}\nplain:\n{_shown(plain)}"
    if token == "global" and route_model(route) is not None and route.action in ("list", "retrieve"):
        assert fast.status_code == 200, f"{path}: {fast.status_code} {_shown(fast)}"  # a row to compare
        if route.action == "list":
            assert fast.json()["results"], f"{path} lists nothing to compare"


# -- the token lookup ---------------------------------------------------------------------------

def _values(instance: models.Model | None) -> dict[str, Any] | None:
    """Every concrete column of an instance (a deferred one is loaded on access, as in any caller)."""
    if instance is None:
        return None
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def _scope(scope: Scope) -> dict[str, Any]:
    return {name: value for name, value in asdict(scope).items() if name != "_sessions_seen"}


@pytest.mark.django_db
def test_the_token_lookup_answers_as_the_orm(world: World, settings) -> None:
    for name, minted in world.tokens.items():
        digest = minted.token.key_hash
        fast, plain = _token_with_owner_sql(digest), _token_with_owner_orm(digest)
        assert fast is not None and plain is not None, name
        assert _values(fast) == _values(plain), name
        assert _values(fast.user) == _values(plain.user), name
        assert _scope(token_scope(fast)) == _scope(token_scope(plain)), name
        user_fast, user_plain = _both(settings, lambda secret=minted.secret:
                                      FastTokenAuthentication().authenticate_credentials(secret))
        assert (user_fast[0].pk, _scope(user_fast[1])) == (user_plain[0].pk, _scope(user_plain[1])), name
    assert _token_with_owner_sql("0" * 64) is None and _token_with_owner_orm("0" * 64) is None


# -- the precompiled lookups ----------------------------------------------------------------------

def _loaded(instance: models.Model | None) -> dict[str, Any] | None:
    """What a lookup loaded: columns, annotations, select_related rows (recursively) and prefetches."""
    if instance is None:
        return None
    state = {"__class__": type(instance), **_values(instance)}
    state |= {f"annotation {name}": value for name, value in vars(instance).items()
              if not name.startswith("_") and name not in state}
    state |= {f"related {name}": _loaded(related) for name, related in instance._state.fields_cache.items()}
    state |= {f"prefetched {name}": sorted(str(row.pk) for row in rows)
              for name, rows in getattr(instance, "_prefetched_objects_cache", {}).items()}
    return state


def _detail_lookups(viewset: type[RalphModelViewSet], scope: Scope) -> tuple[PrecompiledLookup, tuple] | None:
    """The lookup the viewset's detail route builds under `scope`, with its bound values (None when
    the viewset's queryset varies per request or the scope sees none of its rows)."""
    if viewset.get_queryset is not RalphModelViewSet.get_queryset:
        return None
    model = viewset.queryset.model
    try:
        scope_lookup = scope.session_lookup(model)
    except OutOfScope:
        return None
    lookup = PrecompiledLookup(viewset.queryset.all(), viewset.lookup_field,
                               bound_lookups=(scope_lookup[0],) if scope_lookup else ())
    return lookup, tuple(scope_lookup[1:]) if scope_lookup else ()


@pytest.mark.django_db
def test_the_precompiled_lookup_answers_as_the_orm(world: World) -> None:
    session = world.rows[Session]
    scopes = {"global": Scope(kind=TokenScope.GLOBAL, writable=False),
              "session": Scope(kind=TokenScope.SESSION, writable=False, session_id=session.pk),
              "project": Scope(kind=TokenScope.PROJECT, writable=False, project_path=session.project_path)}
    compared = 0
    for viewset in MODEL_VIEWSETS:
        for scope_name, scope in scopes.items():
            built = _detail_lookups(viewset, scope)
            if built is None:
                continue
            lookup, bound = built
            assert lookup.compiled is not None, f"{viewset.__name__}: its queryset is not precompiled"
            row = world.rows[viewset.queryset.model]
            fast = lookup.compiled.get(row.pk, *bound)
            assert fast is not None, f"{viewset.__name__} {scope_name}: no row"
            assert _loaded(fast) == _loaded(lookup.orm_get(row.pk, *bound)), f"{viewset.__name__} {scope_name}"
            for missing in ("01BX5ZZKBKACTAV9WEVGEMMVRZ", "999999999", "not-an-id", 2**70):
                assert lookup.compiled.get(missing, *bound) is None and lookup.orm_get(missing, *bound) is None
            compared += 1
    assert compared > 60


@pytest.mark.django_db
def test_the_message_appends_run_lookup_answers_as_the_orm(world: World) -> None:
    run = world.rows[Run]
    with transaction.atomic():  # the lookup locks the run: it compiles inside a transaction only
        lookup = PrecompiledLookup(_run_for_append_query())
        assert lookup.compiled is not None
        assert _loaded(lookup.compiled.get(run.pk)) == _loaded(lookup.orm_get(run.pk))
        assert lookup.compiled.get(run.pk) is not None
