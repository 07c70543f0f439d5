"""Each model's create, update and delete services, read by the API and the admin (`ralphsite.core.writes`)."""

from typing import Any

from conversations_app import services
from conversations_app.models import Chat, Message, Observation, Run
from ralphsite.core.writes import Writes


def _message_create(*, data: dict[str, Any], reopen: bool = False) -> Message:
    """One message appended to the run its body names (a body field: an unknown run is a 400)."""
    data = dict(data)
    run_id = data.pop("run_id")
    return services.message_append(run_id=run_id, items=[data], reopen=reopen, missing_run="foreign_key")[0]


WRITES = {
    # A deleted chat is a tombstone (restorable); its runs and messages stay until retention.
    Chat: Writes(create=services.chat_create, update=services.chat_update, delete=services.chat_soft_delete),
    Run: Writes(create=services.run_create, update=services.run_update),
    Message: Writes(create=_message_create, update=services.message_update),
    Observation: Writes(create=services.observation_create, update=services.observation_update),
}
