from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from ralphsite.core.management import RalphCommand
from ralphsite.core.progress import Progress
from ralphsite.moving.backup import BackupError, backup_restore


class Command(RalphCommand):
    help = ("Replace the database's content with a backup written by `manage.py backup` (stop the server first). "
            "A database that already holds sessions, events or conversations is refused unless --force.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, metavar="FILE")
        parser.add_argument("--force", action="store_true", help="Overwrite a database that has data.")

    def handle(self, *args: Any, **options: Any) -> None:
        bar: Progress | None = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            bar = bar or Progress("restore", total, stream=self.stderr._out, unit="pages")
            bar.update(done)

        try:
            backup_restore(path=options["file"], force=options["force"], progress=progress)
        except BackupError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"restored {options['file']}")
