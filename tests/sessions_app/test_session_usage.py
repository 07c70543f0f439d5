"""session_usage_add: the one UPDATE that keeps a session's token and cost totals equal to its rows."""

from decimal import Decimal

import pytest
from django.db import transaction

from ralphsite.core.errors import InvalidInput, NotFound
from ralphsite.core.fields import BIGINT_MAX
from ralphsite.core.money import usd_max
from sessions_app.models import Session
from sessions_app.services.usage import session_usage_add

pytestmark = pytest.mark.django_db


def test_it_adds_tokens_and_cost_exactly() -> None:
    session = Session.objects.create()
    for _ in range(10):
        session_usage_add(session_id=session.pk, tokens_input=120, tokens_output=30, cost_usd=Decimal("0.1"))
        session_usage_add(session_id=session.pk, tokens_input=1, cost_usd=Decimal("0.2"))
    session.refresh_from_db()
    assert (session.total_tokens_input, session.total_tokens_output, session.token_count) == (1210, 300, 1510)
    assert session.total_cost_usd == Decimal("3.000000")


def test_it_applies_a_negative_correction() -> None:
    session = Session.objects.create(total_tokens_input=100, token_count=100, total_cost_usd=Decimal("1.5"))
    session_usage_add(session_id=session.pk, tokens_input=-40, cost_usd=Decimal("-0.25"))
    session.refresh_from_db()
    assert (session.total_tokens_input, session.token_count, session.total_cost_usd) == (60, 60, Decimal("1.25"))


def test_it_touches_the_session() -> None:
    session = Session.objects.create()
    before = session.last_activity_at
    session_usage_add(session_id=session.pk, tokens_output=1)
    session.refresh_from_db()
    assert session.last_activity_at > before


@pytest.mark.parametrize(("start", "delta"), [
    ({"total_tokens_input": BIGINT_MAX - 5}, {"tokens_input": 6}),
    ({"token_count": BIGINT_MAX - 5}, {"tokens_output": 6}),
    ({"total_cost_usd": usd_max() - Decimal("0.5")}, {"cost_usd": Decimal("0.6")}),
])
def test_it_refuses_a_total_past_its_column_and_changes_nothing(start: dict, delta: dict) -> None:
    session = Session.objects.create(**start)
    stored = Session.objects.values(*start).get(pk=session.pk)  # as the database keeps it (SQLite: NUMERIC)
    with pytest.raises(InvalidInput) as refused, transaction.atomic():
        session_usage_add(session_id=session.pk, **delta)
    assert refused.value.code == "usage_overflow"
    assert Session.objects.values(*start).get(pk=session.pk) == stored


def test_it_names_a_missing_session() -> None:
    with pytest.raises(NotFound):
        session_usage_add(session_id="01ARZ3NDEKTSV4RRFFQ69G5FAV", tokens_input=1)
