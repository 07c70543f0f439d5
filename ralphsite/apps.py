from django.apps import AppConfig
from django.conf import settings


class RalphSiteConfig(AppConfig):
    name = "ralphsite"
    verbose_name = "Ralph Site"

    def ready(self) -> None:
        if settings.RALPH_BACKUP_EVERY:
            from ralphsite.backup import backup_when_due
            from ralphsite.server.upkeep import UpkeepJob, upkeep_job_register

            # Checked every minute; the folder's newest backup says whether one is due (backup_when_due).
            upkeep_job_register(UpkeepJob(name="backup", run=backup_when_due, every_seconds=60, exclusive=True))
