from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("conversations_app", "0001_initial")]
    operations: list = []
