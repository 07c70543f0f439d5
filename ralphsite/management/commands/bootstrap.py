from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser
from django.db import connection

from ralphsite.core.db.locks import deployment_lock
from ralphsite.core.management import RalphCommand
from ralphsite.core.secrets import secret_key_provide
from ralphsite.tokens.credentials import (
    admin_bootstrap,
    credentials_file_write,
    credentials_show_later,
    credentials_text,
    manage_command,
    site_base_url,
)


class Command(RalphCommand):
    help = ("Create the admin user and API token on the first run and print them once (and the data dir's "
            "secret key if there is none and no SECRET_KEY).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--show-when-ready", action="store_true",
                            help="Leave first-run credentials for the server to print once it is ready (make run).")

    def handle(self, *args: Any, **options: Any) -> None:
        secret_key_provide(Path(settings.DATA_DIR))  # the server's admin logins sign with it
        with deployment_lock(connection, "bootstrap"):  # hosts started together create one admin
            credentials = admin_bootstrap()
        if credentials is not None:
            text = credentials_text(credentials)
            path = credentials_file_write(text)
            if options["show_when_ready"]:
                credentials_show_later()
                self.stdout.write("First run: the admin and an API token were created; the server prints them "
                                  "once it is ready.")
                return
            self.stdout.write(f"{text}\n  (also written to {path}, readable by you only)")
            return
        base = site_base_url()
        self.stdout.write(
            f"Ralph Site: admin {base}/admin/  API {base}/api/v1/  docs {base}/api/docs/\n"
            f"Credentials were created on the first run. To get new ones: {manage_command('reset_credentials')}"
        )
