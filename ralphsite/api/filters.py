"""The base FilterSet every resource's FilterSet derives from."""

from typing import Any, ClassVar

import django_filters
from django import forms

from ralphsite.fields import BIGINT_MAX, BIGINT_MIN


class IntegerFilter(django_filters.NumberFilter):
    """A NumberFilter for integer columns: `1.5` or `x` is a 400 naming the parameter, not a lookup
    that silently matches nothing (django-filter's NumberFilter accepts any decimal); a value past the
    widest column (a bigint) is a 400 too, never a driver error."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", BIGINT_MIN)
        kwargs.setdefault("max_value", BIGINT_MAX)
        super().__init__(*args, **kwargs)


class RalphFilterSet(django_filters.FilterSet):
    """django-filter's FilterSet with its form class built once per FilterSet class.

    django-filter builds a new Form class (one form field per filter) on every request; our filters'
    fields depend on the class alone (no per-request querysets), and a form instance copies its
    class's fields anyway, so one class serves every request.
    """

    _form_classes: ClassVar[dict[type, type[forms.Form]]] = {}

    def get_form_class(self) -> type[forms.Form]:
        form_class = RalphFilterSet._form_classes.get(type(self))
        if form_class is None:
            form_class = RalphFilterSet._form_classes[type(self)] = super().get_form_class()
        return form_class
