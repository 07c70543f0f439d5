from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    label = "sessions_app"
    verbose_name = "Orchestration"

    def ready(self) -> None:
        from ralphsite.core.search.sources import search_source_register
        from ralphsite.core.upkeep_jobs import UpkeepJob, upkeep_job_register
        from sessions_app.search_sources import SEARCH_SOURCES
        from sessions_app.services.tasks import task_leases_expire

        search_source_register(*SEARCH_SOURCES)  # task reports, searched beside the other apps' rows

        # Expired leases go back to the ready pool without a caller; one host sweeps at a time.
        upkeep_job_register(UpkeepJob(name="task_leases_expire", run=task_leases_expire, every_seconds=5.0,
                                      exclusive=True))
