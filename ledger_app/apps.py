from django.apps import AppConfig
from django.db.backends.signals import connection_created


class LedgerAppConfig(AppConfig):
    name = "ledger_app"
    label = "ledger_app"
    verbose_name = "Ledger"

    def ready(self) -> None:
        from ledger_app.append_only import register_sqlite_purge_function
        from ledger_app.sessions_ledger import SessionsLedger
        from sessions_app.ledger import ledger_install

        connection_created.connect(register_sqlite_purge_function, dispatch_uid="ledger_sqlite_purge_function")
        # sessions_app's writes call the ledger through its port (sessions_app imports no other app).
        ledger_install(SessionsLedger())
