from django.db import models

from ledger_app.models.events import CHAIN_HASH_LENGTH


class LedgerChainHead(models.Model):
    """Ours: the newest link of the ledger's hash chain, one row (id 1), moved forward in the
    transaction of every append. Appenders serialize on it (PostgreSQL locks the row FOR UPDATE;
    SQLite's write lock already serializes them). Database triggers let it only move forward onto
    the event appended right after it (`ledger_app.append_only`), so removing the newest events
    behind the chain's back leaves a head that names a missing event: `ledger_verify` reports it."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    last_id = models.BigIntegerField(help_text="The newest event's id (0 before the first event).")
    last_hash = models.CharField(max_length=CHAIN_HASH_LENGTH, help_text="The newest event's hash.")

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(id=1), name="ledgerchainhead_single_row")]

    def __str__(self) -> str:
        return f"chain head #{self.last_id} {self.last_hash[:12]}"


class RetentionRange(models.Model):
    """Ours: one run of consecutive events a purge removed from the chain, as its retention record
    (`retention_event`, type `ledger_purged`) states it. The chain stays verifiable across the hole:
    the event after the run links to `last_hash`, the event before it has hash `prev_hash`. The
    retention record's `data.ranges_sha256` commits to its ranges (`ledger_app.chain.ranges_digest`)."""

    # Indexed by (retention_event, last_id): the append-only trigger finds the range covering an event.
    retention_event = models.ForeignKey("ledger_app.LedgerEvent", on_delete=models.PROTECT, db_index=False,
                                        related_name="retention_ranges")
    first_id = models.BigIntegerField()
    last_id = models.BigIntegerField()
    events = models.PositiveIntegerField(help_text="Events removed in this run.")
    prev_hash = models.CharField(max_length=CHAIN_HASH_LENGTH, help_text="prev_hash of the run's first event.")
    last_hash = models.CharField(max_length=CHAIN_HASH_LENGTH, help_text="hash of the run's last event.")

    class Meta:
        ordering = ["first_id"]
        indexes = [models.Index(fields=["retention_event", "last_id"], name="retentionrange_event_last")]

    def __str__(self) -> str:
        return f"removed #{self.first_id} to #{self.last_id} ({self.events})"
