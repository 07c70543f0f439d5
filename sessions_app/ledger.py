"""The calls sessions_app makes into the ledger, and nothing more.

sessions_app imports no other app, yet its writes need the ledger: every orchestration change is an
audit event, an attempt's or invocation's provider call is priced and booked in the ledger's token
usage, a resume answers the last checkpoint, a deleted session's events leave through the ledger's
retention path. So sessions_app names those calls here (`Ledger`) and the ledger installs their
implementation when it loads (`ledger_app.apps.LedgerAppConfig.ready`): the dependency stays one way,
and grep finds each call, this port and its one implementation (`ledger_app.sessions_ledger`).
"""

from decimal import Decimal
from typing import Any, Literal, Protocol

from django.core.exceptions import ImproperlyConfigured

UsageSource = Literal["attempt", "invocation"]


class Ledger(Protocol):
    """Each call runs inside the caller's transaction: when it fails, the caller's change rolls back."""

    def event_append(self, *, session_id: str, event_type: str, message: str, data: dict[str, Any],
                     task_key: str = "", agent: str = "") -> None:
        """Append an orchestration change to the audit trail (hash-chained). Its chain head is the
        last lock of the transaction, so call it after the transaction's other writes."""

    def usage_replace(self, *, source: UsageSource, source_id: str, item: dict[str, Any] | None) -> Decimal | None:
        """Book the provider call an attempt or invocation reports in place of the one it reported
        before (`item` None: the row goes), moving the session totals by the difference; the call's
        cost, priced when `item["cost_usd"]` is None (None when the row goes)."""

    def checkpoint_last(self, *, session_id: str) -> dict[str, Any] | None:
        """The session's last checkpoint as the API shows it, None when it has none."""

    def events_purge(self, *, session_ids: list[str], reason: str) -> None:
        """Remove the sessions' ledger events through the audited retention path, before the
        sessions are deleted in the same transaction (the foreign key refuses it otherwise)."""


_installed: Ledger | None = None


def ledger_install(implementation: Ledger) -> None:
    global _installed
    _installed = implementation


def ledger() -> Ledger:
    if _installed is None:
        raise ImproperlyConfigured("No ledger is installed for sessions_app: ledger_app must be in INSTALLED_APPS "
                                   "(its AppConfig.ready() installs it).")
    return _installed
