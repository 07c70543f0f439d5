"""The writes registry (`ralphsite.core.writes`): every model's API and admin write through the same services."""

import inspect

import pytest
from django.contrib import admin

from ralphsite.api_urls import router
from ralphsite.core.api.viewsets import RalphModelViewSet
from ralphsite.core.service_admin import ServiceModelAdmin
from ralphsite.core.writes import Writes, _row_keyword, registry, writes_for


def _viewsets() -> dict[type, type[RalphModelViewSet]]:
    return {viewset.queryset.model: viewset for _prefix, viewset, _basename in router.registry
            if issubclass(viewset, RalphModelViewSet)}


def _admins() -> dict[type, ServiceModelAdmin]:
    return {model: model_admin for model, model_admin in admin.site._registry.items()
            if isinstance(model_admin, ServiceModelAdmin)}


def test_it_gives_every_models_viewset_and_admin_the_services_of_the_registry() -> None:
    viewsets, admins = _viewsets(), _admins()
    for model in set(viewsets) | set(admins):
        expected = writes_for(model)
        assert expected.services == registry().get(model, Writes()), model.__name__
        if model in viewsets:
            assert viewsets[model]().writes == expected, model.__name__
        if model in admins:
            assert admins[model].writes == expected, model.__name__


def test_it_lets_no_viewset_or_admin_choose_its_own_services() -> None:
    classes = [*_viewsets().values(), *(type(model_admin) for model_admin in _admins().values())]
    for cls in classes:
        for klass in inspect.getmro(cls):
            if klass in (RalphModelViewSet, ServiceModelAdmin):
                break
            assert "writes" not in vars(klass), klass.__name__


def test_it_lists_only_models_the_api_or_the_admin_writes() -> None:
    written = set(_viewsets()) | set(_admins())
    assert set(registry()) <= written, sorted(model.__name__ for model in set(registry()) - written)


@pytest.mark.parametrize("model", sorted(registry(), key=lambda model: model.__name__), ids=lambda m: m.__name__)
def test_it_calls_each_service_by_its_keywords(model: type) -> None:
    """create(data=…), update(<row>=…, data=…), delete(<row>=…): checked without writing."""
    services = registry()[model]
    for verb in ("create", "update", "delete"):
        service = getattr(services, verb)
        if service is None:
            continue
        parameters = inspect.signature(service).parameters
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values()), service.__qualname__
        assert ("data" in parameters) is (verb != "delete"), service.__qualname__
        if verb != "create":
            assert _row_keyword(service) in parameters, service.__qualname__  # one required keyword names the row
