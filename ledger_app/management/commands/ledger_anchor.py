from typing import Any

from django.core.management.base import CommandError

from ledger_app.anchor import AnchorRefused, ledger_anchor
from ralphsite.core.management import RalphCommand


class Command(RalphCommand):
    help = ("Write the ledger chain's head (event id, hash, count, time) as an anchor signed with "
            "RALPH_LEDGER_ANCHOR_KEY into RALPH_LEDGER_ANCHOR_DIR, outside the database; refused (exit 1) when "
            "the ledger contradicts an anchor already there.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            anchor = ledger_anchor()
        except AnchorRefused as exc:
            raise CommandError(f"anchor not written: {exc}. Run manage.py ledger_verify.") from None
        assert anchor is not None and anchor.path is not None
        self.stdout.write(f"anchored the ledger's head #{anchor.event_id} {anchor.hash} ({anchor.events} events) "
                          f"in {anchor.path}")
