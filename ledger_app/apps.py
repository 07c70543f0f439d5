from django.apps import AppConfig
from django.conf import settings


class LedgerAppConfig(AppConfig):
    name = "ledger_app"
    label = "ledger_app"
    verbose_name = "Ledger"

    def ready(self) -> None:
        from ledger_app.search_sources import SEARCH_SOURCES
        from ledger_app.selectors import usage_by_source
        from ledger_app.sessions_ledger import SessionsLedger
        from ralphsite.core.search.sources import search_source_register
        from ralphsite.core.usage_book import usage_book_install
        from sessions_app.ledger import ledger_install

        search_source_register(*SEARCH_SOURCES)
        usage_book_install(usage_by_source)  # a conversation's run reads its calls' tokens and cost

        # sessions_app's writes call the ledger through its port (sessions_app imports no other app).
        ledger_install(SessionsLedger())
        if settings.RALPH_LEDGER_ANCHOR_EVERY:
            from ledger_app.anchor import ledger_anchor_when_moved
            from ralphsite.core.upkeep_jobs import UpkeepJob, upkeep_job_register

            # One process of the deployment anchors the head outside the database when it moved.
            upkeep_job_register(UpkeepJob(name="ledger_anchor", run=ledger_anchor_when_moved,
                                          every_seconds=settings.RALPH_LEDGER_ANCHOR_EVERY, exclusive=True))
