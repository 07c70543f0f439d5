from typing import Any

from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import connections

from ralphsite.db.locks import deployment_lock


class Command(DjangoMigrateCommand):
    """Django's migrate, one process at a time per database.

    Several app hosts started together each run `make run`, whose first step is migrate: without
    the lock two of them applied the same migration at once and one failed. The later ones now
    wait, then find nothing left to apply.
    """

    def handle(self, *args: Any, **options: Any) -> None:
        with deployment_lock(connections[options["database"]], "migrate"):
            super().handle(*args, **options)
