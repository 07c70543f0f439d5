from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from ralphsite.core.management import RalphCommand
from ralphsite.core.progress import Progress
from ralphsite.moving.seed_io import KINDS, importer_class
from ralphsite.moving.seed_io.base import SeedImportError, TableResult


class Command(RalphCommand):
    help = ("Import a seed tool's own SQLite database (KIND: ralph, ralphy, conversations, devteam, memory). "
            "Idempotent: rows already imported are recognised by their key in that database and left alone.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=KINDS)
        parser.add_argument("path", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            importer = importer_class(options["kind"])(options["path"])
        except KeyError:
            raise CommandError(f"importing {options['kind']} databases is not available yet") from None
        try:
            results = importer.run(progress=self._progress)
        except SeedImportError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(summary_table(results))

    def _progress(self, table: str, total: int) -> Callable[[int], None]:
        return Progress(table, total, stream=self.stderr._out).update


def summary_table(results: list[TableResult]) -> str:
    header = ("table", "read", "created", "already present", "skipped")
    lines = [(r.table, f"{r.read:,}", f"{r.created:,}", f"{r.present:,}",
              "; ".join(f"{n:,} {reason}" for reason, n in sorted(r.skipped.items())) or "0") for r in results]
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
    rendered = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
                for row in [header, *lines]]
    rendered += [f"{r.table}: {n:,} value(s) set aside (imported as the field's default, the tool's value kept "
                 f"on the seed row): {reason}" for r in results for reason, n in sorted(r.set_aside.items())]
    created = sum(r.created for r in results)
    rendered.append(f"{created:,} rows created" if created else "nothing new: every row was already imported")
    return "\n".join(rendered)
