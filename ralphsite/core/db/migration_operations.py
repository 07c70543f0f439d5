"""Migration operations of our own."""

import logging
from typing import Any

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import ProjectState

logger = logging.getLogger(__name__)


class AlterFieldIndex(migrations.AlterField):
    """An AlterField that changes only `db_index`, done in place on SQLite too.

    Django's SQLite backend alters any field by copying the table into a new one: every row is
    rewritten and the table's triggers (the ledger's append-only guard, the search index's queue) are
    dropped with the old table. An index needs none of that: this drops or creates the one index.
    Other backends run AlterField as it is.
    """

    def database_forwards(self, app_label: str, schema_editor: BaseDatabaseSchemaEditor,
                          from_state: ProjectState, to_state: ProjectState) -> None:
        model = to_state.apps.get_model(app_label, self.model_name)
        old = from_state.apps.get_model(app_label, self.model_name)._meta.get_field(self.name)
        new = model._meta.get_field(self.name)
        if _without_db_index(old) != _without_db_index(new):
            raise ValueError(f"AlterFieldIndex on {model.__name__}.{self.name} changes more than db_index")
        if schema_editor.connection.vendor != "sqlite":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
            return
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        if old.db_index and not new.db_index:
            for name in _single_column_index_names(schema_editor, model, old.column):
                schema_editor.remove_index(model, models.Index(fields=[self.name], name=name))
        elif new.db_index and not old.db_index:
            index = models.Index(fields=[self.name])
            index.set_name_with_model(model)
            schema_editor.add_index(model, index)


def _without_db_index(field: models.Field) -> tuple[str, dict[str, Any]]:
    _name, path, _args, kwargs = field.deconstruct()
    kwargs.pop("db_index", None)
    kwargs.pop("to", None)  # the same model, but compared as a string in one state and a class in the other
    return path, kwargs


def _single_column_index_names(schema_editor: BaseDatabaseSchemaEditor, model: type[models.Model],
                               column: str) -> list[str]:
    """The plain (not unique, not Meta.indexes) indexes on `column` alone: the field's own."""
    declared = {index.name for index in model._meta.indexes}
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, model._meta.db_table)
    return [name for name, info in constraints.items()
            if info["index"] and not info["unique"] and not info["primary_key"]
            and info["columns"] == [column] and name not in declared]


class KeysShapedLikeIdsRenamed(migrations.RunPython):
    """Before a model's `key_not_shaped_like_id` constraint (`ralphsite.core.db.lookups`): each row whose key is
    shaped like a ULID, which the services refuse but an import or raw SQL stored before, is renamed
    `key-<key>` (`key-<key>-2`… when its scope has that key already), so adding the constraint never fails.
    Each renamed row is logged as a warning (`migrate` shows it), with the count. Reversing keeps the new keys
    (the old ones are what the constraint refuses)."""

    def __init__(self, app_label: str, model_name: str, key_field: str = "key") -> None:
        self.model_label, self.key_field = (app_label, model_name), key_field
        super().__init__(self._rename, migrations.RunPython.noop)

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return migrations.operations.base.Operation.deconstruct(self)

    def describe(self) -> str:
        return f"Rename the {self.model_label[1]} {self.key_field}s shaped like a ULID"

    def _rename(self, apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
        model, key = apps.get_model(*self.model_label), self.key_field
        rows = model._default_manager.db_manager(schema_editor.connection.alias)
        # The key's scope: the other fields of the unique constraint holding it (a session's project, a plan's or
        # a task's session), the one it leads first.
        holding = [c for c in model._meta.constraints if isinstance(c, models.UniqueConstraint) and key in c.fields]
        unique = sorted(holding, key=lambda c: c.fields[0] != key)[0]
        scope = [model._meta.get_field(name).attname for name in unique.fields if name != key]
        renamed = []
        for row in rows.filter(**{f"{key}__ulid_shaped": True}).order_by("pk"):
            old, number = getattr(row, key), 1
            new = f"key-{old}"
            while rows.filter(**{name: getattr(row, name) for name in scope}, **{key: new}).exists():
                number += 1
                new = f"key-{old}-{number}"
            rows.filter(pk=row.pk).update(**{key: new})
            renamed.append(f"{row.pk}: {old} → {new}")
        if renamed:
            logger.warning("%s: %d %ss shaped like a ULID renamed (the database refuses them now): %s",
                           model._meta.label, len(renamed), key, "; ".join(renamed))
