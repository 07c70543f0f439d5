import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from ralphsite.core.models import ApiToken, TokenScope
from ralphsite.tokens.services import MintedToken, api_token_create

pytest_plugins = ["tests.live_gunicorn"]

_DB_FIXTURES = {"db", "transactional_db", "live_server", "django_db_reset_sequences", "django_db_serialized_rollback"}


def _database_use(request: pytest.FixtureRequest) -> str | None:
    """"transactional_db", "db", or None for a test that does not touch the database."""
    from pytest_django.fixtures import validate_django_db

    marker = request.node.get_closest_marker("django_db")
    names = set(request.fixturenames)
    if (marker is not None and validate_django_db(marker)[0]) or {"transactional_db", "live_server"} & names:
        return "transactional_db"
    return "db" if marker is not None or _DB_FIXTURES & names else None


@pytest.fixture(autouse=True)
def _ledger_flush_passes_the_append_only_triggers(request: pytest.FixtureRequest):
    """A transactional test ends with a flush of every table (TRUNCATE on PostgreSQL, DELETE on
    SQLite), which the ledger's append-only triggers reject. The database fixture is requested
    first, so this teardown runs before its flush and lets that flush (only) through; every test
    that uses the database starts with the switch off."""
    database = _database_use(request)
    if database is None:
        yield
        return
    from django.db import connection

    from ledger_app.append_only import set_purge_switch

    request.getfixturevalue(database)
    set_purge_switch(connection, on=False)
    yield
    if database == "transactional_db":
        set_purge_switch(connection, on=True)


@pytest.fixture
def user(db):
    """A superuser: the owner of the global token most API tests use (a staff member's reach is their model
    permissions, which tests/ralphsite/test_staff_permissions.py walks)."""
    return get_user_model().objects.create_user(username="agent", password="agent-password-1", is_staff=True,
                                                is_superuser=True)


@pytest.fixture
def token(user) -> MintedToken:
    return api_token_create(user=user, scope=TokenScope.GLOBAL)


@pytest.fixture
def api(token) -> APIClient:
    """An APIClient authenticated the way agents are: `Authorization: Token …`. The token counts as
    just used, as after an agent's first call, so query counts measure the steady state (the
    once-a-minute `last_used_at` write has its own tests)."""
    ApiToken.objects.filter(pk=token.token.pk).update(last_used_at=timezone.now())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.secret}")
    return client


@pytest.fixture
def anon_api() -> APIClient:
    return APIClient()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    """Every API test creates a user: with production PBKDF2 the hash was most of each test's time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _abuse_guards_off(settings) -> None:
    """The API throttle adds its count's UPSERT to a token's first request, which every test's query
    counts would carry, and the admin login lockout (django-axes) refuses `client.login()` without a
    request: both have their own tests (test_throttling.py, test_deployment.py), which turn them on."""
    settings.RALPH_API_THROTTLE_RATE = None
    settings.AXES_ENABLED = False
