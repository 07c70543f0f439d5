"""The admin's write path: a ModelAdmin whose saves and deletes go through the services."""

from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from ralphsite.services import instance_create, instance_delete, instance_update


class ServiceModelAdmin(admin.ModelAdmin):
    """Admin writes go through the services, as API writes do. Plain records use the generic ones;
    models with rules override service_create / service_update / service_delete."""

    def service_create(self, data: dict[str, Any]) -> models.Model:
        return instance_create(model=self.model, data=data)

    def service_update(self, instance: models.Model, data: dict[str, Any]) -> models.Model:
        return instance_update(instance=instance, data=data)

    def service_delete(self, instance: models.Model) -> None:
        instance_delete(instance=instance)

    def _model_data(self, form: forms.ModelForm, names: Iterable[str]) -> dict[str, Any]:
        concrete = {f.name for f in self.model._meta.concrete_fields}
        return {name: form.cleaned_data[name] for name in names if name in concrete}

    def save_model(self, request: HttpRequest, obj: models.Model, form: forms.ModelForm, change: bool) -> None:
        if change:
            self.service_update(self.model._default_manager.get(pk=obj.pk), self._model_data(form, form.changed_data))
        else:
            obj.pk = self.service_create(self._model_data(form, form.cleaned_data)).pk

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        self.service_delete(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for obj in queryset:
            self.service_delete(obj)
