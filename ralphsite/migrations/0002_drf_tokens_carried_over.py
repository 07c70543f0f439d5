"""DRF's `authtoken` keys become global write tokens of their users: the key is the secret, so every
client keeps working with the header it sends today. The plaintext rows are then deleted (only the
hash is kept). Going back removes the carried-over tokens; their plaintext cannot be restored, so
the users need new ones (`manage.py reset_credentials`)."""

import hashlib

from django.db import migrations

MIGRATED_LABEL = "carried over from DRF authtoken"


def carry_over(apps, schema_editor):
    drf_token = apps.get_model("authtoken", "Token")
    api_token = apps.get_model("ralphsite", "ApiToken")
    for token in drf_token.objects.all():
        carried = api_token.objects.create(
            user_id=token.user_id, key_hash=hashlib.sha256(token.key.encode()).hexdigest(), prefix=token.key[:6],
            label=MIGRATED_LABEL, scope="global", permission="write")
        api_token.objects.filter(pk=carried.pk).update(created_at=token.created)  # past auto_now_add
    drf_token.objects.all().delete()


def remove_carried_over(apps, schema_editor):
    apps.get_model("ralphsite", "ApiToken").objects.filter(label=MIGRATED_LABEL).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("ralphsite", "0001_api_tokens"),
        ("authtoken", "0004_alter_tokenproxy_options"),
    ]

    operations = [migrations.RunPython(carry_over, remove_carried_over)]
