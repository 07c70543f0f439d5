"""Retention: hard-delete chats tombstoned longer ago than --older-than, with their runs and messages."""

from typing import Any

from django.core.management.base import CommandParser
from django.utils import timezone

from conversations_app import services
from ralphsite.core.management import RalphCommand, parse_age, retention_arguments


class Command(RalphCommand):
    help = ("Hard-delete soft-deleted chats (and their runs and messages) tombstoned before --older-than; "
            "a tombstone not yet synced is kept so the remote learns of the delete, unless --include-unsynced.")

    def add_arguments(self, parser: CommandParser) -> None:
        retention_arguments(parser, example="30d")
        parser.add_argument("--include-unsynced", action="store_true",
                            help="Also purge tombstones the remote has not been told about yet.")

    def handle(self, *args: Any, **options: Any) -> None:
        cutoff = timezone.now() - parse_age(options["older_than"])
        dry_run = options["dry_run"]
        chat_ids, per_model = services.chat_purge_deleted(
            deleted_before=cutoff, include_unsynced=options["include_unsynced"], dry_run=dry_run)
        if not chat_ids:
            self.stdout.write(f"Nothing to purge: no chat was deleted (and synced) before {cutoff.isoformat()}.")
            return
        counts = ", ".join(f"{count} {label.split('.')[-1].lower()}" for label, count in sorted(per_model.items()))
        verb = "Would purge" if dry_run else "Purged"
        self.stdout.write(f"{verb} {len(chat_ids)} chat(s) deleted before {cutoff.isoformat()}: {counts}"
                          f"{' (dry run: nothing removed)' if dry_run else ''}.")
        for chat_id in chat_ids:
            self.stdout.write(f"  {chat_id}")
