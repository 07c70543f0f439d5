"""`migrate`, reporting a failed conversations migration with seed 002's ACODE-CONV-DATA-005."""

from typing import Any

from django.core.management.base import CommandError
from django.core.management.commands.migrate import Command as MigrateCommand
from django.db.migrations import Migration

from conversations_app.errors import MIGRATION_FAILED

APP_LABEL = "conversations_app"


class Command(MigrateCommand):
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
        try:
            super().handle(*args, **options)
        except Exception as exc:
            migration = self._running
            if migration is None or migration.app_label != APP_LABEL:
                raise
            message = f"{MIGRATION_FAILED}: migration {APP_LABEL}.{migration.name} failed: {exc}"
            self.stderr.write(message)
            raise CommandError(message) from exc
