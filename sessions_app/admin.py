from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from sessions_app import services
from sessions_app.models import Session
from sessions_app.services import SESSION_TOTAL_FIELDS


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["id", "key", "status", "state", "command_type", "project_path", "current_iteration",
                    "total_cost_usd", "started_at", "ended_at"]
    list_filter = ["status", "state", "command_type", "execution_mode", "circuit_breaker_state"]
    search_fields = ["id", "key", "user_request", "command", "project_path", "summary"]
    date_hierarchy = "started_at"
    readonly_fields = ["id", *SESSION_TOTAL_FIELDS, "token_count", "last_activity_at", "created_at",
                       "updated_at"]
    exclude = ["summary_embedding"]
    fieldsets = [
        (None, {"fields": ["id", "key", "user_request", "status", "state", "project_path"]}),
        ("Progress", {"fields": ["current_iteration", "current_wave", "current_phase", "current_task_key",
                                 "current_agent", "current_model", "max_iterations",
                                 "consecutive_failures", "max_consecutive_failures",
                                 "circuit_breaker_state", "execution_mode"]}),
        ("Plan", {"fields": ["current_plan_content", "plan_key", "sprint_key", "default_model",
                             "max_concurrency", "config"]}),
        ("Command", {"fields": ["command", "command_type", "exit_reason", "bug_council_activated",
                                "bug_council_reason", "summary"]}),
        ("Usage", {"fields": [*SESSION_TOTAL_FIELDS, "token_count"]}),
        ("Time", {"fields": ["started_at", "ended_at", "last_activity_at", "created_at", "updated_at"]}),
    ]

    def save_model(self, request: HttpRequest, obj: Session, form: Any, change: bool) -> None:
        data = {name: form.cleaned_data[name] for name in form.changed_data}
        if change:
            services.session_update(session=Session.objects.get(pk=obj.pk), data=data)
        else:
            created = services.session_create(data=form.cleaned_data)
            obj.pk = created.pk

    def delete_model(self, request: HttpRequest, obj: Session) -> None:
        services.session_delete(session=obj)
