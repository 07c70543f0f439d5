import re
from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ledger_app.services import sessions_purge

_AGE = re.compile(r"^(?P<days>\d+)d$")


def parse_age(value: str) -> timedelta:
    """`90d` → 90 days."""
    match = _AGE.match(value.strip())
    if not match or int(match["days"]) < 1:
        raise CommandError(f"--older-than must be a number of days like 90d, not {value!r}.")
    return timedelta(days=int(match["days"]))


class Command(BaseCommand):
    help = ("Remove ended sessions (and their ledger events and other rows) that ended more than the given "
            "age ago; the one path past the ledger's append-only triggers. Records what it removed.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", required=True, help="Age in days, e.g. 90d.")

    def handle(self, *args: Any, **options: Any) -> None:
        run = sessions_purge(older_than=parse_age(options["older_than"]))
        rows = ", ".join(f"{label}: {count}" for label, count in sorted(run.rows_removed.items())) or "nothing"
        self.stdout.write(f"Removed {run.sessions_removed} sessions ended before {run.cutoff.isoformat()} "
                          f"({rows}); retention run {run.id}.")
