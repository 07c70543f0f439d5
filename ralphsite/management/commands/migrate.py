from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.management.base import CommandError
from django.core.management.commands.migrate import Command as DjangoMigrateCommand
from django.db import connections
from django.db.migrations import Migration

from ralphsite.core.db.locks import deployment_lock
from ralphsite.core.secrets import secret_key_provide


class Command(DjangoMigrateCommand):
    """Django's migrate, one process at a time per database, naming a failed migration by its app's code.

    Several app hosts started together each run `make run`, whose first step is migrate: without
    the lock two of them applied the same migration at once and one failed. The later ones now
    wait, then find nothing left to apply.

    An app whose seed gives migration failures an error code (seed 002's ACODE-CONV-DATA-005)
    declares it as `migration_failure_code` on its AppConfig; a failure in one of its migrations
    is reported as a CommandError starting with that code.

    Being the first step of setting a deployment up, it also gives the data dir its secret key
    (unless SECRET_KEY is set; ralphsite/core/secrets.py); `--plan` and `--check` only look.
    """

    _running: Migration | None = None

    def migration_progress_callback(self, action: str, migration: Migration | None = None,
                                    fake: bool = False) -> None:
        if action in ("apply_start", "unapply_start"):
            self._running = migration
        elif action in ("apply_success", "unapply_success"):
            self._running = None
        super().migration_progress_callback(action, migration, fake)

    def handle(self, *args: Any, **options: Any) -> None:
        self._running = None
        if not (options["plan"] or options["check_unapplied"]):
            secret_key_provide(Path(settings.DATA_DIR))
        with deployment_lock(connections[options["database"]], "migrate"):
            try:
                super().handle(*args, **options)
            except Exception as exc:
                failed = self._running
                code = failed and getattr(apps.get_app_config(failed.app_label), "migration_failure_code", None)
                if not code:
                    raise
                message = f"{code}: migration {failed.app_label}.{failed.name} failed: {exc}"
                self.stderr.write(message)
                raise CommandError(message) from exc
