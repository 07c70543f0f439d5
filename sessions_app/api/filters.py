import django_filters

from sessions_app.models import CommandType, OrchestratorState, Session, SessionStatus


class SessionFilterSet(django_filters.FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=SessionStatus.choices)
    state = django_filters.MultipleChoiceFilter(choices=OrchestratorState.choices)
    command_type = django_filters.MultipleChoiceFilter(choices=CommandType.choices)
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")
    started_after = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="gte")
    started_before = django_filters.IsoDateTimeFilter(field_name="started_at", lookup_expr="lt")

    class Meta:
        model = Session
        fields = ["key", "status", "state", "project_path", "command_type"]
