"""DESIGN.md: every filter the API offers is backed by an index, and no index is kept twice. Walks the
routers and the models, so a filter or a foreign key added later without its index fails here."""

import pytest
from django.apps import apps
from django.db import models
from django.db.models import Q
from django_filters.filters import Filter

from conversations_app.api.urls import router as conversations_router
from ledger_app.api.urls import router as ledger_router
from ralphsite.core.api.filters import NonBlankKeyFilter, SeedIdFilter
from ralphsite.core.models import SeedRow
from sessions_app.api.urls import router as sessions_router

PROJECT_APPS = ("sessions_app", "conversations_app", "ledger_app")


def index_leaders(model: type[models.Model], *, condition: Q | None = None) -> set[str]:
    """The fields that lead an index or a unique constraint of the model on all of its rows, or on
    the rows of `condition` (a partial index serves only the queries that repeat its condition)."""
    leaders = {index.fields[0].lstrip("-") for index in model._meta.indexes
               if index.fields and index.condition in (None, condition)}
    leaders |= {c.fields[0] for c in model._meta.constraints
                if isinstance(c, models.UniqueConstraint) and c.fields and c.condition in (None, condition)}
    return leaders


def leading_indexed(model: type[models.Model], field: models.Field, *, condition: Q | None = None) -> bool:
    """Whether a lookup on `field` alone (plus `condition`) can use an index: the field is a key, has
    its own index, or leads an index or a unique constraint of the model."""
    if field.primary_key or field.unique or field.db_index:
        return True
    return field.name in index_leaders(model, condition=condition)


def unindexed_steps(model: type[models.Model], filter_: Filter) -> list[str]:
    """The steps of a filter's path (`task__session`) that no index serves."""
    missing = []
    parts = filter_.field_name.split("__")
    for position, part in enumerate(parts):
        field = model._meta.get_field(part)
        if field.auto_created and not field.concrete:  # a reverse relation: the join uses the other side's key
            if not leading_indexed(field.related_model, field.field):
                missing.append(f"{field.related_model.__name__}.{field.field.name}")
            model = field.related_model
            continue
        last = position == len(parts) - 1
        condition = ~Q(**{part: ""}) if last and isinstance(filter_, NonBlankKeyFilter) else None
        if not leading_indexed(model, field, condition=condition):
            missing.append(f"{model.__name__}.{part}")
        if field.is_relation:
            model = field.related_model
    return missing


def is_flag(model: type[models.Model], filter_: Filter) -> bool:
    """A method filter named for no field (`?include_deleted=`) switches a behaviour; it looks nothing up."""
    return filter_.method is not None and filter_.field_name.split("__")[0] not in {
        field.name for field in model._meta.get_fields()}


FILTERS = [
    pytest.param(viewset.queryset.model, name, filter_, id=f"{prefix}?{name}")
    for router in (sessions_router, conversations_router, ledger_router)
    for prefix, viewset, _basename in router.registry
    if getattr(viewset, "filterset_class", None) is not None
    for name, filter_ in viewset.filterset_class.base_filters.items()
    if not is_flag(viewset.queryset.model, filter_)
]

FOREIGN_KEYS = [
    pytest.param(model, field, id=f"{model.__name__}.{field.name}")
    for app in PROJECT_APPS
    for model in apps.get_app_config(app).get_models()
    for field in model._meta.concrete_fields
    if field.many_to_one
]


@pytest.mark.parametrize("model, name, filter_", FILTERS)
def test_it_backs_every_filter_with_an_index(model: type[models.Model], name: str, filter_: Filter) -> None:
    assert unindexed_steps(model, filter_) == [], f"?{name} filters on {filter_.field_name} without an index"


@pytest.mark.parametrize("model, field", FOREIGN_KEYS)
def test_it_indexes_every_foreign_key_once(model: type[models.Model], field: models.ForeignKey) -> None:
    # A composite index led by the key serves every lookup the key's own index would (joins, the
    # cascade's DELETE ... WHERE fk = ?); a second one only slows every insert (two on PostgreSQL,
    # with the `_like` twin of a text key).
    covered = field.name in index_leaders(model)
    assert leading_indexed(model, field), f"{model.__name__}.{field.name} has no index"
    assert not (covered and field.db_index), (
        f"{model.__name__}.{field.name}: an index or unique constraint leads with it; set db_index=False")



def test_it_backs_the_seed_id_filter_with_an_index() -> None:
    """`?source_id=` (every list of ULID ids) reads SeedRow by model and the seed's id: an index leads with both."""
    assert any(isinstance(param.values[2], SeedIdFilter) for param in FILTERS)
    assert any(index.fields[:2] == ["object_model", "source_key"] for index in SeedRow._meta.indexes)
