from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from ralphsite.core.management import RalphCommand
from ralphsite.core.progress import Progress
from ralphsite.moving.backup import BackupError, backup_create, backup_default_dir, backup_verify, backups_prune


class Command(RalphCommand):
    help = ("Write an online, consistent copy of the database (SQLite's backup API, or pg_dump) into a folder, "
            "named by time, and delete that folder's backups older than --keep-days; or, with --verify FILE, "
            "restore a backup into a scratch database and check its integrity and ledger chain.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--to", type=Path, default=None, metavar="DIR",
                            help="Folder for the backup (default: backups/ in the data dir).")
        parser.add_argument("--keep-days", type=int, default=7, metavar="N",
                            help="Delete this folder's backups older than N days (default 7, seed 004's; 0 keeps all).")
        parser.add_argument("--verify", type=Path, default=None, metavar="FILE",
                            help="Verify this backup instead of taking one.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["verify"] is not None:
                report = backup_verify(path=options["verify"])
                self.stdout.write(f"{options['verify']}: {report.integrity}; {report.ledger}")
                return
            if options["keep_days"] < 0:
                raise CommandError("--keep-days must be 0 (keep all) or more")
            self._backup(options["to"] or backup_default_dir(), options["keep_days"])
        except BackupError as error:
            raise CommandError(str(error)) from None

    def _backup(self, directory: Path, keep_days: int) -> None:
        bar: Progress | None = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            bar = bar or Progress("backup", total, stream=self.stderr._out, unit="pages")
            bar.update(done)

        path = backup_create(directory=directory, progress=progress)
        self.stdout.write(f"backup written: {path} ({path.stat().st_size:,} bytes)")
        for removed in backups_prune(directory=directory, keep_days=keep_days):
            self.stdout.write(f"removed backup older than {keep_days} days: {removed}")
