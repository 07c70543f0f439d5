"""`ralphsite.core.db.precompiled`: the compiled lookup against the ORM's instances; `PrecompiledLookup`
choosing between them at call time. `tests/ralphsite/test_fast_paths.py` compares the two on every routed
viewset's detail query."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Count

from ralphsite.core.db.precompiled import CompiledLookup, NotPrecompilable, PrecompiledLookup
from sessions_app.models import Iteration, Session

pytestmark = pytest.mark.django_db


def test_it_returns_the_same_instance_as_the_orm() -> None:
    session = Session.objects.create(key="s1", total_cost_usd="1.250000", config={"a": [1, 2]},
                                     summary_embedding=b"\x00\x01")
    lookup = CompiledLookup(Session.objects.all())
    found = lookup.get(session.pk)
    expected = Session.objects.get(pk=session.pk)
    for field in Session._meta.concrete_fields:
        assert getattr(found, field.attname) == getattr(expected, field.attname), field.name
    assert found._state.adding is False and found._state.db == "default"


def test_it_runs_one_query_per_call_after_compiling(django_assert_num_queries) -> None:
    session = Session.objects.create()
    lookup = CompiledLookup(Session.objects.all())
    with django_assert_num_queries(1):
        assert lookup.get(session.pk).pk == session.pk
    with django_assert_num_queries(1):
        assert lookup.get(session.pk).pk == session.pk


def test_it_answers_none_for_a_missing_or_malformed_value() -> None:
    assert CompiledLookup(Session.objects.all()).get("01ARZ3NDEKTSV4RRFFQ69G5FAV") is None
    assert CompiledLookup(get_user_model().objects.all()).get("not-a-number") is None


def test_it_populates_select_related_and_prefetches(django_assert_num_queries) -> None:
    session = Session.objects.create(key="parent")
    iteration = Iteration.objects.create(session=session, number=3)
    lookup = CompiledLookup(Iteration.objects.select_related("session"))
    with django_assert_num_queries(1):
        found = lookup.get(iteration.pk)
        assert found.session.key == "parent"
    user = get_user_model().objects.create_user(username="u")
    user.groups.add(Group.objects.create(name="g"))
    users = CompiledLookup(get_user_model().objects.prefetch_related("groups"))
    with django_assert_num_queries(2):
        assert [g.name for g in users.get(user.pk).groups.all()] == ["g"]


def test_it_keeps_annotations() -> None:
    session = Session.objects.create()
    Iteration.objects.create(session=session, number=1)
    Iteration.objects.create(session=session, number=2)
    lookup = CompiledLookup(Session.objects.annotate(iteration_count=Count("iterations")))
    assert lookup.get(session.pk).iteration_count == 2


def test_it_refuses_values_querysets() -> None:
    with pytest.raises(NotPrecompilable):
        CompiledLookup(Session.objects.values("id"))


def test_the_orm_answers_what_it_does_not_compile() -> None:
    session = Session.objects.create(key="kept")
    lookup = PrecompiledLookup(Session.objects.values("id", "key"))
    assert lookup.compiled is None
    assert lookup.get(session.pk) == {"id": session.pk, "key": "kept"}
    assert lookup.get("not-an-id") is None


def test_the_switch_is_asked_on_every_call(settings, django_assert_num_queries) -> None:
    session = Session.objects.create()
    lookup = PrecompiledLookup(Session.objects.all())
    settings.RALPH_FAST_PATHS_OFF = frozenset({"lookups"})
    with django_assert_num_queries(1) as context:
        assert lookup.get(session.pk).pk == session.pk
    assert "LIMIT 21" in context.captured_queries[0]["sql"]  # the ORM's get()
    settings.RALPH_FAST_PATHS_OFF = frozenset()
    with django_assert_num_queries(1) as context:
        assert lookup.get(session.pk).pk == session.pk
    assert context.captured_queries[0]["sql"].count("LIMIT") == 0  # the compiled query


def test_it_finds_no_row_for_an_integer_past_64_bits() -> None:
    Group.objects.create(name="g")
    assert CompiledLookup(Group.objects.all()).get(2**70) is None


def test_it_finds_a_ulid_written_in_lower_case() -> None:
    session = Session.objects.create()
    assert CompiledLookup(Session.objects.all()).get(session.pk.lower()).pk == session.pk
