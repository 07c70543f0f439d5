from django.apps import AppConfig


class RalphSiteConfig(AppConfig):
    name = "ralphsite"
    verbose_name = "Ralph Site"
