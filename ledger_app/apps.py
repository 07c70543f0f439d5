from django.apps import AppConfig
from django.db.backends.signals import connection_created


class LedgerAppConfig(AppConfig):
    name = "ledger_app"
    label = "ledger_app"
    verbose_name = "Ledger"

    def ready(self) -> None:
        from ledger_app import receivers
        from ledger_app.append_only import register_sqlite_purge_function

        connection_created.connect(register_sqlite_purge_function, dispatch_uid="ledger_sqlite_purge_function")
        receivers.connect()
