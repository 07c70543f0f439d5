"""A serializer's read path compiled once per serializer class.

DRF's `Serializer.to_representation` asks every field, for every row, to find its attribute
(`get_attribute` walks `source_attrs`, tests for callables, wraps related keys) and then to convert
it. On a list of 100 messages that generic walk was most of the request. A field whose source is
one model column is read from that column; for the field types whose conversion is a plain
function (text, integers, booleans, floats, choices, JSON, aware datetimes, primary keys of
related rows) the plan converts it directly, any other column field (a nested serializer over a
JSON column, a list field) converts with its own `to_representation`, on an unbound copy made
once when nothing in it reads the serializer's context. Every other field (method
fields, dotted sources, related objects, any subclass with its own `get_attribute`) keeps DRF's
own two steps. The output is the same dict DRF builds.

A plan whose every step reads a column also shapes rows fetched with `values()` (`represent_row`),
so a list need not build model instances at all.
"""

import copy
from collections.abc import Callable
from datetime import datetime, tzinfo
from enum import Enum
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.utils import timezone
from rest_framework import ISO_8601, serializers
from rest_framework.fields import SkipField
from rest_framework.relations import PKOnlyObject
from rest_framework.settings import api_settings

from ralphsite.core.api.fields import ScopedPrimaryKeyRelatedField

Converter = Callable[[Any], Any]
# (output name, model attribute or None for DRF's generic path, converter or the field itself).
# Compiled, a converter is None where the bound field's own `to_representation` converts.
Step = tuple[str, str | None, Any]


def _identity(value: Any) -> Any:
    return value


def _iso_datetime(field_timezone: tzinfo, fallback: Converter) -> Converter:
    def convert(value: Any) -> Any:
        if not isinstance(value, datetime) or value.tzinfo is None:
            return fallback(value)  # naive or odd values: DRF's own rules
        text = value.astimezone(field_timezone).isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    return convert


def _choice(mapping: dict[str, Any]) -> Converter:
    def convert(value: Any) -> Any:
        if value == "":
            return value
        if isinstance(value, Enum) and str(value) != str(value.value):
            value = value.value
        return mapping.get(str(value), value)

    return convert


def _bool(fallback: Converter) -> Converter:
    def convert(value: Any) -> Any:
        return value if value is True or value is False else fallback(value)

    return convert


def _converter(field: serializers.Field) -> Converter | None:
    """The direct conversion DRF's `to_representation` amounts to for this exact field, if any."""
    convert = type(field).to_representation
    if convert is serializers.CharField.to_representation:
        return str
    if convert is serializers.IntegerField.to_representation:
        return int
    if convert is serializers.FloatField.to_representation:
        return float
    if convert is serializers.BooleanField.to_representation:
        return _bool(field.to_representation)
    if convert is serializers.JSONField.to_representation and not field.binary:
        return _identity
    if convert is serializers.ChoiceField.to_representation:
        return _choice(field.choice_strings_to_values)
    if convert is serializers.DateTimeField.to_representation:
        output_format = getattr(field, "format", api_settings.DATETIME_FORMAT)
        field_timezone = field.timezone if hasattr(field, "timezone") else field.default_timezone()
        if isinstance(output_format, str) and output_format.lower() == ISO_8601 and field_timezone is not None:
            return _iso_datetime(field_timezone, field.to_representation)
    return None


# Modules whose fields' `to_representation` we know: none of them reads the serializer's context
# except the file fields, excluded below.
_KNOWN_FIELD_MODULES = frozenset({"rest_framework.fields", "rest_framework.serializers", "ralphsite.core.api.fields"})


def _context_free(field: serializers.Field) -> bool:
    """Whether the field's representation depends on its value alone (not on context or parent)."""
    if isinstance(field, (serializers.FileField, serializers.SerializerMethodField, serializers.HiddenField)):
        return False
    if type(field).to_representation.__module__ not in _KNOWN_FIELD_MODULES:
        return False
    if isinstance(field, serializers.ListSerializer):
        return _context_free(field.child)
    if isinstance(field, serializers.Serializer):
        return all(_context_free(nested) for nested in field.fields.values())
    child = getattr(field, "child", None)  # ListField, DictField
    return child is None or _context_free(child)


def _unbound_converter(field: serializers.Field) -> Converter | None:
    """A context-free field's own conversion, on an unbound copy: no serializer's fields need binding."""
    return copy.deepcopy(field).to_representation if _context_free(field) else None


def _model_attname(model: type[models.Model], name: str) -> tuple[str, bool] | None:
    """(attribute holding the column value, whether it is a foreign key) for a concrete field."""
    try:
        model_field = model._meta.get_field(name)
    except FieldDoesNotExist:  # e.g. a source naming a column by attname (`run_id`)
        model_field = next((f for f in model._meta.concrete_fields if f.attname == name), None)
    if model_field is None or not getattr(model_field, "concrete", False):
        return None
    if model_field.many_to_many:
        return None
    return model_field.attname, model_field.is_relation


# Related fields whose representation is the related row's primary key (DRF's pk-only path); the scoped
# one only narrows the rows it accepts on input.
_PK_ONLY_RELATED_FIELDS = (serializers.PrimaryKeyRelatedField, ScopedPrimaryKeyRelatedField)


def _compile(model: type[models.Model], fields: list[serializers.Field]) -> list[Step]:
    plan: list[Step] = []
    for field in fields:
        step: Step = (field.field_name, None, None)
        column = _model_attname(model, field.source_attrs[0]) if len(field.source_attrs) == 1 else None
        if column is not None:
            attname, is_relation = column
            if is_relation and type(field) in _PK_ONLY_RELATED_FIELDS and field.pk_field is None:
                # A related row's primary key, read from `<name>_id` (no query), as DRF's pk-only path.
                step = (field.field_name, attname, _identity)
            elif type(field).get_attribute is serializers.Field.get_attribute \
                    and (not is_relation or field.source_attrs[0] == attname):
                # DRF's get_attribute is getattr(instance, column) here; the field converts it.
                step = (field.field_name, attname, _converter(field) or _unbound_converter(field))
        plan.append(step)
    return plan


# Compiled once per serializer class and field set (the converters depend on the field classes and
# options only, which the class's cached field templates fix) and timezone.
_compiled: dict[tuple[Any, ...], list[Step]] = {}


def representation_plan(serializer: serializers.ModelSerializer, template_key: Any) -> list[Step]:
    """The serializer's steps; a field that keeps DRF's generic path carries the bound field itself.

    `template_key` names the field set the serializer's class would build now. When every step is a
    plain column read, a later serializer with the same key never builds (binds) its fields at all:
    for a one-row response that binding cost more than the representation itself.
    """
    timezone_name = timezone.get_current_timezone_name()
    bound = "fields" in serializer.__dict__  # built already (e.g. by validation): use what was built
    key = (type(serializer), template_key, timezone_name) if not bound else None
    compiled = _compiled.get(key) if key is not None else None
    if compiled is None:
        fields = list(serializer._readable_fields)
        full_key = (type(serializer), tuple(field.field_name for field in fields), timezone_name)
        compiled = _compiled.get(full_key)
        if compiled is None:
            compiled = _compiled[full_key] = _compile(serializer.Meta.model, fields)
        if key is not None:
            _compiled[key] = compiled
    if all(convert is not None for _name, _attname, convert in compiled):
        return compiled
    fields_by_name = serializer.fields
    return [(name, attname, convert if convert is not None
             else fields_by_name[name] if attname is None else fields_by_name[name].to_representation)
            for name, attname, convert in compiled]


def reads_columns_only(plan: list[Step]) -> bool:
    return all(attname is not None for _name, attname, _convert in plan)


def represent_row(plan: list[Step], row: dict[str, Any]) -> dict[str, Any]:
    """A `values()` row shaped by a plan that `reads_columns_only`."""
    return {name: None if (value := row[attname]) is None else convert(value) for name, attname, convert in plan}


def represent(plan: list[Step], instance: models.Model) -> dict[str, Any]:
    ret: dict[str, Any] = {}
    for name, attname, convert in plan:
        if attname is not None:
            value = getattr(instance, attname)
            ret[name] = None if value is None else convert(value)
            continue
        field = convert  # DRF's generic path, exactly as Serializer.to_representation runs it
        try:
            attribute = field.get_attribute(instance)
        except SkipField:
            continue
        check_for_none = attribute.pk if isinstance(attribute, PKOnlyObject) else attribute
        ret[name] = None if check_for_none is None else field.to_representation(attribute)
    return ret
