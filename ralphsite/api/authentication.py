"""Token authentication on the hot path of every agent call."""

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

# What permission checks read; `from_db` wants them in the model's concrete-field order.
_USER_FIELDS = {"id", "username", "is_active", "is_staff", "is_superuser"}


class FastTokenAuthentication(TokenAuthentication):
    """DRF's token authentication with one precompiled, parameterised query.

    Same behaviour as `TokenAuthentication` (same errors, `request.auth` is the Token), but the
    ORM's `select_related().get()` cost more to compile than the query took to run, on every
    request. The user is built with `from_db` from the columns permission checks need; any other
    field is loaded on access (Django's deferred fields), so a later save never overwrites data.
    """

    def authenticate_credentials(self, key: str) -> tuple:
        user_model = get_user_model()
        user_table = connection.ops.quote_name(user_model._meta.db_table)
        token_table = connection.ops.quote_name(Token._meta.db_table)
        fields = [f for f in user_model._meta.concrete_fields if f.attname in _USER_FIELDS]
        columns = ", ".join(f"u.{connection.ops.quote_name(f.column)}" for f in fields)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT t.created, {columns} FROM {token_table} t "  # table/column names come from _meta
                f"JOIN {user_table} u ON u.id = t.user_id WHERE t.key = %s",
                [key],
            )
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        created, *user_values = row
        user = user_model.from_db(connection.alias, [f.attname for f in fields], user_values)
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        token = Token.from_db(connection.alias, ["key", "user_id", "created"], [key, user.pk, created])
        token.user = user
        return user, token
