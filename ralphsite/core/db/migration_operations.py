"""Migration operations of our own."""

from typing import Any

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import ProjectState


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
