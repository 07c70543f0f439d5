import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from ralphsite.core.management import RalphCommand
from ralphsite.core.money import USD_PLACES
from ralphsite.core.progress import Progress
from ralphsite.moving.seed_io import KINDS, importer_class
from ralphsite.moving.seed_io.base import SeedImportError, SkippedRow, TableResult


class Command(RalphCommand):
    help = ("Import a seed tool's own SQLite database (KIND: ralph, ralphy, conversations, devteam, memory) as one "
            "unit. Each file is a source of its own (--source, by default the file's absolute path): importing "
            "it again adds its new rows, updates the rows changed in it (through the same services as the API) "
            "and reports the rows gone from it (--delete-missing deletes them). A row with a value our fields "
            "cannot hold, or a change the services refuse, is skipped and listed (and written to --report); "
            "the rest lands.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("kind", choices=KINDS)
        parser.add_argument("path", type=Path)
        parser.add_argument("--source", default=None,
                            help="the name this file's rows are remembered by (default: its absolute path)")
        parser.add_argument("--report", type=Path, default=None,
                            help="also write the skipped rows here, tab-separated (table, key, column, value, why)")
        parser.add_argument("--delete-missing", action="store_true",
                            help="delete the rows of this source that the file no longer has (by default they are "
                                 "only reported)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            importer = importer_class(options["kind"])(options["path"], source=options["source"])
        except KeyError:
            raise CommandError(f"importing {options['kind']} databases is not available yet") from None
        try:
            # A bar on a terminal only: a log or a pipe gets the summary alone.
            progress = self._progress if self.stderr.isatty() else None
            results = importer.run(progress=progress, delete_missing=options["delete_missing"])
        except SeedImportError as error:
            raise CommandError(str(error)) from None
        except sqlite3.Error as error:  # locked, truncated or damaged past what the first check sees
            raise CommandError(f"{options['path']}: cannot be read: {error}; nothing was imported") from None
        skipped = [row for result in results for row in result.skipped_rows]
        if options["report"] is not None:
            report_write(options["report"], skipped)
        self.stdout.write(f"source: {importer.source}\n" + summary_table(results) + skipped_lines(skipped)
                          + missing_lines(results))

    def _progress(self, table: str, total: int) -> Callable[[int], None]:
        return Progress(table, total, stream=self.stderr._out).update


SKIPPED_SHOWN = 20  # rows listed in the summary; --report has them all


def summary_table(results: list[TableResult]) -> str:
    header = ("table", "read", "created", "updated", "unchanged", "gone", "skipped")
    lines = [(r.table, *(f"{n:,}" for n in (r.read, r.created, r.updated, r.unchanged, len(r.missing) + r.deleted)),
              "; ".join(f"{n:,} {reason}" for reason, n in sorted(r.skipped.items())) or "0") for r in results]
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
    rendered = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
                for row in [header, *lines]]
    rendered += [f"{r.table}: {n:,} value(s) set aside (imported as the field's default, the tool's value kept "
                 f"on the seed row): {reason}" for r in results for reason, n in sorted(r.set_aside.items())]
    rendered += [f"{r.table}: {n:,} {column} value(s) rounded to {USD_PLACES} decimal places (float noise past "
                 "them; the tool's value kept on the seed row)"
                 for r in results for column, n in sorted(r.rounded.items())]
    created, updated = sum(r.created for r in results), sum(r.updated for r in results)
    rendered.append(f"{created:,} rows created, {updated:,} updated" if created or updated
                    else "nothing new: every row was already imported as the file has it")
    return "\n".join(rendered)


def missing_lines(results: list[TableResult]) -> str:
    """The rows of the source the file no longer has: kept (listed), or how many were deleted."""
    lines = [f"  {r.table}: {n:,} deleted (--delete-missing)" for r in results if (n := r.deleted)]
    for r in results:
        if r.missing:
            shown = ", ".join(r.missing[:SKIPPED_SHOWN])
            more = f" … and {len(r.missing) - SKIPPED_SHOWN:,} more" if len(r.missing) > SKIPPED_SHOWN else ""
            lines.append(f"  {r.table}: {len(r.missing):,} kept (--delete-missing deletes them): {shown}{more}")
    return "\ngone from the file:\n" + "\n".join(lines) if lines else ""


def skipped_lines(skipped: list[SkippedRow]) -> str:
    """The rows skipped for their values (not the ones only missing a parent), table, key, column and value."""
    bad = [row for row in skipped if row.column]
    if not bad:
        return ""
    lines = [f"  {row.table} {row.key}: {row.column} = {row.value}: {row.reason}" for row in bad[:SKIPPED_SHOWN]]
    more = f"\n  … and {len(bad) - SKIPPED_SHOWN:,} more (--report lists them all)" if len(bad) > SKIPPED_SHOWN else ""
    return "\nskipped for their values:\n" + "\n".join(lines) + more


def report_write(path: Path, skipped: list[SkippedRow]) -> None:
    def cell(text: str) -> str:
        return text.replace("\t", " ").replace("\n", " ")

    lines = ["table\tkey\tcolumn\tvalue\treason"]
    lines += ["\t".join(cell(part) for part in (row.table, row.key, row.column, row.value, row.reason))
              for row in skipped]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
