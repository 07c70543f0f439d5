from typing import Any

from django.core.management.base import CommandParser

from ledger_app.anchor import AnchorRefused, ledger_anchor
from ledger_app.services import sessions_purge
from ralphsite.core.management import RalphCommand, parse_age, retention_arguments


class Command(RalphCommand):
    help = ("Remove ended sessions (and their ledger events and other rows) that ended more than the given "
            "age ago; the one path past the ledger's append-only triggers. Records what it removed.")

    def add_arguments(self, parser: CommandParser) -> None:
        retention_arguments(parser, example="90d")

    def handle(self, *args: Any, **options: Any) -> None:
        dry_run = options["dry_run"]
        run = sessions_purge(older_than=parse_age(options["older_than"]), dry_run=dry_run)
        rows = ", ".join(f"{label}: {count}" for label, count in sorted(run.rows_removed.items())) or "nothing"
        verb = "Would remove" if dry_run else "Removed"
        record = " (dry run: nothing removed)" if dry_run else f"; retention run {run.id}"
        self.stdout.write(f"{verb} {run.sessions_removed} sessions ended before {run.cutoff.isoformat()} "
                          f"({rows}){record}.")
        for session_id in run.session_ids:
            self.stdout.write(f"  {session_id}")
        if dry_run or run.retention_event_id is None:
            return
        # The purge's retention record is the new head: anchor it now, not at the server's next turn.
        try:
            anchor = ledger_anchor()
        except AnchorRefused as exc:
            self.stderr.write(f"anchor not written: {exc}. Run manage.py ledger_verify.")
            return
        self.stdout.write(f"Anchored the ledger's head #{anchor.event_id} in {anchor.path}.")
