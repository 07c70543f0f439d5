from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from ralphsite.core.management import RalphCommand
from ralphsite.moving.seed_io import KINDS, exporter


class Command(RalphCommand):
    help = ("Write a new SQLite file in a seed tool's own schema (KIND: ralph, ralphy, conversations, devteam, "
            "memory) from our rows, all sessions or those named by --session KEY; the tool can open it, import_seed "
            "reads it back.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=KINDS)
        parser.add_argument("path", type=Path)
        parser.add_argument("--session", action="append", dest="sessions", metavar="KEY",
                            help="Only this session (its key, or id); repeat for more.")

    def handle(self, *args: Any, **options: Any) -> None:
        writer = exporter(options["kind"], options["path"], sessions=options["sessions"])
        try:
            written = writer.run()
        except FileExistsError as error:
            raise CommandError(str(error)) from None
        for table, rows in written.items():
            self.stdout.write(f"{table:<24} {rows:>10,} rows")
        for table, reasons in writer.left_out.items():  # what the tool's schema cannot hold
            for reason, n in sorted(reasons.items()):
                self.stdout.write(f"{table}: {n:,} {reason}")
        self.stdout.write(f"wrote {options['path']}")
