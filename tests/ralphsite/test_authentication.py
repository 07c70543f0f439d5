import importlib
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.authtoken.models import Token as DrfToken
from rest_framework.test import APIClient, APIRequestFactory

from ralphsite.core.access import token_secret_hash
from ralphsite.core.api.authentication import LAST_USED_RESOLUTION, FastTokenAuthentication
from ralphsite.core.models import ApiToken, TokenScope
from ralphsite.tokens.services import MintedToken, api_token_create
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db


def _authenticate(secret: str, keyword: str = "Token"):
    request = APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"{keyword} {secret}")
    return FastTokenAuthentication().authenticate(request)


def test_it_authenticates_with_one_query_once_last_used_is_fresh(token: MintedToken,
                                                                 django_assert_num_queries) -> None:
    with django_assert_num_queries(2):  # the lookup, and last_used_at (never set yet)
        _authenticate(token.secret)
    with django_assert_num_queries(1):
        user, scope = _authenticate(token.secret)
    assert user.pk == token.token.user_id and user.username == "agent" and user.is_authenticated
    assert scope.token_id == token.token.pk and scope.is_global and scope.writable


def test_it_records_last_use_at_most_once_a_minute(token: MintedToken) -> None:
    _authenticate(token.secret)
    first = ApiToken.objects.get().last_used_at
    assert first is not None
    _authenticate(token.secret)
    assert ApiToken.objects.get().last_used_at == first
    ApiToken.objects.update(last_used_at=first - LAST_USED_RESOLUTION)
    _authenticate(token.secret)
    assert ApiToken.objects.get().last_used_at > first


def test_it_accepts_the_bearer_keyword(token: MintedToken) -> None:
    user, _scope = _authenticate(token.secret, keyword="Bearer")
    assert user.pk == token.token.user_id
    assert APIClient(HTTP_AUTHORIZATION=f"Bearer {token.secret}").get("/api/v1/sessions/").status_code == 200


def test_it_stores_only_a_hash_of_the_secret(token: MintedToken) -> None:
    stored = ApiToken.objects.values().get()
    assert token.secret not in {str(value) for value in stored.values()}
    assert stored["key_hash"] == token_secret_hash(token.secret)


def test_it_loads_other_user_fields_on_access_and_saves_without_clobbering(token: MintedToken) -> None:
    get_user_model().objects.filter(pk=token.token.user_id).update(email="agent@example.com")
    user, _ = _authenticate(token.secret)
    assert user.email == "agent@example.com"
    user.first_name = "Ada"
    user.save()
    stored = get_user_model().objects.get(pk=token.token.user_id)
    assert (stored.email, stored.first_name) == ("agent@example.com", "Ada")


def test_it_rejects_an_inactive_user(token: MintedToken) -> None:
    get_user_model().objects.filter(pk=token.token.user_id).update(is_active=False)
    response = APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}").get("/api/v1/sessions/")
    body = assert_error_shape(response, 401, "not_authenticated")
    assert "inactive" in body["message"]


def test_it_rejects_an_unknown_token() -> None:
    response = APIClient(HTTP_AUTHORIZATION="Token " + "0" * 40).get("/api/v1/sessions/")
    body = assert_error_shape(response, 401, "not_authenticated")
    assert body["message"] == "Invalid token."


def test_it_rejects_an_expired_token(token: MintedToken) -> None:
    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}").get("/api/v1/sessions/")
    assert assert_error_shape(response, 401, "not_authenticated")["message"] == "Token expired."


def test_a_global_token_stops_working_when_its_owner_is_no_longer_staff(token: MintedToken) -> None:
    get_user_model().objects.filter(pk=token.token.user_id).update(is_staff=False)
    response = APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}").get("/api/v1/sessions/")
    assert "staff" in assert_error_shape(response, 401, "not_authenticated")["message"]


def test_a_revoked_token_is_refused_at_once(token: MintedToken) -> None:
    client = APIClient(HTTP_AUTHORIZATION=f"Token {token.secret}")
    assert client.get("/api/v1/sessions/").status_code == 200
    ApiToken.objects.all().delete()
    assert_error_shape(client.get("/api/v1/sessions/"), 401, "not_authenticated")


def test_a_drf_token_carried_over_by_the_migration_keeps_its_key(user) -> None:
    drf_token = DrfToken.objects.create(user=user)
    migration = importlib.import_module("ralphsite.migrations.0002_drf_tokens_carried_over")
    migration.carry_over(apps, None)
    assert not DrfToken.objects.exists()  # the plaintext is gone
    carried = ApiToken.objects.get()
    assert (carried.scope, carried.permission, carried.user_id) == (TokenScope.GLOBAL, "write", user.pk)
    assert APIClient(HTTP_AUTHORIZATION=f"Token {drf_token.key}").post(
        "/api/v1/sessions/", {}, format="json").status_code == 201
    migration.remove_carried_over(apps, None)
    assert not ApiToken.objects.exists()


def test_the_admin_lists_our_api_tokens_and_not_drfs(admin_client) -> None:
    """DRF's authtoken stays installed for the migration above only: its admin page is gone."""
    index = admin_client.get("/admin/").content.decode()
    assert "/admin/ralphsite/apitoken/" in index and "/admin/authtoken/" not in index
    assert admin_client.get("/admin/authtoken/tokenproxy/").status_code == 404


def test_a_non_staff_login_gets_no_api_access(client) -> None:
    get_user_model().objects.create_user(username="viewer", password="viewer-password-1")
    client.login(username="viewer", password="viewer-password-1")
    assert_error_shape(client.get("/api/v1/sessions/"), 403, "permission_denied")


def test_only_staff_members_hold_global_tokens(user) -> None:
    user.is_staff = False
    user.save()
    with pytest.raises(Exception, match="staff"):
        api_token_create(user=user, scope=TokenScope.GLOBAL)
