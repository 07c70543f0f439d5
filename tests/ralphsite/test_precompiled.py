import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Count

from ralphsite.precompiled import NotPrecompilable, PrecompiledLookup
from sessions_app.models import Iteration, Session

pytestmark = pytest.mark.django_db


def test_it_returns_the_same_instance_as_the_orm() -> None:
    session = Session.objects.create(key="s1", total_cost_usd="1.250000", config={"a": [1, 2]},
                                     summary_embedding=b"\x00\x01")
    lookup = PrecompiledLookup(Session.objects.all())
    found = lookup.get(session.pk)
    expected = Session.objects.get(pk=session.pk)
    for field in Session._meta.concrete_fields:
        assert getattr(found, field.attname) == getattr(expected, field.attname), field.name
    assert found._state.adding is False and found._state.db == "default"


def test_it_runs_one_query_per_call_after_compiling(django_assert_num_queries) -> None:
    session = Session.objects.create()
    lookup = PrecompiledLookup(Session.objects.all())
    with django_assert_num_queries(1):
        assert lookup.get(session.pk).pk == session.pk
    with django_assert_num_queries(1):
        assert lookup.get(session.pk).pk == session.pk


def test_it_answers_none_for_a_missing_or_malformed_value() -> None:
    assert PrecompiledLookup(Session.objects.all()).get("01ARZ3NDEKTSV4RRFFQ69G5FAV") is None
    assert PrecompiledLookup(get_user_model().objects.all()).get("not-a-number") is None


def test_it_populates_select_related_and_prefetches(django_assert_num_queries) -> None:
    session = Session.objects.create(key="parent")
    iteration = Iteration.objects.create(session=session, number=3)
    lookup = PrecompiledLookup(Iteration.objects.select_related("session"))
    with django_assert_num_queries(1):
        found = lookup.get(iteration.pk)
        assert found.session.key == "parent"
    user = get_user_model().objects.create_user(username="u")
    user.groups.add(Group.objects.create(name="g"))
    users = PrecompiledLookup(get_user_model().objects.prefetch_related("groups"))
    with django_assert_num_queries(2):
        assert [g.name for g in users.get(user.pk).groups.all()] == ["g"]


def test_it_keeps_annotations() -> None:
    session = Session.objects.create()
    Iteration.objects.create(session=session, number=1)
    Iteration.objects.create(session=session, number=2)
    lookup = PrecompiledLookup(Session.objects.annotate(iteration_count=Count("iterations")))
    assert lookup.get(session.pk).iteration_count == 2


def test_it_refuses_values_querysets() -> None:
    with pytest.raises(NotPrecompilable):
        PrecompiledLookup(Session.objects.values("id"))


def test_it_finds_no_row_for_an_integer_past_64_bits() -> None:
    Group.objects.create(name="g")
    assert PrecompiledLookup(Group.objects.all()).get(2**70) is None


def test_it_finds_a_ulid_written_in_lower_case() -> None:
    session = Session.objects.create()
    assert PrecompiledLookup(Session.objects.all()).get(session.pk.lower()).pk == session.pk
