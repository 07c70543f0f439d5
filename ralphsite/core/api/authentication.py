"""Token authentication on the hot path of every agent call.

Fast path `token` (`ralphsite.core.db.fast_paths`, asked on every call by `token_with_owner`): the token
and its owner read by one hand-written, parameterised query, built with `Model.from_db`
(`_token_with_owner_sql`). With it off, the ORM's `select_related("user")` query (`_token_with_owner_orm`).
Measured gain (`make bench BENCH_ARGS=--fast-paths`, interleaved A/B with it off, SQLite, 2-vCPU Intel
Xeon VM at load 0.8-2.4, 2026-11-28, 400 samples a side): p50 off/on 1.43 on get chat, the cheapest
authenticated call (1.49-1.53 in two runs on a loaded machine, 2026-11-25).
Private Django names it touches: `_meta.db_table`, `_meta.concrete_fields` and column names; deferred
fields of a `from_db` instance.
"""

import hmac
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Field
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from ralphsite.core.access import Scope, token_scope, token_secret_hash
from ralphsite.core.api.throttling import refused_credentials_count
from ralphsite.core.db.fast_paths import fast_paths_on
from ralphsite.core.models import ApiToken, TokenScope

# What permission checks read; `from_db` wants them in the model's concrete-field order.
_USER_FIELDS = {"id", "username", "is_active", "is_staff", "is_superuser"}
# In the model's field order, as `from_db` wants them; the key hash second.
# In the model's field order (`from_db` reads them so). The prefix and label name who acts with an unbound token
# (`Scope.actor`, `token_actor`).
_TOKEN_COLUMNS = ("id", "key_hash", "prefix", "label", "scope", "session_id", "project_path", "permission", "agent",
                  "expires_at", "last_used_at")
_KEYWORDS = ("token", "bearer")
# `last_used_at` is written at most this often per token: a write on every call would cost every read a
# database write (and on SQLite the write lock).
LAST_USED_RESOLUTION = timedelta(minutes=1)


@cache
def _credentials_query(vendor: str) -> tuple[str, tuple[Field, ...]]:
    """The token + user lookup for one database vendor, built once (names come from `_meta`)."""
    quote = connection.ops.quote_name
    user_model = get_user_model()
    fields = tuple(f for f in user_model._meta.concrete_fields if f.attname in _USER_FIELDS)
    token_meta = ApiToken._meta
    token_columns = ", ".join(f"t.{quote(token_meta.get_field(name).column)}" for name in _TOKEN_COLUMNS)
    user_columns = ", ".join(f"u.{quote(f.column)}" for f in fields)
    owner, key_hash = (quote(token_meta.get_field(name).column) for name in ("user", "key_hash"))
    sql = (f"SELECT {token_columns}, {user_columns} FROM {quote(token_meta.db_table)} t "
           f"JOIN {quote(user_model._meta.db_table)} u ON u.{quote(user_model._meta.pk.column)} = t.{owner} "
           f"WHERE t.{key_hash} = %s")
    return sql, fields


def _aware(value: datetime | str | None) -> datetime | None:
    """A datetime column read by raw SQL: SQLite hands back its stored text, PostgreSQL a datetime."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = value.replace(tzinfo=UTC)
    return value


def token_with_owner(digest: str) -> ApiToken | None:
    """The token whose secret hashes to `digest`, its owner loaded: by hand-written SQL when the fast
    path `token` is on, else by the ORM (the reference it must agree with)."""
    return _token_with_owner_sql(digest) if fast_paths_on("token") else _token_with_owner_orm(digest)


def _token_with_owner_orm(digest: str) -> ApiToken | None:
    return ApiToken.objects.select_related("user").filter(key_hash=digest).first()


def _token_with_owner_sql(digest: str) -> ApiToken | None:
    """One precompiled, parameterised query (the ORM's `select_related().get()` cost more to compile
    than the query took to run, on every request). The user is built with `from_db` from the columns
    permission checks need; any other field is loaded on access (Django's deferred fields), so a later
    save never overwrites data."""
    sql, fields = _credentials_query(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, [digest])
        row = cursor.fetchone()
    if row is None:
        return None
    count = len(_TOKEN_COLUMNS)
    token = ApiToken.from_db(connection.alias, _TOKEN_COLUMNS, [
        _aware(value) if name in ("expires_at", "last_used_at") else value
        for name, value in zip(_TOKEN_COLUMNS, row[:count], strict=True)])
    token.user = get_user_model().from_db(connection.alias, [f.attname for f in fields], row[count:])
    return token


class FastTokenAuthentication(BaseAuthentication):
    """`Authorization: Token <secret>` or `Bearer <secret>`: the token's owner, and its `Scope` as
    `request.auth`.

    One query finds the token by the SHA-256 of the secret, with its owner (`token_with_owner`).
    """

    def authenticate(self, request: Request) -> tuple[Any, Scope] | None:
        # Django's `request.headers` would copy every header of the request; this needs one.
        parts = request.META.get("HTTP_AUTHORIZATION", "").split()
        if not parts or parts[0].lower() not in _KEYWORDS:
            return None
        try:
            if len(parts) == 1:
                raise exceptions.AuthenticationFailed(_("Invalid token header. No credentials provided."))
            if len(parts) > 2:
                raise exceptions.AuthenticationFailed(
                    _("Invalid token header. Token string should not contain spaces."))
            return self.authenticate_credentials(parts[1])
        except exceptions.AuthenticationFailed:
            refused_credentials_count(request)  # a 429 once this address has guessed past the rate
            raise

    def authenticate_header(self, request: Request) -> str:
        return "Token"

    def authenticate_credentials(self, secret: str) -> tuple[Any, Scope]:
        digest = token_secret_hash(secret)
        token = token_with_owner(digest)
        # The lookup is by hash (an equality on a digest leaks nothing about the secret); the
        # constant-time comparison guards against a database collation that matched loosely.
        if token is None or not hmac.compare_digest(token.key_hash, digest):
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = token.user
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        now = timezone.now()
        if token.expires_at is not None and token.expires_at <= now:
            raise exceptions.AuthenticationFailed(_("Token expired."))
        if token.scope == TokenScope.GLOBAL and not user.is_staff:
            raise exceptions.AuthenticationFailed(_("A global token needs a staff owner."))
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return user, token_scope(token)


class FastTokenAuthenticationScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema (and Swagger UI's Authorize button) describes the token header."""

    target_class = FastTokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer",
                "description": "`Authorization: Bearer <secret>` (or `Token <secret>`): an API token."}
