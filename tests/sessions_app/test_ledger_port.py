"""sessions_app calls the ledger through its port only; with no ledger installed it says what is missing."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from sessions_app import ledger as port
from sessions_app.services.sessions import session_update
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db


def test_it_names_the_missing_ledger_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    session = make_session(key="no-ledger")
    monkeypatch.setattr(port, "_installed", None)
    with pytest.raises(ImproperlyConfigured, match="ledger_app must be in INSTALLED_APPS"):
        session_update(session=session, data={"state": "planning"})
    session.refresh_from_db()
    assert session.state == "initializing"
