"""JSON shapes: what each JSON field may hold, declared once on the model field.

A shape is a field validator, so model validation knows it; `stored_values_check` runs every JSON field's
shapes in the service verbs every door calls (REST, bulk, MCP, CLI, admin), and the importers ask
`shape.reshape` for the value that fits. Where the database can state the top-level type,
`json_type_check` adds a CHECK (`json_type` on SQLite, `jsonb_typeof` on PostgreSQL: both answer
'object' and 'array'), so a row written past the services is refused too.

Shapes are dataclasses (equal when their arguments are) and deconstructible (they appear in migrations).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.lookups import Exact
from django.utils.deconstruct import deconstructible

from ralphsite.core.api.fields import TEXT_MAX_CHARS
from ralphsite.core.errors import InvalidInput
from ralphsite.core.fields import integer_range


class NotShaped(ValueError):
    """A value that no reshaping makes fit its shape."""


@dataclass
class JSONShape:
    """What every shape answers: `problem` (None when the value fits), `reshape` (the value made to fit, or
    NotShaped; by default only a value that already fits) and, as a field validator, a ValidationError."""

    def problem(self, value: Any) -> str | None:
        raise NotImplementedError

    def reshape(self, value: Any) -> Any:
        problem = self.problem(value)
        if problem:
            raise NotShaped(problem)
        return value

    def __call__(self, value: Any) -> None:
        problem = self.problem(value)
        if problem:
            raise ValidationError(problem, code="invalid_shape")


@deconstructible
@dataclass
class JSONObject(JSONShape):
    """A JSON object, any keys."""

    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, dict) else f"Must be a JSON object, not {_kind(value)}."


@deconstructible
@dataclass
class JSONRecord(JSONObject):
    """A JSON object with declared keys: each of `required` present, nothing outside `required` and
    `optional`, and a key of `choices` one of its values."""

    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, dict):
            return super().problem(value)
        missing = [key for key in self.required if key not in value]
        if missing:
            return f"Missing key(s) {', '.join(missing)}."
        unknown = sorted(set(value) - set(self.required) - set(self.optional))
        if unknown:
            allowed = ", ".join(self.required + self.optional)
            return f"Unknown key(s) {', '.join(map(str, unknown))}; allowed: {allowed}."
        for key, allowed in self.choices.items():
            if key in value and value[key] not in allowed:
                return f"{key} must be one of {', '.join(allowed)}, not {value[key]!r}."
        return None

    def reshape(self, value: Any) -> Any:
        """Keys spelled another way (`Id`, `toolName` for `tool_name`) become the declared ones."""
        if isinstance(value, dict):
            declared = {_plain(key): key for key in self.required + self.optional}
            value = {declared.get(_plain(str(key)), key): item for key, item in value.items()}
        return super().reshape(value)


@deconstructible
@dataclass
class JSONString(JSONShape):
    """A JSON string."""

    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, str) else f"Must be a string, not {_kind(value)}."


@deconstructible
@dataclass
class JSONList(JSONShape):
    """A JSON list whose items each have the shape `item` (None: any item)."""

    item: JSONShape | None = None

    def problem(self, value: Any) -> str | None:
        if not isinstance(value, list):
            return f"Must be a JSON list, not {_kind(value)}."
        if self.item is not None:
            for index, entry in enumerate(value):
                problem = self.item.problem(entry)
                if problem:
                    return f"Item {index}: {problem}"
        return None

    def reshape(self, value: Any) -> Any:
        """A single object where a list of objects is declared becomes a list of it; each item is reshaped."""
        if isinstance(value, dict) and isinstance(self.item, JSONObject):
            value = [value]
        if not isinstance(value, list):
            raise NotShaped(self.problem(value))
        return [self.item.reshape(entry) for entry in value] if self.item is not None else value


def _plain(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


_KINDS = ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"), (list, "a list"),
          (dict, "an object"))  # bool before int: a boolean is an int to Python


def _kind(value: Any) -> str:
    """The JSON kind of a value, by isinstance: the admin's JSON form field hands a string in as its subclass
    JSONString, which is a string all the same (the API's words, from every door)."""
    if value is None:
        return "null"
    return next((kind for python_type, kind in _KINDS if isinstance(value, python_type)), type(value).__name__)


def field_shape(model_field: models.Field) -> JSONShape | None:
    """The shape a JSON field declares among its validators, if any."""
    return next((v for v in model_field.validators if isinstance(v, JSONShape)), None)


@cache
def shaped_fields(model: type[models.Model]) -> tuple[tuple[models.Field, JSONShape], ...]:
    """The model's fields that declare a JSON shape, each with it (found once per model: an import asks per row)."""
    return tuple((model_field, shape) for model_field in model._meta.concrete_fields
                 if (shape := field_shape(model_field)) is not None)


def text_limited(model_field: models.Field) -> bool:
    """Whether the field is a text without a max_length: the API's `TEXT_MAX_CHARS` is its limit."""
    return isinstance(model_field, models.TextField) and model_field.max_length is None


def text_problem(model_field: models.Field, value: Any) -> str | None:
    """A text field without a max_length holds at most the API's `TEXT_MAX_CHARS`, in the API's words."""
    if text_limited(model_field) and isinstance(value, str) and len(value) > TEXT_MAX_CHARS:
        return f"Ensure this field has no more than {TEXT_MAX_CHARS} characters."
    return None


def number_bounds(model_field: models.Field) -> tuple[int, int] | None:
    """The range `number_problem` holds the field's integers to: its column's (`integer_range`); None for any
    other field and for a column of choices (bounded by its choices)."""
    return None if model_field.choices else integer_range(model_field)


def number_problem(model_field: models.Field, value: Any) -> str | None:
    """An integer column holds PostgreSQL's range on every backend (`integer_range`), in the API's words; a column
    of choices is bounded by its choices."""
    bounds = number_bounds(model_field)
    if bounds is None or not isinstance(value, int) or isinstance(value, bool):
        return None
    low, high = bounds
    if value < low:
        return f"Ensure this value is greater than or equal to {low}."
    return f"Ensure this value is less than or equal to {high}." if value > high else None


def stored_values_check(instance: models.Model, names: Iterable[str] | None = None) -> None:
    """Model validation of what the instance's fields (all, or `names`) would store: each shaped JSON field's
    shape, each integer within its column's range, and each text field without a max_length within
    `TEXT_MAX_CHARS` (the API's limit). A 400
    `validation_error` with the messages by field, the API's words, the same through every door (REST,
    MCP, CLI, the admin). NULL passes where the field allows it."""
    wanted = None if names is None else set(names)
    errors: dict[str, list[str]] = {}
    for model_field in type(instance)._meta.concrete_fields:
        if wanted is not None and model_field.name not in wanted:
            continue
        value = getattr(instance, model_field.attname)
        if value is None and model_field.null:
            continue
        shape = field_shape(model_field)
        problem = (text_problem(model_field, value) or number_problem(model_field, value)
                   or (shape.problem(value) if shape is not None else None))
        if problem:
            errors[model_field.name] = [problem]
    if errors:
        name, [message] = next(iter(errors.items()))
        raise InvalidInput(f"{name}: {message}", details=errors)


class JSONType(models.Func):
    """The JSON type of a value's top level: 'object', 'array', … (SQLite `json_type`, PostgreSQL
    `jsonb_typeof`; the two agree on these two words)."""

    function = "JSON_TYPE"
    output_field = models.CharField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="JSONB_TYPEOF", **extra)


def json_type_check(name: str, json_type: str, *, model: str) -> models.CheckConstraint:
    """The database's half of a shape: column `name` holds a JSON `json_type` ('object' or 'array') or NULL."""
    return models.CheckConstraint(condition=Q(Exact(JSONType(name), json_type)) | Q(**{f"{name}__isnull": True}),
                                  name=f"{model}_{name}_{json_type}")


# -- migrations: the rows stored before a shape was enforced -----------------------------------------

QUARANTINE = "quarantine"  # SeedRow.kind of a value a shape's migration replaced (the original in `extra`)


def rows_reshape(apps: Any, schema_editor: Any, *, model: str, name: str, shape: JSONShape,
                 default: Any) -> list[Any]:
    """Forward half of a shape's migration: each stored value that does not fit `shape` is reshaped
    (`shape.reshape`: keys spelled another way, a single object for a list) or, when nothing makes it
    fit, replaced by `default`; the original is kept on a SeedRow (kind "quarantine") for the backward
    half. Says how many on stdout; returns the ids of the rows changed."""
    model_class = apps.get_model(model)
    seed_rows = apps.get_model("ralphsite", "SeedRow")
    using = schema_editor.connection.alias
    changed: list[tuple[Any, Any, Any]] = []
    rows = model_class.objects.using(using).exclude(**{f"{name}__isnull": True}).values_list("pk", name)
    for pk, value in rows.iterator(chunk_size=2000):
        if shape.problem(value) is None:
            continue
        try:
            fitted = shape.reshape(value)
        except NotShaped:
            fitted = default
        changed.append((pk, value, fitted))
    for pk, _value, fitted in changed:
        model_class.objects.using(using).filter(pk=pk).update(**{name: fitted})
    seed_rows.objects.using(using).bulk_create([
        seed_rows(kind=QUARANTINE, source_table=f"{model_class._meta.db_table}.{name}", source_key=str(pk),
                  object_model=model_class._meta.label_lower, object_id=str(pk), extra={"value": value})
        for pk, value, _fitted in changed])
    if changed:
        print(f"\n  {model}.{name}: {len(changed)} stored value(s) did not fit the field's shape; reshaped, "
              f"originals kept as SeedRow kind={QUARANTINE!r}")
    return [pk for pk, _value, _fitted in changed]


def rows_unreshape(apps: Any, schema_editor: Any, *, model: str, name: str) -> list[Any]:
    """Backward half of `rows_reshape`: the originals go back; returns the ids of the rows changed."""
    model_class = apps.get_model(model)
    seed_rows = apps.get_model("ralphsite", "SeedRow")
    using = schema_editor.connection.alias
    kept = seed_rows.objects.using(using).filter(kind=QUARANTINE,
                                                 source_table=f"{model_class._meta.db_table}.{name}")
    restored = []
    for row in kept:
        pk = model_class._meta.pk.to_python(row.source_key)
        model_class.objects.using(using).filter(pk=pk).update(**{name: row.extra["value"]})
        restored.append(pk)
    kept.delete()
    return restored
