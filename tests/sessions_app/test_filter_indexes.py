"""DESIGN.md: every filter the API offers is backed by an index. Walks the router, so a filter added later
without its index fails here."""

import pytest
from django.db import models

from sessions_app.api.urls import router


def leading_indexed(model: type[models.Model], field: models.Field) -> bool:
    """Whether a lookup on `field` alone can use an index: the field is a key, has db_index (foreign
    keys do), or leads an index or a unique constraint of the model."""
    if field.primary_key or field.unique or field.db_index:
        return True
    leaders = [index.fields[0].lstrip("-") for index in model._meta.indexes if index.fields]
    leaders += [c.fields[0] for c in model._meta.constraints if isinstance(c, models.UniqueConstraint) and c.fields]
    return field.name in leaders


def unindexed_steps(model: type[models.Model], path: str) -> list[str]:
    """The steps of a filter path (`task__session`) that no index serves."""
    missing = []
    for part in path.split("__"):
        field = model._meta.get_field(part)
        if not leading_indexed(model, field):
            missing.append(f"{model.__name__}.{part}")
        if field.is_relation:
            model = field.related_model
    return missing


FILTERS = [
    pytest.param(viewset.queryset.model, name, filter_.field_name, id=f"{prefix}?{name}")
    for prefix, viewset, _basename in router.registry
    for name, filter_ in viewset.filterset_class.base_filters.items()
]


@pytest.mark.parametrize("model, name, path", FILTERS)
def test_it_backs_every_filter_with_an_index(model: type[models.Model], name: str, path: str) -> None:
    assert unindexed_steps(model, path) == [], f"?{name} filters on {path} without an index"
