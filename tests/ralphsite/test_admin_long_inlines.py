"""Long values in editable inlines (issue #26 §3): a row whose text holds a megabyte shows its beginning and a link
to the whole, read-only in that row, as record pages do; the parent's page stays small, and saving it with the row
unchanged keeps the long value whole while the row's other fields and the other rows still save."""

from typing import Any

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from ralphsite.core.service_admin import LongTextInline
from sessions_app.models import FeedbackItem, InterviewQuestion
from tests.sessions_app.devteam_factories import devteam_interview
from tests.sessions_app.factories import make_batch, make_session

pytestmark = pytest.mark.django_db
MEGA = "word " * 200_000  # 1,000,000 characters
SMALL_PAGE = 200_000  # bytes: the page with the whole value in a textarea is over a megabyte


def test_every_inline_of_the_admin_shows_long_values_shortened() -> None:
    inlines = {inline for model_admin in admin.site._registry.values() for inline in model_admin.inlines}
    assert inlines and not [inline for inline in inlines if not issubclass(inline, LongTextInline)]


def _question(interview: Any, key: str, sequence: int, response: str) -> InterviewQuestion:
    return InterviewQuestion.objects.create(interview=interview, question_key=key, question_text="?",
                                            sequence=sequence, response=response)


def test_a_megabyte_answer_in_an_inline_row_is_shown_shortened_and_kept_whole_on_save(admin_client: Client) -> None:
    interview = devteam_interview()
    long, short = _question(interview, "long", 1, MEGA), _question(interview, "short", 2, "yes")
    url = reverse("admin:sessions_app_interview_change", args=[interview.pk])
    page = admin_client.get(url)
    html = page.content.decode()
    assert len(page.content) < SMALL_PAGE and MEGA not in html
    whole = reverse("admin:sessions_app_interviewquestion_text", args=[long.pk, "response"])
    assert f'href="{whole}">read all {len(MEGA):,} characters</a>' in html
    assert 'name="questions-0-response"' not in html and 'name="questions-1-response"' in html
    assert admin_client.get(whole).content.decode() == MEGA
    # The browser posts what the page has: no input for the long answer. The row's other fields and the
    # other row save; the long answer stays whole.
    rows = [{"id": long.pk, "interview": interview.pk, "question_key": "long-renamed", "question_text": "?",
             "question_type": "text"},
            {"id": short.pk, "interview": interview.pk, "question_key": "short", "question_text": "?",
             "question_type": "text", "response": "no"}]
    data = {"questions-TOTAL_FORMS": 2, "questions-INITIAL_FORMS": 2, "questions-MIN_NUM_FORMS": 0,
            "questions-MAX_NUM_FORMS": 1000,
            **{f"questions-{index}-{name}": value for index, row in enumerate(rows) for name, value in row.items()}}
    saved = admin_client.post(url, {"session": interview.session_id, "interview_type": "feature",
                                    "status": "in_progress", "started_at_0": "2026-01-02", "started_at_1": "10:00:00",
                                    **data})
    assert saved.status_code == 302, saved.content.decode()[:3000]
    long.refresh_from_db()
    short.refresh_from_db()
    assert (long.question_key, long.response, short.response) == ("long-renamed", MEGA, "no")
    # A posted value for the long field is ignored (the field is read-only there): it is edited on its own page.
    data["questions-0-response"] = "overwritten"
    admin_client.post(url, {"session": interview.session_id, "interview_type": "feature", "status": "in_progress",
                            "started_at_0": "2026-01-02", "started_at_1": "10:00:00", **data})
    long.refresh_from_db()
    assert long.response == MEGA


def test_a_feedback_batch_page_with_a_megabyte_item_is_small(admin_client: Client) -> None:
    batch = make_batch(make_session(key="feedback"))
    item = FeedbackItem.objects.create(batch=batch, issue_key="BUG-1", severity="high", description=MEGA)
    page = admin_client.get(reverse("admin:sessions_app_feedbackbatch_change", args=[batch.pk]))
    assert page.status_code == 200 and len(page.content) < SMALL_PAGE
    whole = reverse("admin:sessions_app_feedbackitem_text", args=[item.pk, "description"])
    assert whole in page.content.decode()
    assert admin_client.get(whole).content.decode() == MEGA
