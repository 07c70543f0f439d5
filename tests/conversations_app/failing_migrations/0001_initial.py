"""Stand-ins for the applied migrations, so that only 0003_fails runs (and fails)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0001_initial")]
    operations: list = []
