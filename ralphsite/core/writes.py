"""The writes registry: each model's create, update and delete services, named once.

Each app lists its models' services in `<app>/writes.py`:

    WRITES = {Session: Writes(create=services.session_create, update=services.session_update,
                              delete=services.session_delete)}

The API's base viewset (`RalphModelViewSet`) and the admin's `ServiceModelAdmin` both write through
`writes_for(model)`, so a model's API and admin call the same services. A verb left out (and a model not
listed) uses the generic service of `ralphsite.core.services`. Services are keyword-only: `create(data=…)`,
`update(<row>=…, data=…)`, `delete(<row>=…)`, where `<row>` is the service's one required keyword
besides `data` (`session=`, `task=`); a caller may pass a service's optional keywords through (the
API's `if_match`).

A model whose create may name a row it already has (an attempt number the task has) lists `record` instead of
`create`: `record(data=…)` returns (row, created), so each door can tell a create (201) from an update (200).
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import Any

from django.apps import apps
from django.db import models

from ralphsite.core.services import instance_create, instance_delete, instance_update

WRITES_MODULE = "writes"  # `<app>/writes.py`, holding `WRITES`


@dataclass(frozen=True)
class Writes:
    """The services of one model's writes; None: the generic one."""

    create: Callable[..., models.Model] | None = None
    record: Callable[..., tuple[models.Model, bool]] | None = None
    update: Callable[..., models.Model] | None = None
    delete: Callable[..., None] | None = None


@cache
def _row_keyword(service: Callable[..., Any]) -> str:
    """The keyword a service takes the row by: its one required keyword-only parameter besides `data`."""
    names = [name for name, parameter in inspect.signature(service).parameters.items()
             if parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is inspect.Parameter.empty
             and name != "data"]
    if len(names) != 1:
        raise TypeError(f"{service.__qualname__} must take its row by one required keyword, not {names}")
    return names[0]


@dataclass(frozen=True)
class ModelWrites:
    """One model's writes, resolved: what the API and the admin call."""

    model: type[models.Model]
    services: Writes

    def create(self, data: dict[str, Any], **options: Any) -> models.Model:
        return self.record(data, **options)[0]

    def record(self, data: dict[str, Any], **options: Any) -> tuple[models.Model, bool]:
        """The row the create leaves and whether it made it (False: the data named a row it already had)."""
        if self.services.record is not None:
            return self.services.record(data=data, **options)
        if self.services.create is None:
            return instance_create(model=self.model, data=data, **options), True
        return self.services.create(data=data, **options), True

    def update(self, instance: models.Model, data: dict[str, Any], **options: Any) -> models.Model:
        service = self.services.update or instance_update
        return service(**{_row_keyword(service): instance}, data=data, **options)

    def delete(self, instance: models.Model, **options: Any) -> None:
        service = self.services.delete or instance_delete
        service(**{_row_keyword(service): instance}, **options)


@cache
def registry() -> dict[type[models.Model], Writes]:
    """Every app's `WRITES`, merged (a model is listed by its own app only)."""
    merged: dict[type[models.Model], Writes] = {}
    for config in apps.get_app_configs():
        try:
            module = import_module(f"{config.name}.{WRITES_MODULE}")
        except ModuleNotFoundError as error:
            if error.name != f"{config.name}.{WRITES_MODULE}":
                raise
            continue
        for model, writes in module.WRITES.items():
            if model._meta.app_config is not config:
                raise TypeError(f"{config.name}.{WRITES_MODULE} lists {model.__name__} of another app")
            merged[model] = writes
    return merged


@cache
def writes_for(model: type[models.Model]) -> ModelWrites:
    return ModelWrites(model, registry().get(model, Writes()))

