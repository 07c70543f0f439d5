from typing import Any

from django.core.management.base import CommandParser

from ledger_app.anchor import AnchorCheck, anchor_dir, anchors_check, anchors_read
from ledger_app.chain_verify import ChainReport, chain_verify
from ralphsite.core.management import RalphCommand
from ralphsite.core.progress import Progress


class Command(RalphCommand):
    help = ("Walk the ledger's hash chain and check it against the signed anchors in RALPH_LEDGER_ANCHOR_DIR: "
            "exit 0 when every event links to the one before it (or a retention record accounts for the hole) "
            "and matches its hash, and every anchor agrees with the ledger; 1 naming the first problem.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--anchor", metavar="ID:HASH", default="",
                            help="Also check that event ID still has this hash (a head recorded elsewhere, "
                                 "from GET /api/v1/events/head/).")
        parser.add_argument("--no-anchors", action="store_true",
                            help="Do not check the anchor folder (a restored backup is older than its anchors).")

    def handle(self, *args: Any, **options: Any) -> None:
        bar: Progress | None = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            bar = bar or Progress("ledger_verify", total, stream=self.stderr._out, unit="events")
            bar.update(done)

        report = chain_verify(progress=progress)
        for retention in report.retentions:
            self.stdout.write(f"retention record #{retention.event_id} ({retention.timestamp}): removed "
                              f"{retention.events_removed} events between #{retention.first_id} and "
                              f"#{retention.last_id} ({retention.ranges} runs) of {retention.sessions} sessions: "
                              f"{retention.reason}")
        anchor_problem = _anchor_problem(options["anchor"]) if report.intact and options["anchor"] else ""
        if not report.intact or anchor_problem:
            where = f"at event #{report.broken_at}" if report.broken_at else "at its head"
            self.stderr.write(f"ledger chain BROKEN {where}: {report.problem or anchor_problem}")
            raise SystemExit(1)
        check: AnchorCheck | None = None
        if not options["no_anchors"]:
            anchors, bad = anchors_read()
            check = anchors_check(anchors, head_id=report.head_id)
            for note in check.notes:
                self.stdout.write(note)
            if bad or check.problems:
                for problem in bad + check.problems:
                    self.stderr.write(f"ledger chain does not match its anchors: {problem}")
                raise SystemExit(1)
        self.stdout.write(_intact_line(report))
        if check is not None:
            self.stdout.write(_anchors_line(check))


def _intact_line(report: ChainReport) -> str:
    if not report.events:
        return "ledger chain intact: no events yet."
    return (f"ledger chain intact: {report.events} events, #{report.first_id} to #{report.head_id}, "
            f"{len(report.retentions)} retention records; head #{report.head_id} {report.head_hash}")


def _anchors_line(check: AnchorCheck) -> str:
    if check.newest is None:
        return (f"no anchors in {anchor_dir()}: only the chain's own links were checked "
                "(manage.py ledger_anchor writes one; the server does every RALPH_LEDGER_ANCHOR_EVERY)")
    return (f"agrees with {check.anchors} anchors in {anchor_dir()}; the newest, written at "
            f"{check.newest.anchored_at}, names event #{check.newest.event_id}")


def _anchor_problem(anchor: str) -> str:
    from ledger_app.models import LedgerEvent, RetentionRange

    event_id, _, expected = anchor.partition(":")
    if not event_id.isdigit() or len(expected) != 64:
        return f"--anchor must be ID:HASH (an event id and its 64-digit hash), not {anchor!r}"
    stored = LedgerEvent.objects.filter(pk=int(event_id)).values_list("hash", flat=True).first()
    if stored is None:
        purge = RetentionRange.objects.filter(first_id__lte=event_id, last_id__gte=event_id).first()
        if purge is not None:
            return (f"the anchored event #{event_id} was removed by the retention record "
                    f"#{purge.retention_event_id}: anchor a newer event")
        return f"the anchored event #{event_id} is not in the ledger"
    if stored != expected.lower():
        return f"the anchored event #{event_id} has hash {stored}, not {expected.lower()}"
    return ""
