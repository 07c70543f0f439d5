from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from ralphsite.core.management import RalphCommand
from ralphsite.tokens.credentials import ADMIN_USERNAME, admin_credentials_reset, credentials_text


class Command(RalphCommand):
    help = "Give the admin user a new random password and API token, and print them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default=ADMIN_USERNAME)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            credentials = admin_credentials_reset(username=options["username"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"No user {options['username']!r}; run `manage.py bootstrap` first.") from None
        self.stdout.write(credentials_text(credentials))
