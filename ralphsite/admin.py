from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from rest_framework.authtoken.models import TokenProxy

from ralphsite.core.models import ApiToken
from ralphsite.core.service_admin import ServiceModelAdmin, column_ago
from ralphsite.tokens.services import api_token_create

# DRF's authtoken stays installed only for the migration that carried its keys over to our API tokens
# (ralphsite/migrations/0002): its table is empty and nothing reads it, so its admin page goes.
admin.site.unregister(TokenProxy)


@admin.register(ApiToken)
class ApiTokenAdmin(ServiceModelAdmin):
    """Tokens are minted here as by `manage.py token_create` and `POST /api/v1/tokens/` (one service);
    the secret is shown on the page the add form answers with, once. A token's reach never changes
    after minting (revoke it and mint another); only its label may be edited. Deleting revokes."""

    list_display = ["prefix", "label", "user", "scope", "session", "project_path", "permission", "agent",
                    column_ago("expires_at", description="expires"), column_ago("last_used_at", description="used"),
                    column_ago("created_at", description="created")]
    list_filter = ["scope", "permission"]
    list_select_related = ["user", "session"]
    search_fields = ["prefix", "label", "agent", "user__username", "project_path"]
    autocomplete_fields = ["user", "session"]
    fields = ["user", "label", "scope", "session", "project_path", "permission", "agent", "expires_at"]
    minted_fields = ["user", "scope", "session", "project_path", "permission", "agent", "expires_at", "prefix",
                     "created_at", "last_used_at"]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        """A staff member other than a superuser mints tokens for themselves only: a token acts with its
        owner's permissions, so minting for another user would lend the minter theirs."""
        if db_field.name == "user" and not request.user.is_superuser:
            kwargs["queryset"] = get_user_model().objects.filter(pk=request.user.pk)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        return self.fields if obj is None else ["label", *self.minted_fields]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        return [] if obj is None else self.minted_fields

    def save_model(self, request: HttpRequest, obj: ApiToken, form: forms.ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        data = form.cleaned_data
        minted = api_token_create(user=data["user"], scope=data["scope"], permission=data["permission"],
                                  session_id=data["session"].pk if data["session"] else None,
                                  project_path=data["project_path"], agent=data["agent"],
                                  expires_at=data["expires_at"], label=data["label"])
        obj.pk, obj.minted_secret = minted.token.pk, minted.secret

    def response_add(self, request: HttpRequest, obj: ApiToken, post_url_continue: str | None = None) -> HttpResponse:
        """The secret, on this page only: not in a message (the message cookie would carry it) and not
        after a redirect."""
        response = TemplateResponse(request, "admin/ralphsite/token_minted.html", {
            **self.admin_site.each_context(request), "title": "API token minted", "opts": self.opts,
            "token": ApiToken.objects.select_related("user", "session").get(pk=obj.pk), "secret": obj.minted_secret})
        response["Cache-Control"] = "no-store"
        return response
