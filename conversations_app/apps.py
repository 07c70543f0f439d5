from django.apps import AppConfig


class ConversationsAppConfig(AppConfig):
    name = "conversations_app"
    label = "conversations_app"
    verbose_name = "Conversations and memory"

    def ready(self) -> None:
        from conversations_app.search.indexing import search_index_pending
        from ralphsite.server.upkeep import UpkeepJob, upkeep_job_register

        # New messages and observations are queued for the search index; the server indexes the
        # queue between requests (a search indexes what is still queued before it queries).
        upkeep_job_register(UpkeepJob(name="search_index_pending", run=search_index_pending))
