"""The API's one permission class: binds the request's scope and refuses writes the scope may not make."""

from typing import Any

from django.db import models
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from ralphsite.core.access import (
    SCOPE_GLOBAL_ONLY,
    SCOPE_SHARED,
    Scope,
    model_permission,
    person_name,
    scope_bind,
    scope_fields,
    scope_path_of,
    user_permissions,
)
from ralphsite.core.errors import PermissionDenied
from ralphsite.core.models import TokenScope


def staff_login_scope(user: Any) -> Scope:
    """A staff member logged into the admin uses the API with the admin's reach: everything for a
    superuser, otherwise exactly the model permissions the admin gives them (a login is not a key)."""
    return Scope(kind=TokenScope.GLOBAL, writable=True, permissions=user_permissions(user), actor=person_name(user))


def request_scope(request: Request) -> Scope | None:
    """The scope a token authenticated the request with, a staff login's, or None (no access)."""
    if isinstance(request.auth, Scope):
        return request.auth
    user = request.user
    if user is not None and user.is_authenticated and user.is_staff:
        return staff_login_scope(user)
    return None


def _viewset_model(view: Any) -> type[models.Model] | None:
    queryset = getattr(type(view), "queryset", None)
    return queryset.model if queryset is not None else None


def _viewset_models(view: Any) -> tuple[type[models.Model], ...]:
    """The models whose permissions a route needs: its queryset's, or the `permission_models` a viewset
    of no queryset declares (search, statistics, sync, tokens)."""
    model = _viewset_model(view)
    return (model,) if model is not None else tuple(getattr(type(view), "permission_models", ()))


def action_verb(method: str, action: str | None) -> str:
    """The model permission verb an API action needs: reads view, creates add, deletes delete, and every
    other write (updates and domain actions such as claim or finish) change."""
    if method in SAFE_METHODS:
        return "view"
    return {"create": "add", "destroy": "delete"}.get(action or "", "change")


def model_permissions_check(scope: Scope, models_: tuple[type[models.Model], ...], verb: str) -> None:
    """Refuse (403) what the owner's model permissions do not allow (`Scope.permissions`). A route of no
    declared model is for those the permissions do not bound (superusers, agent accounts) only."""
    if scope.permissions is None:
        return
    missing = [model_permission(model, verb) for model in models_ if not scope.permits(model, verb)]
    if missing or not models_:
        needs = ", ".join(missing) if missing else "a superuser"
        raise PermissionDenied(f"Your user may not do this: it needs {needs} (an administrator grants permissions "
                               "in the admin).", details={"permissions": missing})


def write_check(scope: Scope, model: type[models.Model] | None, action: str | None) -> None:
    """Refuse (403) a write this scope may not make to rows of `model` (None: no particular model);
    `action` is the viewset action (`create`, `destroy`, …)."""
    if not scope.writable:
        raise PermissionDenied("This token is read-only.")
    if model is not None:
        model_permissions_check(scope, (model,), action_verb("POST", action))
    if scope.is_global or model is None:
        return
    path = scope_path_of(model)
    plural = model._meta.verbose_name_plural
    if path in (SCOPE_SHARED, SCOPE_GLOBAL_ONLY):
        raise PermissionDenied(f"Only global tokens change {plural}.")
    if path == "" and scope.kind == TokenScope.SESSION and action in ("create", "destroy"):
        raise PermissionDenied(f"A session token neither creates nor deletes {plural}.")


def scope_fields_check(scope: Scope, instance: models.Model, changes: dict[str, Any]) -> None:
    """Refuse (403) a session token changing a field that decides which scope `instance` is in (its
    project, the session it belongs to): a session token never moves a row, not even its own session
    into another project. Other scoped tokens move a row only where they could have created it (the
    viewset checks the row it leaves, `RalphModelViewSet._written_in_scope`)."""
    if scope.kind != TokenScope.SESSION:
        return
    for name in scope_fields(type(instance)):
        if name in changes:
            new = changes[name]
            if getattr(new, "pk", new) != getattr(instance, instance._meta.get_field(name).attname):
                raise PermissionDenied(f"A session token does not change {name}: it decides the row's scope.",
                                       details={name: ["A session token does not change it."]})


class ScopedTokenPermission(BasePermission):
    """Authenticated with a scope, and, for a staff member other than a superuser, the Django model
    permission the action needs (`action_verb`); a write needs a write token, and a scope that may write that kind of
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
        action = getattr(view, "action", None)
        model_permissions_check(scope, _viewset_models(view), action_verb(request.method, action))
        if request.method not in SAFE_METHODS:
            write_check(scope, _viewset_model(view), action)
        return True
