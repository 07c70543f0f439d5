from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def fail(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    raise RuntimeError("disk on fire")


class Migration(migrations.Migration):
    dependencies = [("conversations_app", "0002_search")]
    operations = [migrations.RunPython(fail, migrations.RunPython.noop)]
