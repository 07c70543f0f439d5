import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient, APIRequestFactory

from ralphsite.api.authentication import FastTokenAuthentication
from tests.api_mixins import assert_error_shape

pytestmark = pytest.mark.django_db


def test_it_authenticates_with_one_query(token: Token, django_assert_num_queries) -> None:
    request = APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Token {token.key}")
    with django_assert_num_queries(1):
        user, auth = FastTokenAuthentication().authenticate(request)
    assert user.pk == token.user_id and user.username == "agent" and user.is_authenticated
    assert auth.key == token.key and auth.user is user


def test_it_loads_other_user_fields_on_access_and_saves_without_clobbering(token: Token) -> None:
    get_user_model().objects.filter(pk=token.user_id).update(email="agent@example.com")
    request = APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Token {token.key}")
    user, _ = FastTokenAuthentication().authenticate(request)
    assert user.email == "agent@example.com"
    user.first_name = "Ada"
    user.save()
    stored = get_user_model().objects.get(pk=token.user_id)
    assert (stored.email, stored.first_name) == ("agent@example.com", "Ada")


def test_it_rejects_an_inactive_user(token: Token) -> None:
    get_user_model().objects.filter(pk=token.user_id).update(is_active=False)
    response = APIClient(HTTP_AUTHORIZATION=f"Token {token.key}").get("/api/v1/sessions/")
    body = assert_error_shape(response, 401, "not_authenticated")
    assert "inactive" in body["message"]


def test_it_rejects_an_unknown_token() -> None:
    response = APIClient(HTTP_AUTHORIZATION="Token " + "0" * 40).get("/api/v1/sessions/")
    body = assert_error_shape(response, 401, "not_authenticated")
    assert body["message"] == "Invalid token."
