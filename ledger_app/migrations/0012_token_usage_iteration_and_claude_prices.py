"""Each call's session iteration (Claude Code's hooks), and the dated default prices of current Claude models, so a
fresh install prices `claude-*` usage with no manual step (an operator edits or adds rows in the admin).

USD per million tokens, as Anthropic lists them (and as Claude Code 2.1's own cost table has them): input, output,
cache reads, cache writes (5-minute). A dated snapshot (`claude-sonnet-4-5-20250929`) is priced by its family's row.
"""

from datetime import UTC, datetime
from decimal import Decimal

from django.db import migrations, models

from ralphsite.core.db.money_storage import MICROS_PER_USD
from ralphsite.core.ulid import ulid_new

PRICES_FROM = datetime(2024, 1, 1, tzinfo=UTC)
# model: (input, output, cache read, cache write)
CLAUDE_PRICES = {
    "claude-opus-4-7": ("5", "25", "0.50", "6.25"),
    "claude-opus-4-6": ("5", "25", "0.50", "6.25"),
    "claude-opus-4-5": ("5", "25", "0.50", "6.25"),
    "claude-opus-4-1": ("15", "75", "1.50", "18.75"),
    "claude-opus-4": ("15", "75", "1.50", "18.75"),
    "claude-sonnet-4-6": ("3", "15", "0.30", "3.75"),
    "claude-sonnet-4-5": ("3", "15", "0.30", "3.75"),
    "claude-sonnet-4": ("3", "15", "0.30", "3.75"),
    "claude-3-7-sonnet": ("3", "15", "0.30", "3.75"),
    "claude-haiku-4-5": ("1", "5", "0.10", "1.25"),
    "claude-3-5-haiku": ("0.80", "4", "0.08", "1"),
}


def prices_add(apps, schema_editor):
    ModelPrice = apps.get_model("ledger_app", "ModelPrice")
    # The historical model's money fields are plain decimals; SQLite's columns hold whole micro-dollars.
    scale = MICROS_PER_USD if schema_editor.connection.vendor == "sqlite" else 1
    for model, prices in CLAUDE_PRICES.items():
        if ModelPrice.objects.filter(model=model, valid_from=PRICES_FROM).exists():
            continue  # an operator's row for that date stays
        input_price, output_price, read_price, write_price = (Decimal(price) * scale for price in prices)
        ModelPrice.objects.create(
            id=ulid_new(), model=model, valid_from=PRICES_FROM, input_per_mtok=input_price,
            output_per_mtok=output_price, cached_read_per_mtok=read_price, cached_write_per_mtok=write_price)


def prices_remove(apps, schema_editor):
    apps.get_model("ledger_app", "ModelPrice").objects.filter(model__in=CLAUDE_PRICES, valid_from=PRICES_FROM).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('ledger_app', '0011_event_json_shapes'),
    ]

    operations = [
        migrations.AddField(
            model_name='tokenusage',
            name='iteration',
            field=models.PositiveIntegerField(blank=True, editable=False, help_text="The session's iteration the call was made in, when known.", null=True),
        ),
        migrations.AddIndex(
            model_name='tokenusage',
            index=models.Index(fields=['iteration'], name='tokenusage_iteration'),
        ),
        migrations.RunPython(prices_add, prices_remove),
    ]
