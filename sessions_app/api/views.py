from typing import Any

from ralphsite.api.viewsets import RalphModelViewSet
from sessions_app import selectors, services
from sessions_app.api.filters import SessionFilterSet
from sessions_app.api.serializers import SessionSerializer
from sessions_app.models import Session


class SessionViewSet(RalphModelViewSet):
    queryset = selectors.session_list()
    serializer_class = SessionSerializer
    filterset_class = SessionFilterSet
    ordering_fields = ["created_at", "started_at", "updated_at", "status", "state", "key"]
    ordering = ["-created_at"]

    def create_instance(self, data: dict[str, Any]) -> Session:
        return services.session_create(data=data)

    def update_instance(self, instance: Session, data: dict[str, Any]) -> Session:
        return services.session_update(session=instance, data=data)

    def delete_instance(self, instance: Session) -> None:
        services.session_delete(session=instance)
