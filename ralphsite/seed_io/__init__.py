"""Import (and export) each seed tool's own SQLite database: `manage.py import_seed KIND PATH`.

One module per KIND; `ralphsite.seed_io.base` is the framework they share."""

from ralphsite.seed_io.base import SeedImporter


def importer_class(kind: str) -> type[SeedImporter]:
    from ralphsite.seed_io.conversations import ConversationsImporter
    from ralphsite.seed_io.devteam import DevTeamImporter
    from ralphsite.seed_io.memory import MemoryImporter
    from ralphsite.seed_io.ralphy import RalphyImporter

    return {cls.kind: cls for cls in (ConversationsImporter, DevTeamImporter, MemoryImporter, RalphyImporter)}[kind]


KINDS = ("ralph", "ralphy", "conversations", "devteam", "memory")
