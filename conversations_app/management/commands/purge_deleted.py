"""Retention: hard-delete chats tombstoned longer ago than --older-than, with their runs and messages."""

import re
from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from conversations_app import services

_AGE = re.compile(r"^(?P<amount>\d+)(?P<unit>[dhm])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def parse_age(text: str) -> timedelta:
    """`30d`, `12h`, `90m` → a timedelta."""
    match = _AGE.match(text.strip())
    if not match:
        raise CommandError(f"--older-than {text!r}: use a number and a unit d/h/m, e.g. 30d.")
    return timedelta(**{_UNITS[match["unit"]]: int(match["amount"])})


class Command(BaseCommand):
    help = "Hard-delete soft-deleted chats (and their runs and messages) tombstoned before --older-than."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", required=True, help="Age of the tombstone, e.g. 30d, 12h, 90m.")

    def handle(self, *args: Any, **options: Any) -> None:
        cutoff = timezone.now() - parse_age(options["older_than"])
        chat_ids, per_model = services.chat_purge_deleted(deleted_before=cutoff)
        if not chat_ids:
            self.stdout.write(f"Nothing to purge: no chat was deleted before {cutoff.isoformat()}.")
            return
        counts = ", ".join(f"{count} {label.split('.')[-1].lower()}" for label, count in sorted(per_model.items()))
        self.stdout.write(f"Purged {len(chat_ids)} chat(s) deleted before {cutoff.isoformat()}: {counts}.")
        for chat_id in chat_ids:
            self.stdout.write(f"  {chat_id}")
