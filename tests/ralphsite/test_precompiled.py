from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Count, Value, signals

from ledger_app.models import ErrorLog
from ralphsite.core.db.precompiled import NotPrecompilable, PrecompiledLookup, instances_insert
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


# -- PrecompiledInsert -------------------------------------------------------------------------

def _stored(model: type, pk: str) -> dict:
    return model.objects.filter(pk=pk).values().get()


def test_it_inserts_the_row_save_would_insert() -> None:
    values = {"total_cost_usd": Decimal("1.250000"), "config": {"a": [1, None, "x"]},
              "summary_embedding": b"\x00\x01", "user_request": "a request",
              "started_at": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
              "last_activity_at": datetime(2026, 1, 2, 3, 4, 6, tzinfo=UTC)}
    by_save, by_insert = Session(key="by-save", **values), Session(key="by-insert", **values)
    by_save.save(force_insert=True)
    instances_insert([by_insert])
    saved, inserted = _stored(Session, by_save.pk), _stored(Session, by_insert.pk)
    # Timestamps are each row's own (auto_now_add stamped the inserted instance, as save() does).
    assert inserted.pop("id") == by_insert.pk and inserted["created_at"] == by_insert.created_at
    for name in ("id", "key", "created_at", "updated_at"):
        saved.pop(name)
        inserted.pop(name, None)
    assert inserted == saved
    assert by_insert._state.adding is False and by_insert._state.db == "default"


def test_it_inserts_many_rows_in_one_statement(django_assert_num_queries) -> None:
    session = Session.objects.create()
    iterations = [Iteration(session_id=session.pk.lower(), number=n) for n in range(1, 4)]
    with django_assert_num_queries(1):
        instances_insert(iterations)
    assert list(Iteration.objects.filter(session=session).values_list("number", flat=True).order_by("number")) \
        == [1, 2, 3]  # the lower-case foreign key was stored canonical, or the filter would find nothing


def test_it_saves_through_the_orm_when_someone_listens_for_saves() -> None:
    heard: list[str] = []

    def receiver(sender: type, instance: Session, **kwargs: object) -> None:
        heard.append(instance.key)

    signals.post_save.connect(receiver, sender=Session)
    try:
        instances_insert([Session(key="heard")])
    finally:
        signals.post_save.disconnect(receiver, sender=Session)
    assert heard == ["heard"] and Session.objects.filter(key="heard").exists()


def test_it_saves_through_the_orm_when_a_value_is_an_expression() -> None:
    session = Session(key="expression", total_tokens_input=Value(40) + Value(2))
    instances_insert([session])
    assert Session.objects.get(key="expression").total_tokens_input == 42


def test_it_reads_back_the_key_the_database_assigns(django_assert_num_queries) -> None:
    session = Session.objects.create()
    error = ErrorLog(session=session, error_type="build", error_message="x", retry_count=2)
    with django_assert_num_queries(1):
        instances_insert([error])
    assert isinstance(error.pk, int) and error._state.adding is False
    stored = ErrorLog.objects.get(pk=error.pk)
    assert (stored.session_id, stored.error_message, stored.retry_count) == (session.pk, "x", 2)


def test_it_inserts_several_rows_with_database_keys_in_one_statement(django_assert_num_queries) -> None:
    errors = [ErrorLog(error_type="build", error_message=str(n)) for n in range(3)]
    with django_assert_num_queries(1):  # bulk_create's multi-row INSERT … RETURNING
        instances_insert(errors)
    assert [ErrorLog.objects.get(pk=e.pk).error_message for e in errors] == ["0", "1", "2"]


def test_it_inserts_rows_whose_keys_the_caller_assigned_in_one_executemany(django_assert_num_queries) -> None:
    errors = [ErrorLog(id=900 + n, error_type="build", error_message=str(n)) for n in range(3)]
    with django_assert_num_queries(1):
        instances_insert(errors)
    assert list(ErrorLog.objects.filter(pk__gte=900).order_by("pk").values_list("pk", "error_message")) == [
        (900, "0"), (901, "1"), (902, "2")]
    assert all(error._state.adding is False for error in errors)
