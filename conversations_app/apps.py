from django.apps import AppConfig

from conversations_app.errors import MIGRATION_FAILED


class ConversationsAppConfig(AppConfig):
    name = "conversations_app"
    label = "conversations_app"
    verbose_name = "Conversations and memory"
    # Seed 002: a failed migration of this app is reported as ACODE-CONV-DATA-005 (manage.py migrate).
    migration_failure_code = MIGRATION_FAILED

    def ready(self) -> None:
        from conversations_app.search_sources import SEARCH_SOURCES
        from ralphsite.core.search.indexing import search_index_pending
        from ralphsite.core.search.sources import search_source_register
        from ralphsite.core.upkeep_jobs import UpkeepJob, upkeep_job_register

        search_source_register(*SEARCH_SOURCES)
        # New messages, observations, events and reports are queued for the search index; the server
        # indexes the queue between requests (a search indexes what is still queued before it queries).
        upkeep_job_register(UpkeepJob(name="search_index_pending", run=search_index_pending))
