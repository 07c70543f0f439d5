"""Long values on the admin's pages (issue #26 §3): a record's page, its list and its inline rows carry the
beginning of a long text or JSON value and a link to the whole; the whole is served read-only, as plain text,
to a person who may view the record, and only for a field the record's page shows.
tests/browser/test_console_text.py loads such pages in the browser."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from ralphsite.core.service_admin import TEXT_SHOWN_CHARS
from sessions_app.models import Session, SessionStateEntry, Signal
from tests.sessions_app.factories import make_session

pytestmark = pytest.mark.django_db
LONG = "steer " * (TEXT_SHOWN_CHARS // 2)


@pytest.fixture
def session() -> Session:
    return make_session(key="long-text")


def test_a_long_message_shows_its_beginning_and_its_link_serves_the_whole(admin_client: Client,
                                                                         session: Session) -> None:
    signal = Signal.objects.create(session=session, type="steer", message=LONG)
    html = admin_client.get(f"/admin/sessions_app/signal/{signal.pk}/change/").content.decode()
    whole = f"/admin/sessions_app/signal/{signal.pk}/text/message/"
    assert f'href="{whole}">read all {len(LONG):,} characters</a>' in html
    assert LONG not in html and 'name="message"' not in html  # too long to edit in place: shown read-only
    response = admin_client.get(whole)
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response.content.decode() == LONG


def test_a_short_message_stays_editable_in_place(admin_client: Client, session: Session) -> None:
    signal = Signal.objects.create(session=session, type="steer", message="slow down")
    html = admin_client.get(f"/admin/sessions_app/signal/{signal.pk}/change/").content.decode()
    assert 'name="message"' in html and "rl-whole-text" not in html


def test_the_session_page_inlines_and_lists_show_a_long_value_s_beginning(admin_client: Client,
                                                                          session: Session) -> None:
    Signal.objects.create(session=session, type="steer", message=LONG)
    SessionStateEntry.objects.create(session=session, key="phase", value={"log": LONG})
    for page in ("/admin/sessions_app/signal/", "/admin/sessions_app/sessionstateentry/"):
        html = admin_client.get(page).content.decode()
        assert "steer steer" in html and LONG not in html, page
    entry = SessionStateEntry.objects.get(session=session)
    whole = admin_client.get(f"/admin/sessions_app/sessionstateentry/{entry.pk}/text/value/")
    assert json.loads(whole.content) == {"log": LONG}


def test_the_whole_text_is_only_for_a_text_field_the_page_shows_to_someone_who_may_view_it(
        admin_client: Client, client: Client, session: Session) -> None:
    signal = Signal.objects.create(session=session, type="steer", message=LONG)
    base = f"/admin/sessions_app/signal/{signal.pk}/text"
    assert admin_client.get(f"{base}/type/").status_code == 404  # not a text field
    assert admin_client.get(f"{base}/nothing/").status_code == 404
    assert admin_client.get("/admin/sessions_app/signal/01M8GJ0000000000000000000/text/message/").status_code == 404
    assert client.get(f"{base}/message/").status_code == 302  # to the login page
    get_user_model().objects.create_user("visitor", password="pw-visitor-1", is_staff=True)
    client.login(username="visitor", password="pw-visitor-1")
    assert client.get(f"{base}/message/").status_code == 403  # staff without the view permission
