"""Deployment hardening: the admin's lockout and CSP, HTTPS settings from the environment, file modes."""

import os
import stat
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.http import HttpRequest
from django.test import Client

from ralphsite.core.paths import BASE_DIR
from ralphsite.core.secrets import SECRET_KEY_FILE, secret_key_load_or_create
from ralphsite.tokens.credentials import CREDENTIALS_FILE

pytestmark = pytest.mark.django_db


def _admin_login(client: Client, password: str, address: str = "10.0.0.7") -> int:
    response = client.post("/admin/login/?next=/admin/", {"username": "admin", "password": password},
                           REMOTE_ADDR=address)
    return response.status_code


def test_it_locks_out_the_username_from_an_address_after_repeated_failures(settings) -> None:
    settings.AXES_ENABLED, settings.AXES_FAILURE_LIMIT = True, 3
    get_user_model().objects.create_superuser(username="admin", password="right-password-1")
    client = Client()
    assert [_admin_login(client, "wrong") for _ in range(2)] == [200, 200]  # the form again, with an error
    assert _admin_login(client, "wrong") == 429  # the third failure locks
    assert _admin_login(client, "right-password-1") == 429  # even the right password, for a while
    assert _admin_login(Client(), "right-password-1", address="10.0.0.8") == 302  # another address is not locked


def test_it_sends_a_content_security_policy_with_the_admin(admin_client: Client) -> None:
    policy = admin_client.get("/admin/")["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "style-src 'self';" in policy and "unsafe-inline" not in policy  # no inline style either
    assert "Content-Security-Policy" not in admin_client.get("/api/docs/")  # Swagger UI runs an inline script


def _manage(*args: str, unset: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key not in ("DEBUG", *unset)}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=BASE_DIR, env={**environment, **env},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.smoke
def test_it_passes_the_deployment_check_with_https_on(tmp_path: Path) -> None:
    secret_key_load_or_create(tmp_path / "data" / SECRET_KEY_FILE)  # as migrate makes it (`make run`)
    result = _manage("check", "--deploy", "--fail-level", "WARNING", RALPH_HTTPS="1", unset=("SECRET_KEY",),
                     RALPH_DATA_DIR=str(tmp_path / "data"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
    without = _manage("check", "--deploy", RALPH_DATA_DIR=str(tmp_path / "data"))
    assert "security.W004" in without.stderr + without.stdout  # HSTS is what RALPH_HTTPS turns on


@pytest.mark.smoke
@pytest.mark.sqlite_only  # `manage.py migrate` on a fresh data dir with no DATABASE_URL
@pytest.mark.long
def test_it_creates_the_data_dir_and_database_for_the_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "fresh"
    result = _manage("migrate", "--verbosity", "0", unset=("DATABASE_URL", "SECRET_KEY"), RALPH_DATA_DIR=str(data))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for name in ("ralph.db", "ralph.db-wal", "ralph.db-shm", "ralph.db-lock-migrate", "secret_key"):
        if (data / name).exists() or name in ("ralph.db", "secret_key"):
            assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name


def test_it_writes_the_first_run_credentials_to_a_file_only_the_owner_reads(settings, tmp_path: Path) -> None:
    settings.DATA_DIR = tmp_path
    out = StringIO()
    call_command("bootstrap", stdout=out)
    written = tmp_path / CREDENTIALS_FILE
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    password = out.getvalue().split("password ", 1)[1].split()[0]
    assert password in written.read_text()
    assert Client().login(request=HttpRequest(), username="admin", password=password)
