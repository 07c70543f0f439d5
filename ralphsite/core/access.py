"""What an API token may see and change: its `Scope`, applied to querysets, references and SQL.

Every row belongs to at most one session, reached through a few foreign keys. Each model states that
path once, next to its fields, as `scope_path` (a lookup path to the session: `"session"`,
`"task__session"`; `""` for the session itself), or declares it belongs to no session:

* `SCOPE_SHARED`: cross-session data every token reads (model prices, global patterns); only global
  write tokens write it;
* `SCOPE_GLOBAL_ONLY`: data that is no session's (features, baselines): global tokens only.

A token's scope is `global` (everything), `project` (the sessions whose `project_path` is the
token's, and what they own) or `session` (one session and what it owns). `Scope.filter` narrows a
queryset of any model to what the scope sees: out-of-scope rows are simply absent, so lists omit them
and detail routes answer 404, never 403. The API binds the request's scope once
(`ralphsite.core.api.permissions.ScopedTokenPermission`); serializer fields and filters read it with
`current_scope()`.
"""

import hashlib
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, TypeVar

from django.apps import apps
from django.db import connection, models
from django.db.models import QuerySet

from ralphsite.core.models import ApiToken, TokenPermission, TokenScope

M = TypeVar("M", bound=models.Model)

SCOPE_SHARED: Final = "<shared>"
SCOPE_GLOBAL_ONLY: Final = "<global only>"


def token_secret_hash(secret: str) -> str:
    """What is stored of a token's secret (`ApiToken.key_hash`)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def user_permissions(user: Any) -> frozenset[str] | None:
    """The Django model permissions bounding what `user` reaches through the API, with a login or any
    token of theirs: None (no bound beyond the token's scope) for a superuser and for an agent account
    (not staff: it never logs in and holds no global token); a staff member's granted permissions."""
    if user.is_superuser or not user.is_staff:
        return None
    return frozenset(user.get_all_permissions())


def person_name(user: Any) -> str:
    """A person acting (in the admin, or with their login), as records name who acted: marked as a person."""
    return f"admin:{user.get_username()}"


def token_actor(token: ApiToken) -> str:
    """Who acts with `token`, as records name them: the agent it is bound to, else its owner and its name
    (its label, or its prefix when it has none)."""
    return token.agent or f"{token.user.get_username()} (token {token.label or token.prefix})"


def token_scope(token: ApiToken) -> "Scope":
    return Scope(kind=token.scope, writable=token.permission == TokenPermission.WRITE, agent=token.agent,
                 session_id=token.session_id, project_path=token.project_path, token_id=token.pk,
                 expires_at=token.expires_at, permissions=user_permissions(token.user), actor=token_actor(token))


def scope_path_of(model: type[models.Model]) -> str:
    """The model's declared path to its session (or SCOPE_SHARED / SCOPE_GLOBAL_ONLY)."""
    path = getattr(model, "scope_path", None)
    if path is None:
        raise TypeError(f"{model._meta.label} declares no scope_path: say how its rows reach their session "
                        "(see ralphsite.core.access).")
    return path


def scope_fields(model: type[models.Model]) -> tuple[str, ...]:
    """The fields whose value decides which scope a row of `model` is in: a session's `project_path`, or
    the first foreign key on the model's path to its session (none for rows of no session)."""
    path = scope_path_of(model)
    if path in (SCOPE_SHARED, SCOPE_GLOBAL_ONLY):
        return ()
    return ("project_path",) if path == "" else (path.split("__")[0],)


def session_model() -> type[models.Model]:
    """The Session model, named by label: the base layer imports no app."""
    return apps.get_model("sessions_app", "Session")


@dataclass(eq=False)
class Scope:
    """What one request may see (`kind` and its target) and do (`writable`, `agent`).

    Built per request from the token (or a staff user's login), so the memo of sessions already
    checked lives exactly as long as the request.
    """

    kind: str
    writable: bool
    agent: str = ""
    session_id: str | None = None
    project_path: str = ""
    token_id: int | None = None
    expires_at: datetime | None = None
    # The owner's model permissions (`user_permissions`): a staff member's login or token reaches no
    # further than the admin lets them. None: the scope alone decides.
    permissions: frozenset[str] | None = None
    # Who acts, from the credential (`token_actor`, `person_name`): what `answered_by` and a signal's
    # `sent_by` record. Empty outside a request (a management command names no one).
    actor: str = ""
    _sessions_seen: dict[str, bool] = field(default_factory=dict, repr=False)

    @property
    def is_global(self) -> bool:
        return self.kind == TokenScope.GLOBAL

    def permits(self, model: type[models.Model], verb: str) -> bool:
        """Whether the owner's model permissions allow `verb` (view, add, change, delete) on `model`."""
        return self.permissions is None or model_permission(model, verb) in self.permissions

    def session_lookup(self, model: type[models.Model]) -> tuple[str, str] | None:
        """(lookup, value) that keeps `model`'s rows of this scope; None when every row is visible.
        Raises `OutOfScope` when none is (a no-session model under a non-global scope)."""
        if self.is_global:
            return None
        path = scope_path_of(model)
        if path == SCOPE_SHARED:
            return None
        if path == SCOPE_GLOBAL_ONLY:
            raise OutOfScope(model)
        prefix = f"{path}__" if path else ""
        if self.kind == TokenScope.SESSION:
            return f"{prefix}id", self.session_id
        return f"{prefix}project_path", self.project_path

    def filter(self, queryset: QuerySet[M]) -> QuerySet[M]:
        """The rows of `queryset` this scope sees."""
        try:
            lookup = self.session_lookup(queryset.model)
        except OutOfScope:
            return queryset.none()
        return queryset if lookup is None else queryset.filter(**{lookup[0]: lookup[1]})

    def sees(self, model: type[models.Model], pk: Any) -> bool:
        """Whether the row of `model` with this primary key exists within the scope (for a global
        scope: taken on trust, the caller's own lookup reports a missing row). Sessions are memoized:
        a bulk body names the same session many times."""
        if self.is_global:
            return True
        is_session = model is session_model()
        if is_session and self.kind == TokenScope.SESSION:
            return pk == self.session_id
        seen = self._sessions_seen.get(pk) if is_session else None
        if seen is None:
            seen = self.filter(model._default_manager.filter(pk=pk)).exists()
            if is_session:
                self._sessions_seen[pk] = seen
        return seen

    def session_sql(self, column: str) -> tuple[str, list[Any]] | None:
        """A WHERE condition (and its parameters) keeping rows whose session id is in `column`, for
        hand-written SQL; None for a global scope."""
        if self.is_global:
            return None
        if self.kind == TokenScope.SESSION:
            return f"{column} = %s", [self.session_id]
        meta = session_model()._meta
        quote = connection.ops.quote_name
        return (f"{column} IN (SELECT {quote(meta.pk.column)} FROM {quote(meta.db_table)} "
                f"WHERE {quote(meta.get_field('project_path').column)} = %s)", [self.project_path])

    def contains(self, instance: models.Model) -> bool:
        """Whether this scope sees `instance` as it is stored now (one query; none for a global scope)."""
        return self.is_global or self.filter(type(instance)._default_manager.filter(pk=instance.pk)).exists()


def model_permission(model: type[models.Model], verb: str) -> str:
    """Django's name of the permission to `verb` rows of `model`: `sessions_app.view_session`."""
    return f"{model._meta.app_label}.{verb}_{model._meta.model_name}"


class OutOfScope(Exception):
    """No row of this model is visible to the scope."""


UNRESTRICTED: Final = Scope(kind=TokenScope.GLOBAL, writable=True)

# The scope of the API request being served. `None` outside API requests (management commands, the
# admin, background threads): they act with no restriction. Inside an API request the middleware
# binds `_UNBOUND` until the permission class binds the request's scope, so code that reads the scope
# before authorization fails closed.
_UNBOUND: Final = Scope(kind="unbound", writable=False)
_current: ContextVar[Scope | None] = ContextVar("ralph_scope", default=None)


def current_scope() -> Scope:
    scope = _current.get()
    if scope is None:
        return UNRESTRICTED
    if scope is _UNBOUND:
        raise RuntimeError("The request's scope was read before the permission class bound it.")
    return scope


def acting(named: str = "") -> str:
    """Who makes a write: `named` when the door says (the admin names its person), else the request's
    credential (`Scope.actor`)."""
    return named or current_scope().actor


def scope_bind(scope: Scope | None) -> None:
    """Bind the scope of the request being served (the permission class does, once per request)."""
    _current.set(scope)


def scope_unbound_during(call: Any, *args: Any) -> Any:
    """Run `call(*args)` (a request) with `_UNBOUND` bound, restoring what was bound before."""
    token = _current.set(_UNBOUND)
    try:
        return call(*args)
    finally:
        _current.reset(token)
