"""Rows of the DevTeam tables for the sessions_app tests, made through the ORM."""

from sessions_app.models import Interview, Session


def devteam_session(key: str = "devteam") -> Session:
    session, _ = Session.objects.get_or_create(key=key, defaults={"command": "/devteam:implement"})
    return session


def devteam_interview(key: str = "devteam") -> Interview:
    return Interview.objects.create(session=devteam_session(key), interview_type="feature")
