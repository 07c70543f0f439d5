"""What the app's admin pages share."""


from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.db import models
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from ralphsite.core.service_admin import LongTextInline, ServiceModelAdmin


class SessionScopedAdmin(ServiceModelAdmin):
    """Rows that belong to one session: pick the session by search, show it without a query per row."""

    autocomplete_fields = ["session"]
    list_select_related = ["session"]


class ReadOnlyInline(LongTextInline):
    """Rows shown on their parent's page with a link to their own page (where writes go through
    the services); long text shows its beginning and a link to the whole."""

    extra = 0
    can_delete = False
    show_change_link = True

    def __init__(self, parent_model: type[models.Model], admin_site: admin.AdminSite) -> None:
        super().__init__(parent_model, admin_site)
        self.readonly_fields = list(self.fields)

    def has_add_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False



# A record's History (the admin's "History" button) is what the ledger recorded about it: the ledger
# app registers here, per model, the URL of that record's events (sessions_app imports no other app).
HISTORY_URLS: dict[type[models.Model], Callable[[Any], str]] = {}


class LedgerHistoryMixin:
    """The History button shows the record's ledger events (newest first, paginated) where the
    ledger registered a URL for the model, Django's change log otherwise."""

    def history_view(self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
                     ) -> HttpResponse:
        url_for = HISTORY_URLS.get(self.model)
        obj = self.get_object(request, unquote(object_id)) if url_for else None
        if obj is None or not self.has_view_or_change_permission(request, obj):
            return super().history_view(request, object_id, extra_context)
        return HttpResponseRedirect(url_for(obj))
