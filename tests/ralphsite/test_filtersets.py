"""RalphFilterSet: per-request filters are cheap copies that still behave as django-filter's."""

import pytest
from django.db import connection
from django.http import QueryDict
from rest_framework.exceptions import ValidationError

from conversations_app.api.filters import ChatFilterSet
from conversations_app.models import Chat
from sessions_app.api.filters import SessionFilterSet
from sessions_app.models import Session

pytestmark = pytest.mark.django_db


def test_it_gives_each_filterset_its_own_filters_bound_to_it() -> None:
    first, second = ChatFilterSet(QueryDict("tag=a")), ChatFilterSet(QueryDict("tag=b"))
    assert first.filters["tag"] is not second.filters["tag"]
    assert first.filters["tag"].parent is first and second.filters["tag"].parent is second
    assert first.filters["tag"].filter.f is first.filters["tag"]  # the method proxy follows the copy
    assert "parent" not in ChatFilterSet.base_filters["tag"].__dict__  # the class's template is untouched


def test_it_runs_method_filters_of_the_right_filterset() -> None:
    tagged = Chat.objects.create(title="tagged")
    tagged.tag_rows.create(tag="a")
    Chat.objects.create(title="other")
    first, second = ChatFilterSet(QueryDict("tag=a")), ChatFilterSet(QueryDict("tag=zzz"))
    assert list(second.qs) == [] and list(first.qs) == [tagged]


def test_it_gives_each_form_its_own_field_objects() -> None:
    first, second = ChatFilterSet(QueryDict("tag=a")).form, ChatFilterSet(QueryDict("tag=b")).form
    assert first.fields["tag"] is not second.fields["tag"]
    assert first.is_valid() and second.is_valid()
    assert (first.cleaned_data["tag"], second.cleaned_data["tag"]) == ("a", "b")


def test_it_finds_a_session_by_key_through_the_partial_unique_index() -> None:
    wanted = Session.objects.create(key="wanted", user_request="x")
    Session.objects.create(key="", user_request="blank keys are not unique")
    queryset = SessionFilterSet(QueryDict("key=wanted"), queryset=Session.objects.all()).qs
    assert list(queryset) == [wanted]
    with pytest.raises(ValidationError):  # django-filter would read a blank ?key= as no filter at all
        SessionFilterSet(QueryDict("key="), queryset=Session.objects.all())
    if connection.vendor == "sqlite":
        # SQLite uses the index (unique per project where key <> '') only when the query repeats its condition.
        assert "SEARCH" in queryset.explain() and "INDEX session_key_project_unique (key=?)" in queryset.explain()
