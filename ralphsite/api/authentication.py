"""Token authentication on the hot path of every agent call."""

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Field
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.request import Request

# What permission checks read; `from_db` wants them in the model's concrete-field order.
_USER_FIELDS = {"id", "username", "is_active", "is_staff", "is_superuser"}


class _AuthorizationHeaderOnly:
    """What DRF's `get_authorization_header` reads (`request.headers`), without building it.

    Django's `request.headers` copies every header of the request into a new mapping; the token
    check needs one of them.
    """

    def __init__(self, request: Request) -> None:
        self.headers = {"authorization": request.META.get("HTTP_AUTHORIZATION", b"")}


@cache
def _credentials_query(vendor: str) -> tuple[str, tuple[Field, ...]]:
    """The token + user lookup for one database vendor, built once (names come from `_meta`)."""
    quote = connection.ops.quote_name
    user_model = get_user_model()
    fields = tuple(f for f in user_model._meta.concrete_fields if f.attname in _USER_FIELDS)
    columns = ", ".join(f"u.{quote(f.column)}" for f in fields)
    sql = (f"SELECT t.created, {columns} FROM {quote(Token._meta.db_table)} t "
           f"JOIN {quote(user_model._meta.db_table)} u ON u.id = t.user_id WHERE t.key = %s")
    return sql, fields


class FastTokenAuthentication(TokenAuthentication):
    """DRF's token authentication with one precompiled, parameterised query.

    Same behaviour as `TokenAuthentication` (same errors, `request.auth` is the Token), but the
    ORM's `select_related().get()` cost more to compile than the query took to run, on every
    request. The user is built with `from_db` from the columns permission checks need; any other
    field is loaded on access (Django's deferred fields), so a later save never overwrites data.
    """

    def authenticate(self, request: Request) -> tuple[Any, Token] | None:
        return super().authenticate(_AuthorizationHeaderOnly(request))

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        sql, fields = _credentials_query(connection.vendor)
        with connection.cursor() as cursor:
            cursor.execute(sql, [key])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        created, *user_values = row
        user = get_user_model().from_db(connection.alias, [f.attname for f in fields], user_values)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token = Token.from_db(connection.alias, ["key", "user_id", "created"], [key, user.pk, created])
        token.user = user
        return user, token
