from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection

from ralphsite.credentials import admin_bootstrap, credentials_file_write
from ralphsite.db.locks import deployment_lock
from ralphsite.management.commands._output import credentials_text, site_base_url


class Command(BaseCommand):
    help = "Create the admin user and API token on the first run and print them once."

    def handle(self, *args: Any, **options: Any) -> None:
        with deployment_lock(connection, "bootstrap"):  # hosts started together create one admin
            credentials = admin_bootstrap()
        if credentials is not None:
            text = credentials_text(credentials)
            path = credentials_file_write(text)
            self.stdout.write(f"{text}\n  (also written to {path}, readable by you only)")
            return
        base = site_base_url()
        self.stdout.write(
            f"Ralph Site: admin {base}/admin/  API {base}/api/v1/  docs {base}/api/docs/\n"
            "Credentials were created on the first run. To get new ones: "
            "python manage.py reset_credentials"
        )
