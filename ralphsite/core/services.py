"""Generic write services for resources whose writes carry no domain rule.

Resources with rules (claims, sequence numbers, versions, totals) have their own
`<entity>_<verb>` services in their app; these cover plain records so that the API and the
admin still write through one place, one transaction each. Every write here moves the activity of
the session the row belongs to (`ralphsite.core.activity`).
"""

from typing import Any, TypeVar

from django.core.exceptions import FieldDoesNotExist
from django.db import models, transaction

from ralphsite.core.activity import owner_session_ids, owners_touch, sessions_touch
from ralphsite.core.addressing import address_key_check
from ralphsite.core.shapes import stored_values_check

M = TypeVar("M", bound=models.Model)


def _one_transaction() -> transaction.Atomic:
    """A transaction of its own, or part of the caller's: an error here fails the whole caller
    (nobody recovers from one halfway), so a savepoint would only cost two statements a write."""
    return transaction.atomic(savepoint=False)


def column_holds(instance: models.Model, name: str, value: Any) -> bool | None:
    """Whether the row's column `name` holds `value` (a related row compared by id); None when `name`
    is no column of the model (the caller compares it another way)."""
    try:
        field = instance._meta.get_field(name)
    except FieldDoesNotExist:
        return None
    if not field.concrete:
        return None
    if field.is_relation and isinstance(value, models.Model):
        value = value.pk
    return getattr(instance, field.attname) == value


def _split_many_to_many(model: type[models.Model], data: dict[str, Any]) -> tuple[dict, dict]:
    m2m_names = {f.name for f in model._meta.many_to_many}
    plain = {k: v for k, v in data.items() if k not in m2m_names}
    many = {k: v for k, v in data.items() if k in m2m_names}
    return plain, many


def instance_create(*, model: type[M], data: dict[str, Any]) -> M:
    plain, many = _split_many_to_many(model, data)
    with _one_transaction():
        address_key_check(model, plain)
        instance = model(**plain)
        stored_values_check(instance)
        instance.save(force_insert=True)
        for name, values in many.items():
            getattr(instance, name).set(values)
        owners_touch([instance])
    return instance


def instance_update(*, instance: M, data: dict[str, Any]) -> M:
    plain, many = _split_many_to_many(type(instance), data)
    with _one_transaction():
        address_key_check(type(instance), plain, instance)
        for name, value in plain.items():
            setattr(instance, name, value)
        stored_values_check(instance, plain)
        update_fields = [*plain.keys()]
        if any(f.name == "updated_at" for f in instance._meta.concrete_fields):
            update_fields.append("updated_at")
        if update_fields:
            instance.save(update_fields=update_fields)
        for name, values in many.items():
            getattr(instance, name).set(values)
        owners_touch([instance])
    return instance


def instance_delete(*, instance: models.Model) -> None:
    instances_delete(instances=[instance])


def instances_delete(*, instances: list[M]) -> None:
    """Delete rows of one model in one statement (with what cascades from them): rows that restrict
    each other's deletion (task dependencies) may go together."""
    if not instances:
        return
    with _one_transaction():
        owners = owner_session_ids(instances)
        if len(instances) == 1:
            instances[0].delete()
        else:
            type(instances[0])._default_manager.filter(pk__in=[instance.pk for instance in instances]).delete()
        sessions_touch(owners)
