"""Import (and export) each seed tool's own SQLite database: `manage.py import_seed KIND PATH`.

One module per KIND; `ralphsite.moving.seed_io.base` is the framework they share."""

from pathlib import Path
from typing import TYPE_CHECKING

from ralphsite.moving.seed_io.base import SeedImporter

if TYPE_CHECKING:
    from ralphsite.moving.seed_io.export import SeedExporter


def importer_class(kind: str) -> type[SeedImporter]:
    from ralphsite.moving.seed_io.conversations import ConversationsImporter
    from ralphsite.moving.seed_io.devteam import DevTeamImporter
    from ralphsite.moving.seed_io.memory import MemoryImporter
    from ralphsite.moving.seed_io.ralph import RalphImporter
    from ralphsite.moving.seed_io.ralphy import RalphyImporter

    importers = (ConversationsImporter, DevTeamImporter, MemoryImporter, RalphImporter, RalphyImporter)
    return {cls.kind: cls for cls in importers}[kind]


KINDS = ("ralph", "ralphy", "conversations", "devteam", "memory")


def exporter(kind: str, path: Path, *, sessions: list[str] | None) -> "SeedExporter":
    """export_seed's writer for `kind`, with the tool's own date format."""
    from ralphsite.moving.seed_io.export import SeedExporter, epoch_date, iso_date, sqlite_date

    dates = {"devteam": sqlite_date, "ralph": sqlite_date, "ralphy": epoch_date}.get(kind, iso_date)
    return SeedExporter(importer_class(kind), path, dates=dates, sessions=sessions)
