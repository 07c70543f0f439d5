from rest_framework import serializers

from ralphsite.api.fields import Base64BinaryField
from ralphsite.api.serializers import RalphModelSerializer
from sessions_app.models import Session
from sessions_app.services import SESSION_TOTAL_FIELDS


class SessionSerializer(RalphModelSerializer):
    summary_embedding = Base64BinaryField(required=False, allow_null=True, max_bytes=1024 * 1024)
    total_cost_cents = serializers.IntegerField(read_only=True)

    class Meta:
        model = Session
        fields = [
            "id", "key", "user_request", "state", "status", "current_iteration", "current_wave",
            "current_plan_content", "default_model", "max_concurrency", "started_at", "ended_at",
            "last_activity_at", "config", "command", "command_type", "exit_reason", "current_phase",
            "current_task_key", "current_agent", "current_model", "max_iterations",
            "consecutive_failures", "max_consecutive_failures", "circuit_breaker_state", "plan_key",
            "sprint_key", "execution_mode", *SESSION_TOTAL_FIELDS, "total_cost_cents",
            "bug_council_activated", "bug_council_reason", "project_path", "summary",
            "summary_embedding", "token_count", "created_at", "updated_at",
        ]
        read_only_fields = [*SESSION_TOTAL_FIELDS, "token_count", "last_activity_at", "created_at",
                            "updated_at"]
