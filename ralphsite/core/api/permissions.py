"""The API's one permission class: binds the request's scope and refuses writes the scope may not make."""

from typing import Any

from django.db import models
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from ralphsite.core.access import SCOPE_GLOBAL_ONLY, SCOPE_SHARED, Scope, scope_bind, scope_path_of
from ralphsite.core.errors import PermissionDenied
from ralphsite.core.models import TokenScope

# A staff member logged into the admin uses the API with the admin's reach.
STAFF_LOGIN = Scope(kind=TokenScope.GLOBAL, writable=True)


def request_scope(request: Request) -> Scope | None:
    """The scope a token authenticated the request with, a staff login's, or None (no access)."""
    if isinstance(request.auth, Scope):
        return request.auth
    user = request.user
    if user is not None and user.is_authenticated and user.is_staff:
        return STAFF_LOGIN
    return None


def _viewset_model(view: Any) -> type[models.Model] | None:
    queryset = getattr(type(view), "queryset", None)
    return queryset.model if queryset is not None else None


def write_check(scope: Scope, model: type[models.Model] | None, action: str | None) -> None:
    """Refuse (403) a write this scope may not make to rows of `model` (None: no particular model);
    `action` is the viewset action (`create`, `destroy`, …)."""
    if not scope.writable:
        raise PermissionDenied("This token is read-only.")
    if scope.is_global or model is None:
        return
    path = scope_path_of(model)
    plural = model._meta.verbose_name_plural
    if path in (SCOPE_SHARED, SCOPE_GLOBAL_ONLY):
        raise PermissionDenied(f"Only global tokens change {plural}.")
    if path == "" and scope.kind == TokenScope.SESSION and action in ("create", "destroy"):
        raise PermissionDenied(f"A session token neither creates nor deletes {plural}.")


class ScopedTokenPermission(BasePermission):
    """Authenticated with a scope; a write needs a write token, and a scope that may write that kind of
    row: rows of no session (model prices, patterns, features) are written by global tokens only, and
    a session token neither creates nor deletes sessions. Which rows a scope sees is the querysets'
    business (`RalphModelViewSet.get_queryset`): an out-of-scope row is a 404 there, never a 403 here.
    """

    message = "Only staff members use the API with a login; agents use a token."

    def has_permission(self, request: Request, view: Any) -> bool:
        scope = request_scope(request)
        if scope is None:
            return False
        scope_bind(scope)
        if request.method not in SAFE_METHODS:
            write_check(scope, _viewset_model(view), getattr(view, "action", None))
        return True
