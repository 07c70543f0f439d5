import os

import pytest
from django.db import connection

from ralphsite.core.db.config import database_config
from ralphsite.core.env import env_bool, env_int, env_list

pytestmark = pytest.mark.django_db


def _pragma(name: str):
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA {name}")
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite pragmas")
def test_it_runs_sqlite_in_wal_with_safe_pragmas() -> None:
    assert _pragma("journal_mode") == "wal"
    assert _pragma("synchronous") == 1  # NORMAL
    assert _pragma("foreign_keys") == 1
    assert _pragma("busy_timeout") == 30000
    assert connection.transaction_mode == "IMMEDIATE"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL settings")
def test_it_uses_psycopg3_on_postgresql() -> None:
    import psycopg

    assert connection.connection.__class__.__module__.startswith("psycopg")
    assert psycopg.__version__.startswith("3.")


def test_it_configures_sqlite_from_a_url(tmp_path) -> None:
    config = database_config(url=f"sqlite:///{tmp_path / 'x.db'}", data_dir=tmp_path, pool_size=4)
    assert config["ENGINE"] == "ralphsite.core.db.sqlite_backend"
    assert config["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in config["OPTIONS"]["init_command"]
    assert config["TEST"]["NAME"].endswith(f"test_ralph_{os.getpid()}.db")


def test_it_configures_a_postgres_pool_from_the_environment(tmp_path) -> None:
    config = database_config(url="postgres://u@127.0.0.1:5432/db", data_dir=tmp_path, pool_size=7)
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert config["OPTIONS"]["pool"]["max_size"] == 7
    assert config["CONN_MAX_AGE"] == 0
    # An unreachable database is given up on after the connect timeout: connect, pool wait, dead sockets.
    assert config["OPTIONS"]["connect_timeout"] == 3 and config["OPTIONS"]["pool"]["timeout"] == 3
    assert config["OPTIONS"]["tcp_user_timeout"] == 3000 and config["CONN_HEALTH_CHECKS"] is True
    without_pool = database_config(url="postgres://u@127.0.0.1:5432/db", data_dir=tmp_path, pool_size=0)
    assert "pool" not in without_pool.get("OPTIONS", {})


def test_it_rejects_an_unsupported_database(tmp_path) -> None:
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured):
        database_config(url="mysql://u@localhost/db", data_dir=tmp_path, pool_size=1)


def test_env_helpers_fail_loudly_on_bad_values(monkeypatch) -> None:
    from django.core.exceptions import ImproperlyConfigured

    monkeypatch.setenv("X_BOOL", "maybe")
    with pytest.raises(ImproperlyConfigured):
        env_bool("X_BOOL", False)
    monkeypatch.setenv("X_BOOL", "yes")
    assert env_bool("X_BOOL", False) is True
    monkeypatch.setenv("X_INT", "ten")
    with pytest.raises(ImproperlyConfigured):
        env_int("X_INT", 1)
    monkeypatch.setenv("X_INT", "-1")
    with pytest.raises(ImproperlyConfigured):
        env_int("X_INT", 1, minimum=0)
    monkeypatch.setenv("X_LIST", "a, b,,c")
    assert env_list("X_LIST", []) == ["a", "b", "c"]


def test_secret_key_is_created_once_with_private_permissions(tmp_path) -> None:
    from ralphsite.core.secrets import secret_key_load_or_create

    path = tmp_path / "secret_key"
    first = secret_key_load_or_create(path)
    assert len(first) >= 50
    assert path.stat().st_mode & 0o777 == 0o600
    assert secret_key_load_or_create(path) == first
