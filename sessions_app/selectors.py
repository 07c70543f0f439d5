"""Read queries for orchestration state."""

from django.db.models import QuerySet

from sessions_app.models import Session


def session_list() -> QuerySet[Session]:
    return Session.objects.all()
