"""The migration that adds signal expiry (issue #27 §3) expires the signals sessions ended before it left unpolled,
and only those; it reverses and applies again (on the backend the suite runs on)."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from sessions_app.models import Signal

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("sessions_app", "0013_task_success_criteria_shape")
ENDED_AT = datetime(2026, 2, 10, 10, 0, tzinfo=UTC)


@pytest.mark.long
def test_it_expires_what_ended_sessions_left_unpolled_and_nothing_else() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps
    session, signal = old.get_model("sessions_app", "Session"), old.get_model("sessions_app", "Signal")
    ended = session.objects.create(key="ended", status="stopped", ended_at=ENDED_AT)
    running = session.objects.create(key="running")
    signal.objects.create(session=ended, type="stop", message="unpolled")
    signal.objects.create(session=ended, type="info", message="polled", is_processed=True, processed_at=ENDED_AT)
    signal.objects.create(session=running, type="pause", message="still waiting")

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    expired = {row.message: (row.expired_at, row.expired_reason) for row in Signal.objects.all()}
    assert expired == {"unpolled": (ENDED_AT, "session stopped"), "polled": (None, ""), "still waiting": (None, "")}
