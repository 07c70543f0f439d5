"""API token services: minting (no broader than the minter), revoking, and a token's `Scope`.

A secret is `ralph_` + 32 random bytes (URL-safe base64); only its SHA-256 is stored. A plain hash
suffices for a secret of that entropy (nothing to brute-force, unlike a password), and it keeps the
lookup one indexed equality on every request. The admin, `manage.py token_create` and
`POST /api/v1/tokens/` all mint through `api_token_create`.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from ralphsite.core.access import Scope, token_secret_hash
from ralphsite.core.addressing import by_reference
from ralphsite.core.errors import Conflict, InvalidInput, PermissionDenied
from ralphsite.core.models import ApiToken, TokenPermission, TokenScope
from sessions_app.models import Session

SECRET_PREFIX = "ralph_"
PREFIX_SHOWN = 12  # `ralph_` + 6 random characters: enough to tell tokens apart, useless to an attacker


@dataclass(frozen=True)
class MintedToken:
    token: ApiToken
    secret: str  # shown once, never stored


def _not_broader(*, minter: Scope, scope: str, session_project_path: str | None, session_id: str | None,
                 project_path: str, permission: str, agent: str, expires_at: datetime | None) -> None:
    """Refuse a token broader than the one minting it, naming the first way it would be."""
    if permission == TokenPermission.WRITE and not minter.writable:
        raise PermissionDenied("A read token cannot mint a write token.")
    if minter.kind == TokenScope.PROJECT and not (
            (scope == TokenScope.PROJECT and project_path == minter.project_path)
            or (scope == TokenScope.SESSION and session_project_path == minter.project_path)):
        raise PermissionDenied(f"A project token mints tokens of its project ({minter.project_path!r}) only.")
    if minter.kind == TokenScope.SESSION and not (scope == TokenScope.SESSION and session_id == minter.session_id):
        raise PermissionDenied("A session token mints tokens of its own session only.")
    if minter.agent and agent != minter.agent:
        raise PermissionDenied(f"A token bound to agent {minter.agent!r} mints tokens for that agent only.")
    if minter.expires_at is not None and (expires_at is None or expires_at > minter.expires_at):
        raise PermissionDenied(f"A token expiring at {minter.expires_at.isoformat()} cannot mint one that "
                               "outlives it.")


def _agent_unclaimed(*, minter: Scope, agent: str) -> None:
    """An agent name is bound to the token it was minted for: once a live token acts as `agent`, only a token
    bound to that agent mints more for it (409 `agent_taken`), so no other token can borrow the name and act
    on the agent's claims. The admin and manage.py (operators, no minter) may still mint for any agent."""
    if not agent or minter.agent == agent:
        return
    live = ApiToken.objects.filter(agent=agent).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    if live.exists():
        raise Conflict(f"Agent {agent!r} already has its token; only a token bound to {agent!r} mints more for it.",
                       code="agent_taken", details={"agent": agent})


def api_token_create(*, user: AbstractBaseUser, scope: str, permission: str = TokenPermission.WRITE,
                     session_id: str | None = None, project_path: str = "", agent: str = "",
                     expires_at: datetime | None = None, label: str = "", minter: Scope | None = None) -> MintedToken:
    """Mint a token for `user`. A `minter` (the token or login asking) bounds it: the new token's scope,
    permission, agent and expiry are at most the minter's; its missing agent and expiry are the
    minter's. A global token needs a staff owner."""
    if minter is not None:
        agent = agent or minter.agent
        expires_at = expires_at or minter.expires_at
    if expires_at is not None and expires_at <= timezone.now():
        raise InvalidInput("The expiry is in the past.", details={"expires_at": ["Must be in the future."]})
    not_applying = {name: [f"Does not apply to a {scope} token."]
                    for name, given, applies in (("session", session_id, TokenScope.SESSION),
                                                 ("project_path", project_path, TokenScope.PROJECT))
                    if given and scope != applies and scope in TokenScope.values}
    if not_applying:  # refused, not dropped: the caller meant a token other than the one it would get
        raise InvalidInput(f"Not for a {scope} token: {', '.join(not_applying)}.", details=not_applying)
    session_project_path = None
    if scope == TokenScope.SESSION:
        if not session_id:
            raise InvalidInput("A session token names its session.", details={"session": ["Required."]})
        session_project_path = Session.objects.filter(pk=session_id).values_list("project_path", flat=True).first()
        if session_project_path is None:
            raise InvalidInput(f"Session {session_id} does not exist.", details={"session": [session_id]})
    elif scope == TokenScope.PROJECT:
        if not project_path:
            raise InvalidInput("A project token names its project path.", details={"project_path": ["Required."]})
    elif scope == TokenScope.GLOBAL:
        if not user.is_staff:
            raise PermissionDenied("Only staff users hold global tokens.")
    else:
        raise InvalidInput(f"Unknown scope {scope!r}.", details={"scope": [f"One of {', '.join(TokenScope.values)}."]})
    if minter is not None:
        _not_broader(minter=minter, scope=scope, session_project_path=session_project_path, session_id=session_id,
                     project_path=project_path, permission=permission, agent=agent, expires_at=expires_at)
        _agent_unclaimed(minter=minter, agent=agent)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, key_hash=token_secret_hash(secret), prefix=secret[:PREFIX_SHOWN], label=label, scope=scope,
            session_id=session_id, project_path=project_path, permission=permission, agent=agent,
            expires_at=expires_at)
    return MintedToken(token=token, secret=secret)


def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke at once: the next request with the secret is refused (the row is gone)."""
    token.delete()


def api_tokens_visible(*, user: AbstractBaseUser, scope: Scope) -> QuerySet[ApiToken]:
    """The tokens of `user` that `scope` could have minted (no broader than it): what a
    token lists and may revoke. A session token sees its session's tokens, a project token its
    project's (and its sessions'), an agent-bound token only that agent's."""
    tokens = ApiToken.objects.filter(user=user)
    if scope.kind == TokenScope.SESSION:
        tokens = tokens.filter(scope=TokenScope.SESSION, session_id=scope.session_id)
    elif scope.kind == TokenScope.PROJECT:
        tokens = tokens.filter(Q(scope=TokenScope.PROJECT, project_path=scope.project_path)
                               | Q(scope=TokenScope.SESSION, session__project_path=scope.project_path))
    if scope.agent:
        tokens = tokens.filter(agent=scope.agent)
    return tokens


def session_id_resolve(*, reference: str, scope: Scope) -> str:
    """The id of the session `reference` names among the sessions `scope` sees, by the rule every door names a
    session by (`ralphsite.core.addressing.by_reference`: its id, its key, a seed tool's id; 409 `ambiguous_key`
    for a key several sessions in scope hold); an unknown session and one out of scope are the same 400 (no
    existence leak)."""
    session = by_reference(scope.filter(Session.objects.all()), reference)
    if session is None:
        raise InvalidInput(f"No session {reference!r}.", details={"session": [f"No session {reference!r}."]})
    return session.pk
