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


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    """Every API test creates a user: with production PBKDF2 the hash was most of each test's time."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
