from django.apps import AppConfig
from django.conf import settings
from django.contrib.admin import apps as admin_apps


class RalphSiteConfig(AppConfig):
    name = "ralphsite"
    verbose_name = "Ralph Site"

    def ready(self) -> None:
        if settings.RALPH_BACKUP_EVERY:
            from ralphsite.core.upkeep_jobs import UpkeepJob, upkeep_job_register
            from ralphsite.moving.backup import backup_when_due

            # Checked every minute; the folder's newest backup says whether one is due (backup_when_due).
            upkeep_job_register(UpkeepJob(name="backup", run=backup_when_due, every_seconds=60, exclusive=True))


class RalphAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with our site (`admin.site` is a `RalphAdminSite` everywhere)."""

    default_site = "ralphsite.console.site.RalphAdminSite"
    default = False  # named in INSTALLED_APPS; "ralphsite" itself is RalphSiteConfig
