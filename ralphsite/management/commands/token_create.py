import re
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from ralphsite.core.access import UNRESTRICTED
from ralphsite.core.errors import DomainError
from ralphsite.core.models import TokenPermission, TokenScope
from ralphsite.tokens.services import api_token_create, session_id_resolve

_DURATION = re.compile(r"^(\d+)([smhdw]?)$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def duration_parse(text: str) -> timedelta:
    """`90`, `90s`, `30m`, `12h`, `7d`, `2w` as a duration."""
    match = _DURATION.match(text.strip())
    if match is None or int(match[1]) == 0:
        raise CommandError(f"--expires {text!r}: a positive number with an optional unit s, m, h, d or w (7d).")
    return timedelta(seconds=int(match[1]) * _UNIT_SECONDS[match[2]])


class Command(BaseCommand):
    help = ("Mint an API token for a user and print it; the secret is on the last line, shown once. "
            "Without --session or --project the token is global (staff users only).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="the owner's username")
        target = parser.add_mutually_exclusive_group()
        target.add_argument("--session", help="a session token: the session's id or key")
        target.add_argument("--project", help="a project token: the project_path of its sessions")
        target.add_argument("--global", action="store_true", dest="is_global", help="a global token (the default)")
        parser.add_argument("--read-only", action="store_true", help="a read token (default: write)")
        parser.add_argument("--agent", default="", help="the agent name the token acts as")
        parser.add_argument("--expires", help="lifetime: 3600, 30m, 12h, 7d, 2w (default: never)")
        parser.add_argument("--label", default="", help="what the token is for")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user = get_user_model().objects.get(username=options["user"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user {options['user']!r}.") from None
        expires_at = timezone.now() + duration_parse(options["expires"]) if options["expires"] else None
        try:
            session_id = (session_id_resolve(reference=options["session"], scope=UNRESTRICTED)
                          if options["session"] else None)
            scope = (TokenScope.SESSION if session_id else TokenScope.PROJECT if options["project"]
                     else TokenScope.GLOBAL)
            minted = api_token_create(
                user=user, scope=scope, session_id=session_id, project_path=options["project"] or "",
                permission=TokenPermission.READ if options["read_only"] else TokenPermission.WRITE,
                agent=options["agent"], expires_at=expires_at, label=options["label"])
        except DomainError as error:
            raise CommandError(error.message) from None
        token = minted.token
        target = {TokenScope.SESSION: f" session {token.session_id}",
                  TokenScope.PROJECT: f" project {token.project_path!r}"}.get(token.scope, "")
        self.stdout.write(f"API token {token.pk} for {user.get_username()}: {token.scope}{target}, {token.permission}"
                          + (f", agent {token.agent!r}" if token.agent else "")
                          + (f", expires {token.expires_at.isoformat()}" if token.expires_at else "")
                          + ". The secret (shown once):")
        self.stdout.write(minted.secret)
