from typing import Any

from django.core.management.base import BaseCommand

from ralphsite.credentials import admin_bootstrap
from ralphsite.management.commands._output import credentials_text, site_base_url


class Command(BaseCommand):
    help = "Create the admin user and API token on the first run and print them once."

    def handle(self, *args: Any, **options: Any) -> None:
        credentials = admin_bootstrap()
        if credentials is not None:
            self.stdout.write(credentials_text(credentials))
            return
        base = site_base_url()
        self.stdout.write(
            f"Ralph Site: admin {base}/admin/  API {base}/api/v1/  docs {base}/api/docs/\n"
            "Credentials were created on the first run. To get new ones: "
            "python manage.py reset_credentials"
        )
