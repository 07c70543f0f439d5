from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.http import HttpRequest
from rest_framework.test import APIClient

from ralphsite.core.models import ApiToken, TokenScope

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path) -> None:
    settings.DATA_DIR = tmp_path  # bootstrap keeps the credentials there too


def _run(command: str) -> str:
    out = StringIO()
    call_command(command, stdout=out)
    return out.getvalue()


def _printed_token(output: str) -> str:
    return output.split("API token: ", 1)[1].split()[0]


def test_it_creates_credentials_exactly_once() -> None:
    first = _run("bootstrap")
    assert "password" in first and "API token" in first and "/api/docs/" in first
    secret = _printed_token(first)
    token = ApiToken.objects.get()
    assert (token.scope, token.permission, token.user.is_staff) == (TokenScope.GLOBAL, "write", True)
    assert secret.startswith(token.prefix) and secret not in {token.key_hash, token.prefix}
    assert APIClient(HTTP_AUTHORIZATION=f"Token {secret}").get("/api/v1/sessions/").status_code == 200

    second = _run("bootstrap")
    assert secret not in second
    assert "reset_credentials" in second
    assert get_user_model().objects.count() == 1
    assert ApiToken.objects.count() == 1


def test_the_printed_password_logs_into_the_admin(client) -> None:
    output = _run("bootstrap")
    password = output.split("password ", 1)[1].split()[0]
    assert client.login(request=HttpRequest(), username="admin", password=password)
    assert client.get("/admin/").status_code == 200


def test_reset_credentials_rotates_password_and_token(client) -> None:
    old_token = _printed_token(_run("bootstrap"))
    output = _run("reset_credentials")
    new_token = _printed_token(output)
    assert new_token != old_token and ApiToken.objects.count() == 1
    assert APIClient(HTTP_AUTHORIZATION=f"Bearer {new_token}").get("/api/v1/sessions/").status_code == 200
    assert APIClient(HTTP_AUTHORIZATION=f"Token {old_token}").get("/api/v1/sessions/").status_code == 401
    password = output.split("password ", 1)[1].split()[0]
    assert client.login(request=HttpRequest(), username="admin", password=password)


def test_reset_credentials_without_a_user_fails_clearly() -> None:
    with pytest.raises(CommandError):
        _run("reset_credentials")
