"""The base serializer every resource uses.

Fast path `serializers` (`ralphsite.core.db.fast_paths`, asked at run time inside `RalphModelSerializer`):
field templates and validators cached per class, copied shallowly per instance, and representation by
a plan compiled once per class (`ralphsite.core.api.representation`), which also shapes `values()` rows
for lists. With it off, DRF builds and represents as it always does. Measured gain (`make bench
BENCH_ARGS=--fast-paths`, interleaved A/B with it off, SQLite, 2-vCPU Intel Xeon VM at load 0.8-2.4,
2026-11-28, 400 samples a side): p50 off/on 1.37 on get chat, 1.67 on list 100 messages, 1.53 on
insert chat (earlier runs on loaded machines, 2026-11-25: 1.16-3.63, 1.68-2.06, 1.23-1.82).
Private DRF names it touches: `Field.__dict__` (the shallow copy), `Serializer._readable_fields`,
`Field.source_attrs`, `JSONField.binary`, `ChoiceField.choice_strings_to_values`, `relations.PKOnlyObject`.
"""

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

from django.db import models
from rest_framework import serializers

from ralphsite.core.api.fields import (
    TEXT_MAX_CHARS,
    ActingAgentField,
    ChoiceFieldNamingAllowed,
    ClientIdField,
    EpochOrISODateTimeField,
    FiniteFloatField,
    ScopedPrimaryKeyRelatedField,
    StorableJSONField,
    ULIDSerializerField,
    USDField,
    epoch_times_accepted,
    text_bounded,
)
from ralphsite.core.api.representation import Step, reads_columns_only, represent, representation_plan
from ralphsite.core.db.fast_paths import fast_paths_on
from ralphsite.core.fields import ULIDField, integer_range
from ralphsite.core.money import MoneyField


def _clone(field: serializers.Field) -> serializers.Field:
    """A shallow copy, several times cheaper than copy.copy's __reduce_ex__ protocol."""
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    return clone


# A model column of this name is the agent a write is made as (attempts, invocations, events, usage…):
# an agent-bound token fills it in and refuses another name.
ACTING_AGENT_FIELD = "agent"


def _text_refusal(field: serializers.Field, value: Any) -> str | None:
    """Why a text field (or a list of text) refuses a value DRF's CharField would take: a non-string
    (it turns `123` into "123", so a client's wrong type went unnoticed), or text longer than the
    field's max_length before surrounding whitespace is trimmed (DRF measures after trimming, so
    padding passed the limit the schema states). None when the value is for the field to judge."""
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        return next((refusal for item in value if (refusal := _text_refusal(field.child, item))), None)
    if not isinstance(field, serializers.CharField) or value is None:
        return None
    if not isinstance(value, str):
        return serializers.CharField.default_error_messages["invalid"]
    if field.max_length is not None and len(value) > field.max_length:
        return field.error_messages["max_length"].format(max_length=field.max_length)
    return None


# Set in the context of a serializer that reads a query string, where every value is text.
QUERY_STRING = "query_string"


def _type_refusal(field: serializers.Field, value: Any) -> str | None:
    """Why a boolean or number field of a JSON body refuses a value of another JSON type, which DRF
    would coerce (`"true"`, `0` and `"no"` as booleans; `"7"`, `7.0` and `true` as integers): the
    schema states the type, and an agent that sends another has a bug it should hear about. Decimals
    and times keep their documented second spellings (a number; epoch seconds or milliseconds)."""
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        return next((refusal for item in value if (refusal := _type_refusal(field.child, item))), None)
    if value is None:
        return None
    if isinstance(field, serializers.BooleanField):
        accepted, kind = isinstance(value, bool), serializers.BooleanField
    elif isinstance(field, serializers.IntegerField):
        accepted, kind = type(value) is int, serializers.IntegerField
    elif isinstance(field, serializers.FloatField):
        accepted, kind = isinstance(value, (int, float)) and not isinstance(value, bool), serializers.FloatField
    else:
        return None
    # The base kind's message: DRF 3.17 gave big integers their own ("A valid biginteger is required.").
    return None if accepted else kind.default_error_messages["invalid"]


def _null_spelled_as_text(field: serializers.Field, value: Any) -> bool:
    """Whether DRF would read this text as null: `""` in a relation (`"session": ""`), `""` or spaces
    in a nullable number, `""` or `"null"` in a nullable boolean. A client that means no value sends
    null; an empty string is more often a variable that was never filled in."""
    if not isinstance(value, str) or isinstance(field, serializers.CharField):
        return False
    if value.strip() and value.strip().lower() != "null":
        return False
    try:
        return field.run_validation(value) is None
    except serializers.ValidationError as error:  # read as null, and null refused: the same mistake
        return error.get_codes() == ["null"]
    except serializers.SkipField:
        return False


class StrictKeysMixin:
    """Unknown body keys are a 400 naming them (an agent's typo must not be silently dropped); so are
    read-only fields (server-assigned: sequence numbers, totals, timestamps), which would be dropped
    just the same, unless an update sends back the value the row already has (a client may PUT the
    body it read). A text field sent a number (or another non-string), or more than its max_length
    of text, is a 400 naming it, never coerced or trimmed into shape (`_text_refusal`); so is a body's
    boolean or number of another JSON type (`_type_refusal`; a query string's values are text); so is text
    DRF would read as null (`_null_spelled_as_text`: `"session": ""`). Every
    declared text field without a max_length of its own is bounded (`text_bounded`) and every
    declared time accepts epoch numbers (`epoch_times_accepted`), once per class.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = getattr(cls, "_declared_fields", None)  # what each instance deep-copies its fields from
        if declared:
            cls._declared_fields = {name: epoch_times_accepted(text_bounded(field))
                                    for name, field in declared.items()}

    # A seed's own name for one of our fields (`run_id` for `session`, `ts` for `timestamp`): read as the field.
    seed_names: ClassVar[dict[str, str]] = {}

    def _seed_names_read(self, data: Mapping) -> Mapping:
        """The body with each seed name renamed to our field; both spellings at once is a 400 naming both."""
        given = [name for name in self.seed_names if name in data]
        if not given:
            return data
        both = {name: [f"{name} is {self.seed_names[name]}: send one of them."] for name in given
                if self.seed_names[name] in data}
        if both:
            raise serializers.ValidationError(both)
        return {self.seed_names.get(name, name): value for name, value in data.items()}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            data = self._seed_names_read(data)
            fields = self.fields
            typed = not self.root.context.get(QUERY_STRING)  # JSON types hold in a body, not in a query
            errors: dict[str, list[str]] = {}
            for name, value in data.items():
                field = fields.get(name)
                if field is None:
                    errors[name] = [f"Unknown field; allowed: {self._writable_names()}."]
                elif field.read_only and not self._is_stored_value(field, value):
                    errors[name] = [f"Read-only: the server sets it; writable fields: {self._writable_names()}."]
                elif refusal := _text_refusal(field, value) or (_type_refusal(field, value) if typed else None):
                    errors[name] = [refusal]
                elif _null_spelled_as_text(field, value):
                    errors[name] = [f"{value!r} is text, not null: send null for no value."]
            if self.parent is not None and getattr(self.root, "partial", False):
                # A nested object is a whole value even in a PATCH, which replaces it: DRF hands the
                # root's `partial` down and let an item miss its required fields (a tool call without
                # `status` was stored, and every read of its message failed).
                for name, field in fields.items():
                    if field.required and not field.read_only and name not in data:
                        errors.setdefault(name, [serializers.Field.default_error_messages["required"]])
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)

    def _writable_names(self) -> str:
        return ", ".join(sorted(name for name, field in self.fields.items() if not field.read_only))

    def _is_stored_value(self, field: serializers.Field, value: Any) -> bool:
        """Whether `value` is what the row being updated already holds for this read-only field (as
        read, or in another spelling of the same value: an id in lower case, a time in another offset)."""
        instance = getattr(self, "instance", None)
        if instance is None or isinstance(instance, (list, models.QuerySet)):
            return False
        try:
            attribute = field.get_attribute(instance)
            if value == (None if attribute is None else field.to_representation(attribute)):
                return True
            return attribute is not None and field.to_internal_value(value) == attribute
        except (AttributeError, KeyError, TypeError, ValueError, NotImplementedError, serializers.SkipField,
                serializers.ValidationError):
            return False


class RalphInputSerializer(StrictKeysMixin, serializers.Serializer):
    """The body of a domain action (not a model): validated here, handed to a service."""


class RalphModelSerializer(StrictKeysMixin, serializers.ModelSerializer):
    """Validates and shapes; never writes (writes go through services). Unknown keys are a 400.

    On ULID models a global caller may supply `id` on create (`ClientIdField`); it is read-only afterwards.

    Fast path `serializers` (`ralphsite.core.db.fast_paths`, asked each time fields are built, validators
    derived or a row represented): field building is cached per class (DRF rebuilds every field from
    the model, and deep-copies the declared ones, for each serializer instance, which was most of a
    request's CPU time); the cached fields are shallow-copied per instance (nested serializers
    deep-copied), so binding a field to its parent never touches the shared template. Validators are
    cached the same way, and representation follows a plan compiled once per class
    (`ralphsite.core.api.representation`), which also shapes `values()` rows for lists (`row_plan`).
    With it off each of these is DRF's own (`_built_fields`, `super()`).
    """

    serializer_choice_field = ChoiceFieldNamingAllowed
    serializer_related_field = ScopedPrimaryKeyRelatedField
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        ULIDField: ULIDSerializerField,
        models.JSONField: StorableJSONField,
        models.FloatField: FiniteFloatField,
        MoneyField: USDField,
        models.DateTimeField: EpochOrISODateTimeField,
    }

    _field_templates: ClassVar[dict[tuple[type, bool], dict[str, serializers.Field]]] = {}
    _validator_templates: ClassVar[dict[tuple[type, bool], list[Any]]] = {}

    def build_standard_field(self, field_name: str, model_field: Any) -> tuple[type, dict[str, Any]]:
        field_class, kwargs = super().build_standard_field(field_name, model_field)
        if field_name == ACTING_AGENT_FIELD and field_class is serializers.CharField:
            field_class = ActingAgentField
        if issubclass(field_class, serializers.CharField) and kwargs.get("max_length") is None \
                and not issubclass(field_class, ULIDSerializerField):
            kwargs["max_length"] = TEXT_MAX_CHARS  # a TextField: the limit of every text field
        bounds = integer_range(model_field)
        if bounds is not None and "choices" not in kwargs:
            low, high = bounds
            kwargs["min_value"] = max(kwargs.get("min_value", low), low)
            kwargs["max_value"] = min(kwargs.get("max_value", high), high)
        return field_class, kwargs

    def get_fields(self) -> dict[str, serializers.Field]:
        if not fast_paths_on("serializers"):
            return self._built_fields()
        key = self._template_key()
        templates = RalphModelSerializer._field_templates.get(key)
        if templates is None:
            templates = RalphModelSerializer._field_templates[key] = self._built_fields()
        return {
            name: copy.deepcopy(field) if isinstance(field, serializers.BaseSerializer) else _clone(field)
            for name, field in templates.items()
        }

    def _built_fields(self) -> dict[str, serializers.Field]:
        """DRF's fields for this serializer, with the project's conventions applied."""
        fields = super().get_fields()
        columns = {column.name: column for column in self.Meta.model._meta.concrete_fields}
        for name, field in fields.items():
            column = columns.get(field.source or name)
            if field.read_only and column is not None and column.null:
                field.allow_null = True  # a declared read-only field shows the column's null (and says so)
        pk = self.Meta.model._meta.pk
        if isinstance(pk, ULIDField) and "id" in fields:
            if self.instance is None:
                fields["id"] = ClientIdField(required=False)
            else:
                fields["id"] = ULIDSerializerField(read_only=True)
        return fields

    def _template_key(self) -> tuple[type, bool]:
        return type(self), self.instance is None

    def get_validators(self) -> list[Any]:
        if not fast_paths_on("serializers"):
            return super().get_validators()
        # DRF derives the unique-together / unique-for-date validators from the model on every
        # validation; they depend only on the class's field set, and they keep no state (each call
        # gets the serializer as its context), so one list per field set serves every instance.
        key = self._template_key()
        validators = RalphModelSerializer._validator_templates.get(key)
        if validators is None:
            validators = RalphModelSerializer._validator_templates[key] = super().get_validators()
        return list(validators)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        if not fast_paths_on("serializers"):
            return super().to_representation(instance)
        return represent(self._plan(), instance)

    def _plan(self) -> list[Step]:
        # Looked up once per serializer instance: a list response reuses it for every row.
        plan: list[Step] | None = self.__dict__.get("_representation_plan")
        if plan is None:
            plan = representation_plan(self, self._template_key())
            self._representation_plan = plan
        return plan

    def row_plan(self) -> list[Step] | None:
        """The representation plan, when it shapes `values()` rows: every field reads a column and the
        class shapes instances no other way. None otherwise (the caller lists model instances), and
        always with the fast path off."""
        if type(self).to_representation is not RalphModelSerializer.to_representation \
                or not fast_paths_on("serializers"):
            return None
        plan = self._plan()
        return plan if reads_columns_only(plan) else None


def validated(serializer_class: type[serializers.Serializer], request: Any) -> dict[str, Any]:
    """A request body checked by `serializer_class` (400 with its codes when it fails): an action's input."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
