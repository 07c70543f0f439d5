"""Row locks taken by the services never block foreign-key checks (PostgreSQL).

Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: a transaction that inserts a row
referencing a task takes FOR KEY SHARE on that task at COMMIT. A FOR UPDATE lock on the task blocks
it; under many agents that wait closed a deadlock cycle through the session row.
"""

import threading

import pytest
from django.db import connection, transaction

from sessions_app.models import Session, Task, TaskDependency
from sessions_app.services.base import lock_rows
from sessions_app.services.tasks import task_create

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL row locks (SQLite locks the database)"),
]


def test_a_task_locked_by_one_agent_can_be_depended_on_by_a_new_task_meanwhile() -> None:
    session = Session.objects.create()
    target = Task.objects.create(session=session, key="task-1", title="locked by an agent's report")
    locked, release = threading.Event(), threading.Event()

    def agent_holding_the_task() -> None:
        try:
            with transaction.atomic():
                list(lock_rows(Task.objects.filter(pk=target.pk)))
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=agent_holding_the_task)
    holder.start()
    try:
        assert locked.wait(10)
        with transaction.atomic():
            with connection.cursor() as cursor:  # fail fast instead of waiting for the holder
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            task_create(data={"session": session, "key": "task-2", "title": "planned meanwhile",
                              "depends_on": ["task-1"]})
    finally:
        release.set()
        holder.join()
    assert TaskDependency.objects.filter(task__key="task-2", depends_on=target).exists()
