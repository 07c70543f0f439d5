import copy
import importlib
import itertools
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connections, transaction
from django.db.models.signals import post_migrate
from django.test.utils import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from ralphsite.core.models import ApiToken, TokenScope
from ralphsite.tokens.services import MintedToken, api_token_create

pytest_plugins = ["tests.live_gunicorn"]


def pytest_configure(config: pytest.Config) -> None:
    """The suite signs (sessions, admin logins) with a key of its own, made for the run. The settings
    read a deployment's key from the data dir, which on a fresh checkout nothing has made yet
    (`manage.py migrate`, `bootstrap` and the server's start do: ralphsite/core/secrets.py)."""
    from django.conf import settings  # the fixtures below take pytest-django's `settings`

    settings.SECRET_KEY = secrets.token_urlsafe(50)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that drives Chromium is marked `browser`, so a CI leg can leave the browser out by marker.

    Then the files are put in the order the workers take them (`make test` keeps it: --no-loadscope-reorder):
    files holding a `long` test first, then the files with the most tests. xdist's own order (most tests
    first) leaves the one-test files that migrate a database or start servers for last, where one worker
    runs them alone while the other waits."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def run_first(tests: list[pytest.Item]) -> tuple[bool, int]:
        return not any(test.get_closest_marker("long") for test in tests), -len(tests)

    items[:] = [item for tests in sorted(files.values(), key=run_first) for item in tests]


_DB_FIXTURES = {"db", "transactional_db", "live_server", "django_db_reset_sequences", "django_db_serialized_rollback"}
# The module whose shared transaction (`module_db`) is open, if any.
_SHARED_TRANSACTION: list[str] = []


def _database_use(request: pytest.FixtureRequest) -> str | None:
    """"transactional_db", "db", or None for a test that does not touch the database."""
    from pytest_django.fixtures import validate_django_db

    marker = request.node.get_closest_marker("django_db")
    names = set(request.fixturenames)
    if (marker is not None and validate_django_db(marker)[0]) or {"transactional_db", "live_server"} & names:
        return "transactional_db"
    return "db" if marker is not None or _DB_FIXTURES & names else None


@pytest.fixture(scope="session", autouse=True)
def _test_settings(django_test_environment: None) -> Iterator[None]:
    """Settings every test runs with, set once for the run (a test's `settings` changes go back to these).

    Every API test creates a user: with production PBKDF2 the hash was most of each test's time. The API
    throttle adds its count's UPSERT to a token's first request, which every test's query counts would
    carry, and the admin login lockout (django-axes) refuses `client.login()` without a request: both
    have their own tests (test_throttling.py, test_deployment.py), which turn them on."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
                           RALPH_API_THROTTLE_RATE=None, AXES_ENABLED=False):
        yield


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete_on_postgresql(django_test_environment: None) -> None:
    from tests.ledger_guards import flush_by_delete

    if connections["default"].vendor == "postgresql":
        flush_by_delete(connections["default"])


def _fresh_install_rows_restore(plan: Any = None, **_signal: Any) -> None:
    """A transactional test ends with a flush of every table, the rows the ledger's migrations give a fresh
    install included (the chain head at genesis, 0004; the Claude prices, 0012); the flush then sends
    post_migrate, and this puts them back, so the next test on that worker starts from a fresh install as the
    others do (without the head an append makes two more queries, without the prices a call costs 0)."""
    from ledger_app.chain import GENESIS_HASH
    from ledger_app.models import LedgerChainHead, ModelPrice

    if plan is not None:  # `migrate` (a test moving the schema), not the flush, which sends no plan
        return
    LedgerChainHead.objects.get_or_create(pk=1, defaults={"last_id": 0, "last_hash": GENESIS_HASH})
    prices = importlib.import_module("ledger_app.migrations.0012_token_usage_iteration_and_claude_prices")
    if not ModelPrice.objects.exists():
        ModelPrice.objects.bulk_create(
            ModelPrice(model=model, valid_from=prices.PRICES_FROM, input_per_mtok=Decimal(input_price),
                       output_per_mtok=Decimal(output_price), cached_read_per_mtok=Decimal(read_price),
                       cached_write_per_mtok=Decimal(write_price))
            for model, (input_price, output_price, read_price, write_price) in prices.CLAUDE_PRICES.items())


@pytest.fixture(scope="session", autouse=True)
def _fresh_install_rows_after_each_flush(django_test_environment: None) -> Iterator[None]:
    ledger = django_apps.get_app_config("ledger_app")
    post_migrate.connect(_fresh_install_rows_restore, sender=ledger, dispatch_uid="tests-fresh-install-rows")
    yield
    post_migrate.disconnect(sender=ledger, dispatch_uid="tests-fresh-install-rows")


@pytest.fixture(autouse=True)
def _ledger_flush_passes_the_append_only_triggers(request: pytest.FixtureRequest):
    """A transactional test ends with a flush of every table (TRUNCATE on PostgreSQL, DELETE on
    SQLite), which the ledger's append-only triggers reject. The database fixture is requested
    first, so this teardown runs before its flush and empties the ledger's tables first, as the
    tables' owner could (tests/ledger_guards.py)."""
    database = _database_use(request)
    if database is None:
        yield
        return
    if database == "transactional_db" and ("shared_user" in request.fixturenames or _SHARED_TRANSACTION):
        where = _SHARED_TRANSACTION[-1] if _SHARED_TRANSACTION else "its module"
        pytest.fail(f"A transactional test cannot run inside the shared transaction of {where} (module_db): its "
                    "flush would empty it and its connection close would end it. Move it to a module that does "
                    "not use shared_user.")
    from tests.ledger_guards import ledger_flushable

    request.getfixturevalue(database)
    yield
    if database == "transactional_db":
        ledger_flushable()


@pytest.fixture(scope="module")
def module_db(request: pytest.FixtureRequest, django_db_setup: None, django_db_blocker) -> Iterator[None]:
    """One transaction around the rest of a module's tests, rolled back after its last: rows made once
    for the module (`shared_user`) live in it, and each test's own transaction (the `db` fixture) is a
    savepoint inside it, rolled back after the test as before, so a test that writes still leaves
    nothing behind. Database access stays blocked between tests. Transactional tests cannot run
    inside it (their flush and connection close would end it): `_ledger_flush_passes_the_append_only_triggers`
    fails them."""
    with django_db_blocker.unblock():
        atomics = {alias: transaction.atomic(using=alias) for alias in connections}
        for atomic in atomics.values():
            atomic._from_testcase = True  # as Django's TestCase marks its own: durable blocks may nest in it
            atomic.__enter__()
    _SHARED_TRANSACTION.append(request.node.nodeid)
    try:
        yield
    finally:
        _SHARED_TRANSACTION.pop()
        with django_db_blocker.unblock():
            for alias, atomic in reversed(atomics.items()):
                transaction.set_rollback(True, using=alias)
                atomic.__exit__(None, None, None)


@dataclass(frozen=True)
class SharedUser:
    user: AbstractBaseUser
    token: MintedToken


def _make_user() -> AbstractBaseUser:
    """A superuser: the owner of the global token most API tests use (a staff member's reach is their model
    permissions, which tests/ralphsite/test_token_scopes.py walks)."""
    return get_user_model().objects.create_user(username="agent", password="agent-password-1", is_staff=True,
                                                is_superuser=True)


@pytest.fixture(scope="module")
def shared_user(module_db: None, django_db_blocker) -> SharedUser:
    """`user` and `token` made once for a module that opts in with
    `pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]`: for a module whose
    tests only call the API with them (about 1 ms of inserts a test on SQLite, on 1,700 tests in
    test_query_contract.py alone).
    Each test gets its own deep copies (as Django's setUpTestData gives), and its writes to their rows
    roll back with its transaction. The rows exist for every test of the module, asked for or not."""
    with django_db_blocker.unblock():
        user = _make_user()
        return SharedUser(user=user, token=api_token_create(user=user, scope=TokenScope.GLOBAL))


@pytest.fixture
def _shared_user_copy(shared_user: SharedUser) -> SharedUser:
    return copy.deepcopy(shared_user)  # one copy: the token's owner is the test's user


@pytest.fixture
def user(request: pytest.FixtureRequest, db):
    """A staff member: the owner of the global token most API tests use."""
    if "shared_user" in request.fixturenames:
        return request.getfixturevalue("_shared_user_copy").user
    return _make_user()


@pytest.fixture
def token(request: pytest.FixtureRequest, user) -> MintedToken:
    if "shared_user" in request.fixturenames:
        return request.getfixturevalue("_shared_user_copy").token
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
def _ledger_anchors_per_test(settings, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test's ledger anchors in a folder of its own (not yet created): an anchor written by one
    test must not be checked against another test's ledger."""
    settings.RALPH_LEDGER_ANCHOR_DIR = str(tmp_path_factory.getbasetemp() / f"anchors-{next(_anchor_dirs)}")


_anchor_dirs = itertools.count()
