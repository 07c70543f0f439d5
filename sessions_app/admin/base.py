"""What the app's admin pages share."""


from django.contrib import admin
from django.db import models
from django.http import HttpRequest

from ralphsite.service_admin import ServiceModelAdmin


class SessionScopedAdmin(ServiceModelAdmin):
    """Rows that belong to one session: pick the session by search, show it without a query per row."""

    autocomplete_fields = ["session"]
    list_select_related = ["session"]


class ReadOnlyInline(admin.TabularInline):
    """Rows shown on their parent's page with a link to their own page (where writes go through
    the services)."""

    extra = 0
    can_delete = False
    show_change_link = True

    def get_readonly_fields(self, request: HttpRequest, obj: models.Model | None = None) -> list[str]:
        return list(self.fields)

    def has_add_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

