"""Each model's create, update and delete services, read by the API and the admin (`ralphsite.core.writes`)."""

from typing import Any

from ledger_app import services
from ledger_app.models import Checkpoint, CheckpointRestore, Issue
from ralphsite.core.writes import Writes


def _issue_create(*, data: dict[str, Any]) -> Issue:
    """The API's `issues/record/` for a create: the same ledger event, the same counting."""
    issue, _created = services.issue_record(
        session_id=data["session"].pk, task_key=data["task_key"], kind=data["kind"], signature=data["signature"],
        message=data["message"], file=data["file"], line=data["line"])
    return issue


def _checkpoint_restore_create(*, data: dict[str, Any]) -> CheckpointRestore:
    return services.checkpoint_restore(**data)


WRITES = {
    Issue: Writes(create=_issue_create),
    Checkpoint: Writes(create=services.checkpoint_create),
    CheckpointRestore: Writes(create=_checkpoint_restore_create),
}
