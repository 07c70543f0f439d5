"""`shared_user` (tests/conftest.py): one user and token for a module, each test isolated as before."""

import pytest
from django.contrib.auth import get_user_model

from ralphsite.core.models import ApiToken
from sessions_app.models import Session

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shared_user")]

_seen: dict[str, object] = {}


def test_a_test_that_changes_the_shared_rows(user, token) -> None:
    assert token.token.user is user  # one copy per test: the token's owner is the test's user
    _seen.update(user=user, user_pk=user.pk, token_pk=token.token.pk)
    user.is_active = False
    user.save()
    ApiToken.objects.filter(pk=token.token.pk).update(label="changed")
    Session.objects.create(key="left-behind?")


def test_the_next_test_sees_none_of_its_changes(user, token, api) -> None:
    assert user is not _seen["user"] and user.is_active
    assert (user.pk, token.token.pk) == (_seen["user_pk"], _seen["token_pk"])  # the same rows, made once
    assert get_user_model().objects.get(pk=user.pk).is_active
    assert ApiToken.objects.get(pk=token.token.pk).label == ""
    assert not Session.objects.exists()
    assert api.get("/api/v1/sessions/").status_code == 200


def test_a_test_without_the_fixtures_sees_the_rows_all_the_same() -> None:
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["agent"]
