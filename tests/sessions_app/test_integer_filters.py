"""Filters on integer columns take integers only: `?wave=1.5` is a 400 naming the filter, never a lookup
that silently matches nothing. Walks the router, so a filter added later is checked too."""

import pytest
from django.db import models
from rest_framework.test import APIClient

from sessions_app.api.filters import IntegerFilter
from sessions_app.api.urls import router
from tests.api_mixins import assert_error_shape
from tests.sessions_app.factories import make_batch, make_session, make_task


def target_field(model: type[models.Model], path: str) -> models.Field:
    *relations, last = path.split("__")
    for name in relations:
        model = model._meta.get_field(name).related_model
    return model._meta.get_field(last)


INTEGER_FILTERS = [
    pytest.param(prefix, name, id=f"{prefix}?{name}")
    for prefix, viewset, _basename in router.registry
    if viewset.filterset_class is not None  # a nested resource has no list
    for name, filter_ in viewset.filterset_class.base_filters.items()
    if isinstance(target_field(viewset.queryset.model, filter_.field_name), models.IntegerField)
    and not target_field(viewset.queryset.model, filter_.field_name).is_relation
]


def test_it_finds_the_integer_filters() -> None:
    assert {param.id for param in INTEGER_FILTERS} >= {
        "feedback-batches?iteration_number", "tasks?wave", "iterations?number", "plan-snapshots?iteration_number"}


@pytest.mark.parametrize("prefix, name", INTEGER_FILTERS)
def test_every_integer_filter_is_an_integer_filter(prefix: str, name: str) -> None:
    viewset = router.registry[[entry[0] for entry in router.registry].index(prefix)][1]
    assert isinstance(viewset.filterset_class.base_filters[name], IntegerFilter)


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["1.5", "x", "1e3", str(2**63)])
@pytest.mark.parametrize("prefix, name", INTEGER_FILTERS)
def test_it_answers_a_non_integer_with_400_naming_the_filter(api: APIClient, prefix: str, name: str,
                                                             value: str) -> None:
    body = assert_error_shape(api.get(f"/api/v1/{prefix}/", {name: value}), 400, "validation_error")
    assert name in body["details"], body


@pytest.mark.django_db
def test_it_still_filters_by_an_integer(api: APIClient) -> None:
    session = make_session()
    make_batch(session, number=1)
    make_batch(session, number=2, timestamp="20260210-090000")
    make_task(session, "task-1", wave=2)
    body = api.get("/api/v1/feedback-batches/", {"iteration_number": "2"}).json()
    assert [batch["batch_timestamp"] for batch in body["results"]] == ["20260210-090000"]
    assert [task["key"] for task in api.get("/api/v1/tasks/", {"wave": 2}).json()["results"]] == ["task-1"]
    assert api.get("/api/v1/tasks/", {"wave": -3}).json()["results"] == []
