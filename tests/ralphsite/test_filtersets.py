"""RalphFilterSet: per-request filters are cheap copies that still behave as django-filter's."""

import pytest
from django.http import QueryDict

from conversations_app.api.filters import ChatFilterSet
from conversations_app.models import Chat

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
