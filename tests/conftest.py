import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user(username="agent", password="agent-password-1")


@pytest.fixture
def token(user) -> Token:
    return Token.objects.create(user=user)


@pytest.fixture
def api(token) -> APIClient:
    """An APIClient authenticated the way agents are: `Authorization: Token …`."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def anon_api() -> APIClient:
    return APIClient()


def _is_transactional(request: pytest.FixtureRequest) -> bool:
    from pytest_django.fixtures import validate_django_db

    marker = request.node.get_closest_marker("django_db")
    return bool((marker is not None and validate_django_db(marker)[0])
                or {"transactional_db", "live_server"} & set(request.fixturenames))


@pytest.fixture(autouse=True)
def _ledger_flush_passes_the_append_only_triggers(request: pytest.FixtureRequest):
    """A transactional test ends with a flush of every table (TRUNCATE on PostgreSQL, DELETE on
    SQLite), which the ledger's append-only triggers reject. The database fixture is requested
    first, so this teardown runs before its flush and lets that flush (only) through; each test
    starts with the switch off."""
    if not _is_transactional(request):
        yield
        return
    from django.db import connection

    from ledger_app.append_only import set_purge_switch

    request.getfixturevalue("transactional_db")
    set_purge_switch(connection, on=False)
    yield
    set_purge_switch(connection, on=True)
