"""The base FilterSet every resource's FilterSet derives from."""

import copy
from collections import OrderedDict
from typing import Any, ClassVar

import django_filters
from django import forms
from django.db import models
from django.db.models import QuerySet
from django.http import QueryDict
from django_filters import fields as filter_fields
from django_filters.constants import EMPTY_VALUES
from django_filters.filters import Filter
from django_filters.filterset import FILTER_FOR_DBFIELD_DEFAULTS
from django_filters.rest_framework import DjangoFilterBackend
from django_filters.utils import get_model_field
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.request import Request

from ralphsite.core.access import current_scope
from ralphsite.core.addressing import (
    address_key_of,
    as_ulid,
    filter_reference,
    seed_id_condition,
    unknown_reference,
)
from ralphsite.core.api.fields import epoch_moment
from ralphsite.core.choices import choice_canonical, invalid_choice_message
from ralphsite.core.fields import BIGINT_MAX, BIGINT_MIN, ULIDField


class IntegerFilter(django_filters.NumberFilter):
    """A NumberFilter for integer columns: `1.5` or `x` is a 400 naming the parameter, not a lookup
    that silently matches nothing (django-filter's NumberFilter accepts any decimal); a value past the
    widest column (a bigint) is a 400 too, never a driver error."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", BIGINT_MIN)
        kwargs.setdefault("max_value", BIGINT_MAX)
        super().__init__(*args, **kwargs)


class FloatFilter(django_filters.NumberFilter):
    """A NumberFilter for float columns, read as a float: django-filter's decimal let `1e309` through,
    which SQLite compared as text and PostgreSQL refused as out of range; a value that is no finite
    float is a 400 naming the parameter on both."""

    field_class = forms.FloatField


_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


class StrictBooleanField(forms.NullBooleanField):
    """`true`/`false` (or 1/0, yes/no, on/off, any case); anything else is a 400 naming the filter.
    Django's NullBooleanField (through its select widget) reads any other text as "no filter"."""

    widget = forms.TextInput

    def to_python(self, value: Any) -> bool | None:
        if value in EMPTY_VALUES or isinstance(value, bool):
            return value if isinstance(value, bool) else None
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise forms.ValidationError(f"{value!r} is not a boolean; allowed: true, false.", code="invalid")

    def validate(self, value: Any) -> None:
        pass


class BooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class EpochOrIsoDateTimeFormField(filter_fields.IsoDateTimeField):
    """ISO 8601, or epoch seconds or milliseconds (`ralphsite.core.api.fields.epoch_moment`), as the body's times."""

    def to_python(self, value: Any) -> Any:
        try:
            moment = epoch_moment(value)
        except ValueError as error:
            raise forms.ValidationError(str(error), code="invalid") from None
        return super().to_python(value) if moment is None else moment


class _AllowedChoicesNamed:
    """A choice form field whose invalid-choice error names every allowed value (agents fix their
    call from it), and that accepts the enum's aliases (`ralphsite.core.choices`), as the body's choice
    fields do."""

    choices: Any

    def to_python(self, value: Any) -> Any:
        value = super().to_python(value)  # type: ignore[misc]
        values = [key for key, _label in self.choices if key not in EMPTY_VALUES]
        if isinstance(value, list):
            return [choice_canonical(values, item) or item for item in value]
        return choice_canonical(values, value) or value

    def validate(self, value: Any) -> None:
        try:
            super().validate(value)  # type: ignore[misc]
        except forms.ValidationError as error:
            if error.code != "invalid_choice":
                raise
            allowed = [key for key, _label in self.choices if key not in EMPTY_VALUES]
            raise forms.ValidationError(invalid_choice_message(error.params["value"], allowed),
                                        code="invalid_choice") from None


class ChoiceField(_AllowedChoicesNamed, filter_fields.ChoiceField):
    pass


class MultipleChoiceField(_AllowedChoicesNamed, filter_fields.MultipleChoiceField):
    pass


class ChoiceFilter(django_filters.ChoiceFilter):
    field_class = ChoiceField


class MultipleChoiceFilter(django_filters.MultipleChoiceFilter):
    """`?status=a&status=b`: any of the values."""

    field_class = MultipleChoiceField


class NonBlankKeyFilter(django_filters.CharFilter):
    """An exact match on a key that is unique (and indexed) only where it is not blank.

    The query repeats the partial index's condition: SQLite uses a partial index only when the WHERE
    clause contains that condition (PostgreSQL proves it from `key = 'x'`); without it `?key=` read
    the whole table. A blank key names no row (`RalphFilterSet` refuses a blank value).
    """

    def filter(self, qs: QuerySet, value: Any) -> QuerySet:
        if value in EMPTY_VALUES:
            return qs
        return super().filter(qs, value).exclude(**{self.field_name: ""})


SEED_ID_FILTER = "source_id"


class SeedIdFilter(django_filters.CharFilter):
    """`?source_id=`: the rows a seed tool's file brought under that id (`manage.py import_seed`: a Ralph V2 GUID,
    `TASK-001`, `obs-0001`, a ralphy run id), within the caller's scope like every filter. All of them: two
    projects' files may number alike (a path or a body's reference names a row by such an id only when one row
    in scope has it). A list of integer ids has none (token usage's own `source_id` field names the attempt or
    invocation that reported the call)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", "The id the row had in the seed tool's file it was imported from "
                                       "(`manage.py import_seed`): a Ralph V2 GUID, `TASK-001`, `obs-0001`, "
                                       "a ralphy run id. Every row in scope imported under that id.")
        super().__init__(*args, **kwargs)

    def filter(self, qs: QuerySet, value: Any) -> QuerySet:
        if value in EMPTY_VALUES:
            return qs
        return qs.filter(seed_id_condition(qs.model, value))


def _values(data: QueryDict | dict[str, Any], name: str) -> list[Any]:
    """Every value of query parameter `name` (a QueryDict's list, or a plain dict's value or list)."""
    if isinstance(data, QueryDict):
        return data.getlist(name)
    value = data[name]
    return value if isinstance(value, list) else [value]


def _foreign_key_read(filterset: type[django_filters.FilterSet], template: Filter) -> models.Field | None:
    """The foreign key a filter reads (`session`, `interview__session`, `session_id`), or None."""
    model = filterset._meta.model
    if model is None or not template.field_name:
        return None
    field = get_model_field(model, template.field_name)
    return field if field is not None and (field.many_to_one or field.one_to_one) else None


def _has_id_twin(filterset: type[django_filters.FilterSet], name: str, template: Filter) -> bool:
    """Whether filter `name` reads a foreign key or a column named `<name>_id` (`worktree` →
    `worktree_id`): it then has a twin named `<name>_id`, the seeds' column name."""
    if name.endswith("_id") or not template.field_name:
        return False
    return template.field_name == f"{name}_id" or _foreign_key_read(filterset, template) is not None


def _keyed_target(filterset: type[django_filters.FilterSet], template: Filter) -> type[models.Model] | None:
    """The keyed model (`ralphsite.core.addressing`) a filter names rows of through a foreign key, or None."""
    field = _foreign_key_read(filterset, template)
    return field.related_model if field is not None and address_key_of(field.related_model) else None


def filters_naming_rows(filterset: type[django_filters.FilterSet]) -> list[str]:
    """The filters whose value must name a row that exists (a 400 naming the filter otherwise): a
    related-row choice (its id is looked up) and a keyed model's filter (its key is)."""
    return sorted(name for name, template in filterset.base_filters.items()
                  if isinstance(template, django_filters.ModelChoiceFilter) or _keyed_target(filterset, template))


class RalphFilterSet(django_filters.FilterSet):
    """django-filter's FilterSet with strict value parsing.

    Filters generated from model fields parse strictly: integers as `IntegerFilter`, booleans as
    `BooleanFilter`, choices as `ChoiceFilter` (a bad value is a 400 naming the allowed ones; an enum
    alias is read as its value). Every filter of a foreign key (or of a column `<name>_id`) has a twin
    named `<name>_id`, the seeds' column name; a filter of a keyed model (a session, plan or
    checkpoint) takes its key as well as its id; every time filter accepts epoch numbers too. A model with
    ULID ids has `?source_id=` (`SeedIdFilter`), the rows an import brought under a seed tool's id.
    """

    FILTER_DEFAULTS = {
        **FILTER_FOR_DBFIELD_DEFAULTS,
        **{field: {"filter_class": IntegerFilter}
           for field in (*FILTER_FOR_DBFIELD_DEFAULTS, models.BigIntegerField, models.PositiveBigIntegerField)
           if issubclass(field, models.IntegerField)},
        models.BooleanField: {"filter_class": BooleanFilter},
        models.FloatField: {"filter_class": FloatFilter},
    }
    _keyed_parameters: ClassVar[dict[type, dict[str, type[models.Model]]]] = {}
    # A seed's own name for a filter (`run_id`, ralphy's name for the session): the same filter under it.
    seed_names: ClassVar[dict[str, str]] = {}

    def __init__(self, data: QueryDict | None = None, *args: Any, **kwargs: Any) -> None:
        self._blank_values_refused(data)
        super().__init__(self._keys_read_as_ids(data), *args, **kwargs)

    @classmethod
    def _blank_values_refused(cls, data: QueryDict | dict[str, Any] | None) -> None:
        """A filter given an empty (or all-space) value is a 400 naming it: django-filter reads
        `?until=` as "no filter", so a client whose variable was empty got every row unfiltered."""
        if not data:
            return
        blank = [name for name in cls.base_filters if name in data
                 and any(isinstance(value, str) and not value.strip() for value in _values(data, name))]
        if blank:
            raise ValidationError({name: ["An empty value filters nothing: give a value, or leave the parameter "
                                          "out."] for name in blank})

    @classmethod
    def _keys_read_as_ids(cls, data: QueryDict | None) -> QueryDict | None:
        """The query with each key of a keyed model (`?session=sess-a`) replaced by its row's id, in one
        query per key (`ralphsite.core.addressing`); a key that names no row in scope is a 400 naming it."""
        keyed = RalphFilterSet._keyed_parameters.get(cls)
        if keyed is None:
            keyed = RalphFilterSet._keyed_parameters[cls] = {
                name: model for name, template in cls.base_filters.items()
                if (model := _keyed_target(cls, template)) is not None}
        named = [name for name in keyed if data and data.get(name) and as_ulid(data.get(name)) is None]
        if not named:
            return data
        data = data.copy()
        errors = {}
        for name in named:
            pk = filter_reference(keyed[name], data[name])
            if pk is None:
                errors[name] = [unknown_reference(keyed[name], data[name])]
            else:
                data[name] = pk
        if errors:
            raise ValidationError(errors)
        return data

    @classmethod
    def filter_for_lookup(cls, field: models.Field, lookup_type: str) -> tuple[type[Filter] | None, dict[str, Any]]:
        filter_class, params = super().filter_for_lookup(field, lookup_type)
        if filter_class is django_filters.ChoiceFilter:
            filter_class = ChoiceFilter
        return filter_class, params

    @classmethod
    def get_filters(cls) -> "OrderedDict[str, Filter]":
        filters = super().get_filters()
        for name, template in list(filters.items()):
            if isinstance(template, django_filters.DateTimeFilter):
                template.field_class = EpochOrIsoDateTimeFormField
            twin = f"{name}_id"
            if twin not in filters and _has_id_twin(cls, name, template):
                filters[twin] = copy.deepcopy(template)
        for seed_name, name in cls.seed_names.items():
            filters[seed_name] = copy.deepcopy(filters[name])
        model = cls._meta.model
        if model is not None and isinstance(model._meta.pk, ULIDField) and SEED_ID_FILTER not in filters:
            filters[SEED_ID_FILTER] = SeedIdFilter(field_name=model._meta.pk.name)
        return filters

    @property
    def form(self) -> forms.Form:
        """The bound form; its related-row choices narrowed to the request's scope, so that a filter
        naming an out-of-scope row is refused exactly as one naming a row that does not exist."""
        if "_form" in self.__dict__:
            return self._form
        form = super().form
        scope = current_scope()
        if not scope.is_global:
            for field in form.fields.values():
                if isinstance(field, forms.ModelChoiceField):
                    field.queryset = scope.filter(field.queryset)
        return form


class RalphFilterBackend(DjangoFilterBackend):
    """django-filter's backend, its errors worded as Django words them.

    django-filter %-formats every error message, with or without parameters, so a message quoting the
    request's value (`'%s' is not a valid ULID`) failed with a 500. Django formats a message only
    when it has parameters (`ValidationError.messages`): so does this.
    """

    def filter_queryset(self, request: Request, queryset: QuerySet, view: Any) -> QuerySet:
        filterset = self.get_filterset(request, queryset, view)
        if filterset is None:
            return queryset
        if not filterset.is_valid() and self.raise_exception:
            raise ValidationError({
                name: [ErrorDetail(message, code=error.code) for error in errors for message in error.messages]
                for name, errors in filterset.errors.as_data().items()
            })
        return filterset.qs
